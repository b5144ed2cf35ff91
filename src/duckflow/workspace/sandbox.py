"""How a shell command is contained: its environment, the bubblewrap box and the hard deadline.

- Environment: an allow-list (PATH, LANG/LC_*, TERM, TZ, a few build variables, plus the names
  in `workspace.shell_env_allow`), HOME set to a fresh temporary folder, and any variable whose
  value the sanitizer flags as a secret dropped even when its name is allowed.
- bubblewrap: every namespace bwrap offers (user, pid, uts, ipc, net, cgroup), all capabilities
  dropped, an unprivileged uid when Duckflow runs as root, a new session, read-only binds of only
  what a build needs (/usr, the /bin and /lib links, a short list from /etc, and the bin/ and
  lib/ of the Python installation a command runs — never its whole folder nor a home folder,
  see interpreters.py), private /tmp, /dev and /proc, no /run (no host sockets), the workspace
  writable but its `.duckflow/` (and `.git/` when present) read-only.
- Deadline: the command runs under `reaper.py`, a subreaper that kills every process the call
  started when the command exits or the timeout passes; Duckflow stops reading the pipes at the
  deadline (plus a short grace) whatever happens.
"""

from __future__ import annotations

import functools
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENV_ALLOW = frozenset({
    "PATH", "LANG", "LANGUAGE", "TERM", "TZ", "COLUMNS", "LINES", "NO_COLOR", "USER", "LOGNAME",
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "MAKEFLAGS", "PKG_CONFIG_PATH",
    "JAVA_HOME", "GOPATH", "GOFLAGS", "GOCACHE", "CARGO_HOME", "RUSTUP_HOME", "RUSTFLAGS",
    "VIRTUAL_ENV", "NODE_ENV", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "SOURCE_DATE_EPOCH",
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "PAGER",
    "GIT_PAGER",
})
_SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASS|_PW$|^PW_|CREDENTIAL|AUTH|PRIVATE|COOKIE|SESSION|SIGNATURE|JWT|"
    r"_PAT$|DSN$|DATABASE_URL|_URI$|WEBHOOK|BEARER",
    re.IGNORECASE,
)
# /etc entries a build commonly reads (users, libraries, time zone, TLS roots, tool defaults)
# Not /etc/ssl/private, npmrc or pip.conf (they can hold keys and tokens): inside the box the
# sandbox uid owns what root owns outside, so a 0600 file there would be readable.
ETC_ALLOW = ("passwd", "group", "nsswitch.conf", "hosts", "host.conf", "ld.so.cache",
             "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "alternatives", "ssl/certs",
             "ca-certificates", "ca-certificates.conf", "os-release", "debian_version",
             "locale.alias", "mime.types", "gitconfig", "inputrc",
             "python3", f"python3.{sys.version_info.minor}", "perl", "java-17-openjdk")
SYSTEM_RO = ("/usr",)
NOBODY = 65534
# in a boxed run (staging overlay) these stay the real, read-only folders
PROTECTED_BINDS = (".git", ".venv", "venv", "node_modules")
GRACE_S = 3.0  # after the deadline: time for the supervisor to kill and report


def _flagged(value: str) -> bool:
    from duckflow.security.sanitizer import default_sanitizer

    return bool(value) and bool(default_sanitizer().scan(value))


def sandbox_env(environ: dict[str, str] | None = None, *, extra_allow: Iterable[str] = (),
                home: str | None = None) -> dict[str, str]:
    """The environment a command gets: allow-listed names only, no value that looks secret.

    HOME is `home` when given (a fresh folder per call), else the caller's HOME is kept."""
    env = dict(os.environ if environ is None else environ)
    extra = frozenset(extra_allow)
    out: dict[str, str] = {}
    for name, value in env.items():
        allowed = name in ENV_ALLOW or name in extra or (name == "HOME" and home is None) or (
            name.startswith("LC_") and not _SECRET_NAME.search(name))
        if not allowed:
            continue
        if _flagged(value):
            continue
        out[name] = value
    out.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    if home is not None:
        out["HOME"] = home
    return out


@functools.cache
def bwrap_usable() -> bool:
    """True when bubblewrap is installed and can create the full sandbox on this machine."""
    exe = shutil.which("bwrap")
    if exe is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        argv = bwrap_argv(Path(tmp), ["/bin/true"])
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return False
    return proc.returncode == 0


def pycache_dir(root: Path) -> Path:
    """Where a boxed command's Python bytecode goes: per workspace, outside it, kept between
    runs (a warm cache), never read by a command run outside the box."""
    import hashlib

    from duckflow.paths import duckflow_home

    key = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    path = duckflow_home() / "pycache" / key
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def _protected(root: Path) -> list[Path]:
    """Folders inside the workspace the command may read but not change (created if missing)."""
    out = []
    for name in (".duckflow", ".git"):
        p = root / name
        if not os.path.lexists(p) and name == ".duckflow":
            p.mkdir(mode=0o700)
        real = Path(os.path.realpath(p))
        if os.path.lexists(p) and (real == root or root in real.parents) and real.exists():
            out.append(real)  # a link to a place outside the workspace is simply not visible
    return out


def bwrap_argv(root: Path, argv: list[str], *, ro_paths: Iterable[str] = (),
               path_env: str | None = None, readonly: Iterable[str] = (),
               merged: Path | None = None) -> list[str]:
    """Wrap `argv` in bubblewrap (see the module docstring for what the box allows).

    `readonly`: workspace-relative files bound read-only over the writable workspace (what an
    auto-approved command may not change: the kernel refuses the write, delete or rename).
    `merged`: the staging overlay of the workspace (staging.py) shown at the workspace's path
    instead of the workspace itself, with the folders that must never change (PROTECTED_BINDS)
    bound read-only from the real workspace and Python's bytecode sent to a cache outside it.
    `path_env` is the PATH the command gets (the caller's when None): `python3` by name is
    looked up on it, outside the box, to bind that interpreter (interpreters.py)."""
    from duckflow.workspace.interpreters import PYTHON_NAME, interpreter_for, workspace_venv_binds

    root = Path(os.path.realpath(root))
    path_env = os.environ.get("PATH", "") if path_env is None else path_env
    interp = interpreter_for(root, argv, path_env)
    binds = [*workspace_venv_binds(root), *(interp.binds if interp else ())]
    setenv: list[str] = []
    if interp is not None and PYTHON_NAME.match(os.path.basename(argv[0])):
        argv = [interp.executable, *argv[1:]]  # the interpreter itself (a pyenv shim needs ~/.pyenv)
    elif interp is not None:
        setenv = ["--setenv", "PATH", f"{os.path.dirname(interp.executable)}{os.pathsep}{path_env}"]
    out = ["bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
           "--new-session", "--die-with-parent", "--hostname", "duckflow-sandbox"]
    if os.geteuid() == 0:
        out += ["--uid", str(NOBODY), "--gid", str(NOBODY)]
    for ro in (*SYSTEM_RO, *ro_paths, *binds):
        if os.path.isdir(ro) or os.path.isfile(ro):
            out += ["--ro-bind", ro, ro]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        p = f"/{name}"
        if os.path.islink(p):
            out += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            out += ["--ro-bind", p, p]
    for name in ETC_ALLOW:
        p = f"/etc/{name}"
        if os.path.exists(p):
            out += ["--ro-bind", p, p]
    out += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--dir", "/tmp/home",
            "--bind", str(merged or root), str(root)]
    if merged is not None:
        for name in PROTECTED_BINDS:
            keep = root / name
            if os.path.isdir(keep) and not os.path.islink(keep):
                out += ["--ro-bind", str(keep), str(keep)]
        cache = pycache_dir(root)
        out += ["--bind", str(cache), str(cache), "--setenv", "PYTHONPYCACHEPREFIX", str(cache)]
    for rel in readonly:
        file = root / rel
        if os.path.isfile(file) and not os.path.islink(file):
            out += ["--ro-bind", str(file), str(file)]
    for prot in _protected(root):
        out += ["--ro-bind", str(prot), str(prot)]
    out += ["--setenv", "HOME", "/tmp/home", *setenv, "--chdir", str(root), "--"]
    return out + argv


@dataclass
class Outcome:
    """What the supervised run did: exit code, deadline hit, processes killed at the end."""

    exit_code: int | None
    timed_out: bool
    killed: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None


MARKER = "DUCKFLOW_CALL"


def kill_marked(marker: str) -> list[dict[str, Any]]:
    """SIGKILL every process whose environment carries `marker` (the fallback when the command
    killed its supervisor: what it started was re-parented away from it)."""
    needle = f"{MARKER}={marker}".encode()
    killed: list[dict[str, Any]] = []
    me = os.getpid()
    for _ in range(20):
        found = False
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == me:
                continue
            try:
                with open(f"/proc/{name}/environ", "rb") as fh:
                    if needle not in fh.read().split(b"\0"):
                        continue
                with open(f"/proc/{name}/cmdline", "rb") as fh:
                    cmd = fh.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
                os.kill(int(name), signal.SIGKILL)
            except (OSError, ValueError):
                continue
            found = True
            killed.append({"pid": int(name), "cmd": cmd[:200]})
        if not found:
            break
        time.sleep(0.01)
    return killed


def run_supervised(cwd: Path, argv: list[str], timeout: float, env: dict[str, str],
                   sinks: tuple[Any, Any]) -> Outcome:
    """Run `argv` under the reaper; feed stdout/stderr to `sinks` until the hard deadline."""
    reaper = Path(__file__).with_name("reaper.py")
    marker = os.urandom(8).hex()
    env = {**env, MARKER: marker}
    rfd, wfd = os.pipe()
    started = time.monotonic()
    hard_deadline = started + timeout + GRACE_S
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", str(reaper), str(wfd), repr(float(timeout)), "--", *argv],
            cwd=str(cwd), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=env, pass_fds=(wfd,), start_new_session=True)
    finally:
        os.close(wfd)
    assert proc.stdout is not None and proc.stderr is not None
    sel = selectors.DefaultSelector()
    for stream, sink in zip((proc.stdout, proc.stderr), sinks, strict=True):
        os.set_blocking(stream.fileno(), False)
        sel.register(stream, selectors.EVENT_READ, sink)
    report = b""
    try:
        while sel.get_map():
            left = hard_deadline - time.monotonic()
            if left <= 0:
                break
            for key, _ in sel.select(min(left, 0.5)):
                try:
                    chunk = os.read(key.fd, 65536)
                except BlockingIOError:
                    continue
                if chunk:
                    key.data.feed(chunk)
                else:
                    sel.unregister(key.fileobj)
        try:
            proc.wait(max(0.1, hard_deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)  # the supervisor cleans up on SIGTERM
            try:
                proc.wait(GRACE_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        os.set_blocking(rfd, False)
        try:
            report = os.read(rfd, 1 << 20)
        except BlockingIOError:
            report = b""
    finally:
        sel.close()
        os.close(rfd)
        proc.stdout.close()
        proc.stderr.close()
    try:
        data = json.loads(report.decode("utf-8", "replace"))
    except ValueError:  # the command killed its supervisor: find what it started by the marker
        return Outcome(None, True, kill_marked(marker), None)
    return Outcome(data.get("exit_code"), bool(data.get("timed_out")), data.get("killed") or [],
                   data.get("error"))


def temporary_home() -> str:
    """A fresh private folder to use as HOME for one plain-mode call (caller removes it)."""
    return tempfile.mkdtemp(prefix="duckflow-home-")
