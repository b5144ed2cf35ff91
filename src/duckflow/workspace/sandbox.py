"""How a shell command is contained: its environment, the bubblewrap box and the hard deadline.

- Environment: an allow-list (PATH, LANG/LC_*, TERM, TZ, a few build variables, plus the names
  in `workspace.shell_env_allow`), HOME set to a fresh temporary folder, and any variable whose
  value the sanitizer flags as a secret dropped even when its name is allowed.
- bubblewrap: every namespace bwrap offers (user, pid, uts, ipc, net, cgroup), all capabilities
  dropped, an unprivileged uid when Duckflow runs as root, a new session, read-only binds of only
  what a build needs (/usr, the /bin and /lib links, a short list from /etc), private /tmp, /dev
  and /proc, no /run (no host sockets), the workspace writable but its `.duckflow/` (and `.git/`
  when present) read-only.
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


_NEVER_WHOLE = ("/", "/root", "/home", "/tmp", "/var", "/etc", "/run", "/proc", "/sys", "/dev")


_PYTHON_WORD = re.compile(r"\s*(python3?(?:\.\d+)?)(?=\s|$)")


def _shell_python(argv: list[str]) -> str | None:
    """The python a `sh -c "python3 ..."` command starts, found on PATH (None for other commands)."""
    if len(argv) != 3 or argv[1] != "-c" or not argv[0].endswith("sh"):
        return None
    m = _PYTHON_WORD.match(argv[2])
    return shutil.which(m.group(1)) if m else None


def interpreter_paths(root: Path, argv: list[str]) -> list[str]:
    """Install folders of the interpreters a command needs outside /usr, bound read-only:
    the base of the workspace's `.venv` (its `pyvenv.cfg` home) and the prefix of an absolute
    program (a pyenv or toolchain python) or of the python a shell command starts by name
    (`python3 x.py`: the one on PATH, so a command runs with the packages it has outside), never
    a home folder or / itself."""
    found: list[Path] = []
    cfg = root / ".venv" / "pyvenv.cfg"
    try:
        for line in cfg.read_text("utf-8", "replace").splitlines()[:50]:
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                found.append(Path(os.path.realpath(value.strip())).parent)
    except OSError:
        pass
    if argv and os.path.isabs(argv[0]):
        found.append(Path(os.path.realpath(argv[0])).parent.parent)
    python = _shell_python(argv)
    if python:  # `python3 x.py` runs the python3 the person's PATH names, as outside the box
        found.append(Path(os.path.realpath(python)).parent.parent)
    homes = {os.path.realpath(os.path.expanduser("~"))}
    out: list[str] = []
    for p in found:
        text = str(p)
        if (text in _NEVER_WHOLE or text in homes or text.startswith("/usr") or not p.is_dir()
                or p == root or root.is_relative_to(p) or text in out):
            continue
        out.append(text)
    return out


def bwrap_argv(root: Path, argv: list[str], *, ro_paths: Iterable[str] = ()) -> list[str]:
    """Wrap `argv` in bubblewrap (see the module docstring for what the box allows)."""
    root = Path(os.path.realpath(root))
    out = ["bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
           "--new-session", "--die-with-parent", "--hostname", "duckflow-sandbox"]
    if os.geteuid() == 0:
        out += ["--uid", str(NOBODY), "--gid", str(NOBODY)]
    for ro in (*SYSTEM_RO, *ro_paths, *interpreter_paths(root, argv)):
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
            "--bind", str(root), str(root)]
    for prot in _protected(root):
        out += ["--ro-bind", str(prot), str(prot)]
    out += ["--setenv", "HOME", "/tmp/home", "--chdir", str(root), "--"]
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
