"""Which Python installation a sandboxed command needs, and the few folders of it the box may see.

bubblewrap shows a command only /usr, a short /etc list and the workspace. A command that runs
Python by name (`python3 x.py`), the project's test runner (`python3 -m pytest`) or the
workspace's `.venv` needs an interpreter that may live elsewhere (pyenv, a venv, uv). What is
bound read-only, and nothing more:

- an installation's `bin/` and `lib/` (and a real `lib64/`), and for a venv also its
  `pyvenv.cfg` — never the installation's whole folder, never a home folder, never `/`,
  `/etc`, `/var`, … (a prefix such as `~/.cargo` or `~/.local` would expose credentials next
  to it);
- a prefix counts as an installation only when its landmark `lib/python3.N/os.py` is there
  (how CPython finds its own prefix), a venv only with a regular `pyvenv.cfg` whose `home`
  leads to such an installation;
- which interpreter: the workspace `.venv`'s base (from its `pyvenv.cfg`, which a cloned
  repository controls: hence the landmark), and the one a command runs — an absolute
  program (the test runner's, chosen by Duckflow) or `python3` by name, found on the
  person's PATH skipping relative entries and entries inside the workspace. That interpreter
  is asked where it lives (`-I -S`, from `/`, no workspace file read — so a project's
  `.python-version` does not steer which program runs outside the box); a program inside the
  workspace is never run outside the box. pyenv's shims are resolved this way: the box gets
  the interpreter itself first on PATH, not the shim (which would need all of `~/.pyenv`).
"""

from __future__ import annotations

import functools
import glob
import os
import pwd
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

PYTHON_NAME = re.compile(r"python(?:3(?:\.\d{1,2})?)?$")
# a shell command that runs Python: `python3 …`, also after `cd x &&`, or a script of its bin/
_SHELL_PYTHON = re.compile(r"(?:^|[\s;&|(])(python3?(?:\.\d{1,2})?|pytest|py\.test|pip3?)(?=[\s;&|)]|$)")
NEVER = frozenset({"/", "/root", "/home", "/tmp", "/var", "/etc", "/run", "/proc", "/sys",
                   "/dev", "/usr", "/opt", "/mnt", "/media", "/srv", "/boot", "/lib", "/bin"})
_PROBE = "import sys; print(sys.executable); print(sys.base_prefix)"


@dataclass(frozen=True)
class Interpreter:
    """The interpreter a command runs: its path as the box runs it, and what to bind for it."""

    executable: str
    binds: tuple[str, ...]


def _inside(path: str, root: Path) -> bool:
    real = os.path.realpath(path)
    return real == str(root) or real.startswith(str(root) + os.sep)


@functools.cache
def _homes() -> frozenset[str]:
    homes = {os.path.realpath(os.path.expanduser("~"))}
    try:
        homes |= {os.path.realpath(p.pw_dir) for p in pwd.getpwall() if p.pw_dir}
    except OSError:
        pass
    return frozenset(homes)


def is_installation(prefix: str) -> bool:
    """True when `prefix` holds a Python installation (its landmark `lib/python3.N/os.py`)."""
    return any(os.path.isfile(p) and not os.path.islink(os.path.dirname(os.path.dirname(p)))
               for p in glob.glob(os.path.join(glob.escape(prefix), "lib*", "python3*", "os.py")))


def is_venv(prefix: str) -> bool:
    cfg = os.path.join(prefix, "pyvenv.cfg")
    return os.path.isfile(cfg) and not os.path.islink(cfg)


def _bindable(prefix: str, root: Path) -> bool:
    """A prefix whose parts may be shown: not a system or home folder, not (in) the workspace."""
    real = os.path.realpath(prefix)
    if real in NEVER or real in _homes() or real.startswith("/usr/") or not os.path.isdir(real):
        return False
    return not (_inside(real, root) or str(root).startswith(real + os.sep))


def prefix_binds(prefix: str, root: Path) -> list[str]:
    """The read-only binds of one installation or venv: bin/, lib/ (a real lib64/), pyvenv.cfg."""
    real = os.path.realpath(prefix)
    if not _bindable(real, root):
        return []
    out = [os.path.join(real, d) for d in ("bin", "lib", "lib64")
           if os.path.isdir(os.path.join(real, d)) and not os.path.islink(os.path.join(real, d))]
    if is_venv(real):
        out.append(os.path.join(real, "pyvenv.cfg"))
    return out


def venv_base(venv: str) -> str | None:
    """The installation a venv was made from (`home` in its pyvenv.cfg), if it is one."""
    try:
        with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8", errors="replace") as fh:
            lines = fh.read(8192).splitlines()[:50]
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            base = os.path.dirname(os.path.realpath(value.strip()))
            return base if is_installation(base) else None
    return None


def workspace_venv_binds(root: Path) -> list[str]:
    """Binds for the workspace `.venv`'s base installation (the venv itself is in the workspace)."""
    venv = root / ".venv"
    if not is_venv(str(venv)):
        return []
    base = venv_base(str(venv))
    return prefix_binds(base, root) if base else []


def on_path(name: str, root: Path, path_env: str) -> str | None:
    """`name` on PATH, skipping relative entries and entries inside the workspace."""
    for entry in path_env.split(os.pathsep):
        if not entry or not os.path.isabs(entry) or _inside(entry, root):
            continue
        cand = os.path.join(entry, name)
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return None


@functools.lru_cache(maxsize=32)
def _probe(exe: str, stamp: tuple[int, int]) -> tuple[str, str] | None:
    """(sys.executable, sys.base_prefix) of the interpreter `exe`, asked outside the box."""
    try:
        proc = subprocess.run([exe, "-I", "-S", "-c", _PROBE], cwd="/", stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=15, text=True, errors="replace")
    except (OSError, subprocess.SubprocessError):
        return None
    lines = proc.stdout.splitlines()
    if proc.returncode != 0 or len(lines) != 2 or not all(os.path.isabs(x) for x in lines):
        return None
    return lines[0], lines[1]


def _resolve(exe: str, root: Path) -> Interpreter | None:
    if _inside(exe, root):
        return None  # never run a workspace program outside the box
    try:
        st = os.stat(exe)
    except OSError:
        return None
    found = _probe(exe, (st.st_mtime_ns, st.st_ino))
    if found is None:
        return None
    executable, base = found
    binds: list[str] = []
    venv = os.path.dirname(os.path.dirname(executable))
    if is_venv(venv):
        binds += prefix_binds(venv, root)
        base = venv_base(venv) or ""
    if base and is_installation(base):
        binds += prefix_binds(base, root)

    def visible(path: str) -> bool:
        return path.startswith("/usr/") or any(path.startswith(b + os.sep) for b in binds)

    if not visible(executable):  # a link from an unbound folder (a Homebrew bin/): its target
        executable = os.path.realpath(executable)
    if not (visible(executable) and visible(os.path.realpath(executable))):
        return None  # the box could not run it: leave PATH and the command as they are
    return Interpreter(executable, tuple(dict.fromkeys(binds)))


def interpreter_for(root: Path, argv: list[str], path_env: str) -> Interpreter | None:
    """The Python a command runs outside /usr, when it runs one: an absolute python program
    (the test runner's argv), or for `sh -c "… python3 …"` (also `pytest`, `pip`) the
    `python3` of that name on the person's PATH."""
    if argv and os.path.isabs(argv[0]) and PYTHON_NAME.match(os.path.basename(argv[0])):
        return _resolve(argv[0], root)
    if len(argv) == 3 and argv[1] == "-c" and argv[0].endswith("sh"):
        m = _SHELL_PYTHON.search(argv[2])
        name = m.group(1) if m else ""
        exe = on_path(name if name.startswith("python") else "python3", root, path_env) if m else None
        return _resolve(exe, root) if exe else None
    return None
