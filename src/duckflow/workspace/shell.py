"""Running commands in the workspace: execute_shell and run_tests, bounded and sandboxed when possible.

A command runs with the workspace as its working directory, no stdin, an allow-listed
environment, a hard deadline after which everything it started is killed, and output capped as
head + tail. When bubblewrap (`bwrap`) works on the machine, it runs inside it with no network,
no capabilities and only the workspace writable (`.git/` and `.duckflow/` stay read-only).
The containment itself lives in sandbox.py and reaper.py.
A short list of obviously destructive commands is flagged as needing approval: advice for the
gate, not a security boundary (a shell has endless ways to say the same thing).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import re
import shutil
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from duckflow._lazyre import LazyPattern
from duckflow.errors import DuckflowError
from duckflow.workspace.gitsafe import neutral_git, only_read_git
from duckflow.workspace.sandbox import (
    bwrap_argv,
    bwrap_usable,
    run_supervised,
    sandbox_env,
    temporary_home,
)

__all__ = ["CommandResult", "HeadTail", "bwrap_argv", "bwrap_usable", "destructive_reason",
           "detect_test_command", "execute_shell", "run_command", "run_tests", "scrubbed_env"]

Mode = Literal["bwrap", "landlock", "seatbelt", "plain"]

# (pattern, why). Matched against the command with runs of whitespace collapsed.
# compiled when a command is first checked (a run that runs no command never needs them)
_DESTRUCTIVE: tuple[tuple[LazyPattern, str], ...] = tuple(
    (LazyPattern(p, re.IGNORECASE), why) for p, why in (
        (r"\brm\s+(-[^\s]*\s+)*(--no-preserve-root\s+)?(-[^\s]*\s+)*(/|/\*|~/?|\$HOME/?|\*|\.|\.\./?)(\s|;|&|\||$)",
         "rm on the root, the home folder, the whole workspace or a wildcard"),
        (r"--no-preserve-root", "rm --no-preserve-root"),
        (r"\bmkfs(\.\w+)?\b", "mkfs formats a filesystem"),
        (r"\bdd\b[^;|&]*\bof=/dev/", "dd writing to a device"),
        (r">\s*/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk)", "redirecting output onto a disk device"),
        (r"(\w+|:)\s*\(\s*\)\s*\{[^}]*\1\s*\|\s*\1\s*&", "a fork bomb"),
        (r"\bchmod\s+(-[^\s]*\s+)*(0?777|a\+rwx|ugo\+rwx)\s+(-[^\s]*\s+)*/(\s|$)",
         "chmod 777 on the root"),
        (r"\bch(mod|own|grp)\s+(-[^\s]*\s+)*-[a-z]*R[a-z]*\s+\S+\s+/(\s|$)",
         "recursive chmod/chown on the root"),
        (r"\b(curl|wget|fetch)\b[^|;&]*\|\s*(sudo\s+)?(env\s+)?(ba|z|k|da|fi)?sh\b",
         "piping a download into a shell"),
        (r"\b(curl|wget)\b[^|;&]*\|\s*(sudo\s+)?(python[0-9.]*|perl|ruby|node)\b",
         "piping a download into an interpreter"),
        (r"\b(ba|z)?sh\s+(-c\s+)?[\"']?\$\(\s*(curl|wget)\b", "running a downloaded script"),
        (r"\b(ba|z)?sh\s+<\(\s*(curl|wget)\b", "running a downloaded script"),
        (r"\bgit\s+push\b[^;&|]*(\s--force\b|\s-f\b|\s--force-with-lease\b|\s\+[^\s]+)",
         "git push --force rewrites shared history"),
        (r"\bgit\s+push\b[^;&|]*\s--(delete|mirror)\b", "git push deleting or mirroring refs"),
        (r"\bgit\s+reset\s+--hard\b", "git reset --hard throws away uncommitted work"),
        (r"\bgit\s+clean\s+(-[^\s]*)?f", "git clean -f deletes untracked files"),
        (r"\b(shutdown|reboot|halt|poweroff)\b", "shutting the machine down"),
        (r"\bkill\s+(-\w+\s+)*-1\b|\bkillall\b|\bpkill\b", "killing many processes"),
        (r"\bfind\s+/\s[^;|&]*(-delete|-exec\s+rm)", "deleting files across the whole disk"),
        (r"\bsudo\b|\bsu\s+-|\bdoas\b", "running as another user (root)"),
        (r"\bcrontab\s+-r\b", "deleting the crontab"),
        (r">\s*/etc/|\btee\s+(-a\s+)?/etc/", "overwriting system configuration"),
        (r"\bmv\s+[^;|&]*\s/dev/null\b", "moving files to /dev/null"),
    )
)


def destructive_reason(command: str) -> str | None:
    """Why `command` looks obviously destructive, or None. Advice for the gate, not a boundary."""
    flat = " ".join(command.split())
    for pattern, why in _DESTRUCTIVE:
        if pattern.search(flat):
            return why
    return None


def scrubbed_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a command gets (allow-listed names, no secret-looking values)."""
    return sandbox_env(environ)


class HeadTail:
    """Keeps the first and the last `limit // 2` bytes of a stream and counts what was cut."""

    def __init__(self, limit: int) -> None:
        self.half = max(1, limit // 2)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        cut = self.total - len(self.head) - len(self.tail)
        head = bytes(self.head).decode("utf-8", "replace")
        tail = bytes(self.tail).decode("utf-8", "replace")
        if cut <= 0:
            return head + tail
        return f"{head}\n[... {cut} bytes cut from the middle; {self.total} bytes in all ...]\n{tail}"


@dataclass
class CommandResult:
    """What a command did. `mode` says whether bubblewrap ("bwrap") or nothing ("plain") ran it."""

    command: str
    ran: bool
    exit_code: int | None
    timed_out: bool
    mode: Mode
    stdout: str
    stderr: str
    duration_ms: int
    timeout_s: float
    needs_approval: bool = False
    advice: str | None = None
    note: str | None = None
    killed: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def run_command(root: Path, command: str | list[str], *, timeout: float, limit: int,
                      sandbox: str = "auto", env: dict[str, str] | None = None,
                      env_allow: Iterable[str] = (), ro_paths: Iterable[str] = (),
                      readonly: Iterable[str] = (), staging: str = "") -> CommandResult:
    """Run `command` (a shell string, or an argv list) in `root` and return what it did
    (`readonly`: workspace files bound read-only in bubblewrap mode; `staging`: a staging
    folder (staging.py): the command runs boxed on an overlay whose writes land there)."""
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    shown = command if isinstance(command, str) else " ".join(command)
    if sandbox == "bwrap" and not bwrap_usable():
        raise DuckflowError("workspace.sandbox = \"bwrap\" but bubblewrap cannot run here",
                            hint="install bubblewrap (apt-get install bubblewrap) or set "
                            "workspace.sandbox = \"auto\"")
    mode: Mode = "bwrap" if sandbox != "none" and bwrap_usable() else "plain"
    box = None
    if staging:  # an auto-approved run: in the box, or not at all (fail closed)
        from duckflow.workspace.box import backend, how_to_get_one

        box = backend(sandbox)
        if box is None:
            raise DuckflowError(f"`{shown}` was to run in a box, and no box can run here",
                                hint=how_to_get_one())
        mode = box  # type: ignore[assignment]
    state_dir = root / ".duckflow"
    made_state_dir = mode == "bwrap" and not os.path.lexists(state_dir)
    out, err = HeadTail(limit), HeadTail(limit)
    started = time.monotonic()
    home = temporary_home()
    try:
        env_out = sandbox_env(env, extra_allow=env_allow, home=home)
        if box in ("landlock", "seatbelt"):
            from duckflow.workspace.box import landlock_or_seatbelt_argv

            argv = landlock_or_seatbelt_argv(box, root, argv, staging, env_out, tuple(ro_paths))
        elif mode == "bwrap":  # binds .duckflow read-only (made if missing)
            merged = Path(staging) / "merged" if staging else None
            argv = bwrap_argv(root, argv, ro_paths=ro_paths, path_env=env_out.get("PATH", ""),
                              readonly=readonly, merged=merged)
            if staging:
                from duckflow.workspace.staging import wrap_overlay

                argv = wrap_overlay(Path(os.path.realpath(root)), Path(staging), argv)
        outcome = await asyncio.to_thread(run_supervised, root, argv, timeout, env_out, (out, err))
    except OSError as exc:
        raise DuckflowError(f"could not start `{shown}`: {exc.strerror}",
                            hint="check that the program is installed") from None
    finally:
        shutil.rmtree(home, ignore_errors=True)
        if made_state_dir:  # only the empty mount point we made for the read-only bind
            with contextlib.suppress(OSError):
                state_dir.rmdir()
    if outcome.error:
        raise DuckflowError(f"could not start `{shown}`: {outcome.error}",
                            hint="check that the program is installed")
    notes = []
    if outcome.timed_out:
        notes.append(f"killed after {timeout:g} s (the hard deadline for the whole call)")
    if outcome.killed:
        names = ", ".join(f"{k.get('cmd')} (pid {k.get('pid')})" for k in outcome.killed[:5])
        more = f" and {len(outcome.killed) - 5} more" if len(outcome.killed) > 5 else ""
        notes.append(f"killed {len(outcome.killed)} process(es) the command left running: "
                     f"{names}{more}")
    return CommandResult(
        command=shown, ran=True, exit_code=outcome.exit_code, timed_out=outcome.timed_out,
        mode=mode, stdout=out.text(), stderr=err.text(),
        duration_ms=int((time.monotonic() - started) * 1000), timeout_s=timeout,
        note="; ".join(notes) or None, killed=outcome.killed,
    )


def detect_test_command(root: Path) -> list[str] | None:
    """The test runner a project uses: pytest, npm, cargo, go or make (in that order)."""
    if any((root / f).exists() for f in ("pytest.ini", "conftest.py", "tox.ini", "tests",
                                          "test", "pyproject.toml", "setup.cfg")):
        venv = root / ".venv" / "bin" / "python"
        python = str(venv) if venv.exists() else (shutil.which("python3") or sys.executable)
        return [python, "-m", "pytest", "-q"]
    pkg = root / "package.json"
    if pkg.exists():
        try:
            import json

            scripts = json.loads(pkg.read_text("utf-8")).get("scripts", {})
        except (OSError, ValueError, AttributeError):
            scripts = {}
        if isinstance(scripts, dict) and "test" in scripts:
            return ["npm", "test", "--silent"]
    if (root / "Cargo.toml").exists():
        return ["cargo", "test"]
    if (root / "go.mod").exists():
        return ["go", "test", "./..."]
    makefile = root / "Makefile"
    if makefile.exists() and re.search(r"^test\s*:", makefile.read_text("utf-8", "replace"), re.M):
        return ["make", "test"]
    return None


def clamp_timeout(timeout: float | None, default: float, maximum: float) -> tuple[float, str | None]:
    """The timeout to use (default when None, at most `maximum`) and a note when it was cut."""
    if timeout is None or not math.isfinite(timeout) or timeout <= 0:
        return default, None
    if timeout > maximum:
        return maximum, f"timeout {timeout:g} s is over the limit; {maximum:g} s used"
    return float(timeout), None


def _git_names(env: dict[str, str]) -> list[str]:
    return [k for k in env if k.startswith("GIT_")]


def _sandbox_options(config: Any) -> dict[str, Any]:
    return {"env_allow": getattr(config, "shell_env_allow", ()),
            "ro_paths": getattr(config, "sandbox_ro_paths", ())}


async def execute_shell(root: Path, config: Any, command: str, timeout: float | None = None,
                        *, approved: bool = False, readonly: Iterable[str] = (),
                        staging: str = "") -> CommandResult:
    """Run a shell command in the workspace (see the module docstring for the bounds)."""
    if not command.strip():
        raise DuckflowError("the command is empty", hint="pass the command to run")
    limit_s, note = clamp_timeout(timeout, config.shell_timeout_s, config.shell_max_timeout_s)
    why = destructive_reason(command)
    if why is not None and not approved:
        return CommandResult(command=command, ran=False, exit_code=None, timed_out=False,
                             mode="plain", stdout="", stderr="", duration_ms=0,
                             timeout_s=limit_s, needs_approval=True, advice=why,
                             note="not run: this command needs a person's approval")
    options = _sandbox_options(config)
    shim_dir = None
    if only_read_git(command):  # the repository's own settings run no program (gitsafe.py)
        env, shim_dir = neutral_git(root, dict(os.environ))
        options = {"env": env, "env_allow": (*options["env_allow"], *_git_names(env)),
                   "ro_paths": (*options["ro_paths"], shim_dir)}
    try:
        result = await run_command(root, command, timeout=limit_s, limit=config.shell_output_limit,
                                   sandbox=config.sandbox, readonly=readonly, staging=staging,
                                   **options)
    finally:
        if shim_dir:
            shutil.rmtree(shim_dir, ignore_errors=True)
    result.advice = why
    if note:
        result.note = f"{note}; {result.note}" if result.note else note
    return result


async def run_tests(root: Path, config: Any, command: str | None = None,
                    timeout: float | None = None, *, approved: bool = False,
                    readonly: Iterable[str] = (), staging: str = "") -> CommandResult:
    """Run the project's tests: the given command, or the runner detected in the workspace."""
    if command:
        return await execute_shell(root, config, command, timeout, approved=approved,
                                   readonly=readonly, staging=staging)
    argv = detect_test_command(root)
    if argv is None:
        raise DuckflowError("no test runner found in the workspace (pytest, npm, cargo, go, make)",
                            hint="pass the command, e.g. run_tests(command=\"pytest -q\")")
    limit_s, note = clamp_timeout(timeout, config.shell_timeout_s, config.shell_max_timeout_s)
    result = await run_command(root, argv, timeout=limit_s, limit=config.shell_output_limit,
                               sandbox=config.sandbox, readonly=readonly, staging=staging,
                               **_sandbox_options(config))
    if note:
        result.note = f"{note}; {result.note}" if result.note else note
    return result
