"""Which box an auto-approved command that runs code gets here: bubblewrap, Landlock, Seatbelt, or none.

Code-running needs a box. An auto-approved script, test run or build runs only inside one the
kernel enforces; without one it waits for a person (gate/allowlist.py). The backends, in the
order `workspace.sandbox = "auto"` tries them:

- "bwrap": bubblewrap in new namespaces (no network namespace, the host read-only, a throwaway
  HOME) on a copy-on-write overlay of the workspace (staging.py): writes land outside the
  workspace and only what the approval covers is applied afterwards. Needs user namespaces.
- "landlock": Linux Landlock (ABI 4+, kernel 6.7+) where user namespaces are off: the command may
  write only a throwaway HOME and TMPDIR, and may not connect or bind TCP (landlock.py).
- "seatbelt": macOS `sandbox-exec` with a generated profile: writes only to the bound paths,
  no network (seatbelt.py).
`workspace.sandbox = "none"` is no box: code-running then always asks a person.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path

NAMES = {"bwrap": "bubblewrap (copy-on-write workspace, no network)",
         "landlock": "Landlock (writes only to a throwaway folder, no TCP)",
         "seatbelt": "Seatbelt sandbox-exec (writes only to bound paths, no network)"}


@functools.cache
def _bwrap() -> bool:
    from duckflow.workspace.sandbox import bwrap_usable
    from duckflow.workspace.staging import overlay_usable

    return bwrap_usable() and overlay_usable()


@functools.cache
def _landlock() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    from duckflow.workspace.landlock import usable

    return usable()


@functools.cache
def _seatbelt() -> bool:
    return sys.platform == "darwin" and shutil.which("sandbox-exec") is not None


def backend(setting: str = "auto") -> str | None:
    """The box in use for `workspace.sandbox = setting`, or None (no box: nothing that runs code
    is auto-approved)."""
    if setting == "none":
        return None
    if setting == "bwrap":
        return "bwrap" if _bwrap() else None
    if setting == "landlock":
        return "landlock" if _landlock() else None
    if setting == "seatbelt":
        return "seatbelt" if _seatbelt() else None
    for name, ok in (("bwrap", _bwrap), ("landlock", _landlock), ("seatbelt", _seatbelt)):
        if ok():
            return name
    return None


def how_to_get_one() -> str:
    """The next step toward a box on this machine."""
    if sys.platform == "darwin":
        return 'set workspace.sandbox = "auto" (macOS sandbox-exec)'
    return ('install bubblewrap (apt-get install bubblewrap) with user namespaces on, and set '
            'workspace.sandbox = "auto"')


def describe(setting: str = "auto") -> str:
    """One line for `duckflow status` and `duckflow config show`."""
    name = backend(setting)
    if name is not None:
        return f"{name}: {NAMES[name]}"
    why = 'workspace.sandbox = "none"' if setting == "none" else "none usable on this machine"
    return f"none ({why}): scripts, tests and builds ask you; to get one, {how_to_get_one()}"


def landlock_or_seatbelt_argv(box: str, root: Path, argv: list[str], staging: str,
                              env: dict[str, str], ro_paths: tuple[str, ...] = ()) -> list[str]:
    """`argv` confined by Landlock or Seatbelt for one auto-approved run: writes only to the
    throwaway HOME, TMPDIR (the staging folder) and bytecode cache, and to the workspace files
    the approval covers (listed in `staging/covered`); `env` gets TMPDIR and the cache."""
    from duckflow.workspace.interpreters import interpreter_for, workspace_venv_binds
    from duckflow.workspace.sandbox import pycache_dir

    root = Path(os.path.realpath(root))
    cache = str(pycache_dir(root))
    env.update({"TMPDIR": staging, "PYTHONPYCACHEPREFIX": cache})
    try:
        names = Path(staging, "covered").read_text("utf-8").splitlines()
    except OSError:
        names = []
    files = [str(root / n) for n in names if n and not n.startswith("/") and ".." not in n.split("/")]
    write = [env.get("HOME", ""), staging, cache]
    if box == "seatbelt":
        from duckflow.workspace import seatbelt

        return seatbelt.argv(argv, [w for w in write if w], files)
    interp = interpreter_for(root, argv, env.get("PATH", ""))
    read = [*ro_paths, *workspace_venv_binds(root), *(interp.binds if interp else ())]
    if interp is not None:
        env["PATH"] = f"{os.path.dirname(interp.executable)}{os.pathsep}{env.get('PATH', '')}"
    from duckflow.workspace import landlock

    helper = Path(landlock.__file__)
    spec = landlock.spec(str(root), write=[w for w in write if w], files=files, read=read)
    return [sys.executable, "-I", "-S", str(helper), spec, "--", *argv]
