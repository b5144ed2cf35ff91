"""The copy-on-write staging area of a boxed command: the workspace as a read-only lower layer, its writes in a folder outside.

An auto-approved command that runs code runs inside bubblewrap (sandbox.py) on an overlay of
the workspace: the real workspace is the overlay's read-only lower layer and every write,
delete, rename or chmod lands in an upper folder outside the workspace (kernel overlayfs,
mounted inside an unprivileged user namespace; bubblewrap 0.8 has no `--overlay`). The real
workspace is never written by the command, however many files it has and however big they
are: no bind per file, no content copied first. After the run the upper folder holds exactly
what the command did (`changes`): created files, changed files (copied up), whiteouts for
removed ones and opaque folders for replaced ones. Only what the approval covers is applied
to the workspace (`apply`), file by file, never through a link:

- a new file, folder or in-workspace link, unless it is protected (below);
- a change to or removal of a file the approval covers (a file this session created);
- nothing else: a change to any other existing file, and anything protected, stays in the
  staging area, is listed, and goes to a person as a hard-required job.

Protected (never written by an auto-approved command, PROTECTED_DIRS / RUN_LATER): `.git/`,
`.duckflow/`, `.venv/`, `venv/`, `node_modules/`, `site-packages/`, `__pycache__/` and
editor/CI folders, and files that run on their own later (`conftest.py`, `*.pth`,
`sitecustomize.py`, `.envrc`, git hooks, Makefile, package.json, pyproject.toml, setup.cfg,
tox.ini, CI workflows, ...). Tool caches (CACHE_DIRS, `.pytest_cache`) are dropped and counted.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PROTECTED_DIRS = frozenset({
    ".git", ".duckflow", ".venv", "venv", "node_modules", "site-packages", "dist-packages",
    "__pycache__", ".tox", ".nox", ".hg", ".svn", ".github", ".gitlab", ".circleci", ".husky",
    ".devcontainer", ".vscode", ".idea", ".direnv", ".cargo", ".config"})
RUN_LATER = frozenset({
    "conftest.py", "sitecustomize.py", "usercustomize.py", ".envrc", ".env", "Makefile",
    "makefile", "GNUmakefile", "package.json", "package-lock.json", ".npmrc", ".yarnrc",
    ".yarnrc.yml", "pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "noxfile.py",
    "pytest.ini", ".pre-commit-config.yaml", ".gitlab-ci.yml", ".travis.yml", "Jenkinsfile",
    "azure-pipelines.yml", ".gitattributes", ".gitmodules", ".gitconfig", "Cargo.toml",
    "build.rs", "go.mod", ".bashrc", ".profile", ".zshrc", "Dockerfile", "justfile",
    "Taskfile.yml", ".python-version", ".tool-versions", ".pdbrc", "manage.py"})
RUN_LATER_SUFFIXES = (".pth", ".pyc", ".pyo", ".so", ".dylib", ".egg-link")
CACHE_DIRS = frozenset({".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis"})
_UNSAFE_PATH = frozenset(",:\\\n")  # overlay's mount options split on these


def protected(rel: str) -> str | None:
    """Why a workspace path may never be written by an auto-approved command, or None."""
    parts = rel.split("/")
    hit = next((p for p in parts[:-1] if p in PROTECTED_DIRS), None) or (
        parts[-1] if parts[-1] in PROTECTED_DIRS else None)
    if hit is not None:
        return f"inside {hit}/"
    name = parts[-1]
    if name in RUN_LATER or name.endswith(RUN_LATER_SUFFIXES) or name.startswith(".env"):
        return "it would run later"
    return None


def cached(rel: str) -> bool:
    return rel.split("/", 1)[0] in CACHE_DIRS


@dataclass
class Change:
    """One lasting effect the command left in its staging area (workspace-relative path)."""

    path: str
    what: str  # created, changed, removed, chmod
    kind: str  # file, dir, link, other
    applied: bool = False
    why: str = ""  # why it was not applied


@dataclass
class BoxEffects:
    """Everything a boxed command did to the workspace, and what of it was kept."""

    changes: list[Change] = field(default_factory=list)
    dropped: int = 0  # files in tool caches, thrown away
    diff: str = ""

    @property
    def kept(self) -> list[Change]:
        return [c for c in self.changes if c.applied]

    @property
    def held(self) -> list[Change]:
        """What was not applied: a person decides (hard-required)."""
        return [c for c in self.changes if not c.applied]

    @property
    def changed(self) -> list[str]:
        return [c.path for c in self.held]

    def summary(self) -> str:
        """One line: `changed keep.txt; created conftest.py (it would run later)`."""
        def names(rows: list[Change]) -> str:
            more = f" (+{len(rows) - 5} more)" if len(rows) > 5 else ""
            return ", ".join(c.path + (f" ({c.why})" if c.why else "") for c in rows[:5]) + more
        parts = []
        for what, verb in (("removed", "deleted"), ("changed", "changed"), ("chmod", "changed the "
                           "permissions of"), ("created", "created")):
            rows = [c for c in self.held if c.what == what]
            if rows:
                parts.append(f"{verb} {names(rows)}")
        return "; ".join(parts)

    def listing(self, limit: int = 60) -> list[str]:
        """Every lasting effect, one line each, for the command's result (what was not applied
        first, shallowest first; past the limit, how many more)."""
        def depth(c: Change) -> tuple[int, str]:
            return c.path.count("/"), c.path
        rows = sorted(self.held, key=depth)[:limit] + sorted(self.kept, key=depth)[:limit // 3]
        out = [f"{c.what} {c.path}{'/' if c.kind == 'dir' else ''}: "
               + ("kept" if c.applied else f"NOT applied ({c.why})") for c in rows]
        if len(self.changes) > len(rows):
            out.append(f"... and {len(self.changes) - len(rows)} more "
                       f"({len(self.held)} not applied in all)")
        if self.dropped:
            out.append(f"dropped {self.dropped} file(s) in tool caches ({', '.join(sorted(CACHE_DIRS))})")
        return out


class Staging:
    """One boxed command's overlay: `wrap` the bubblewrap argv, run, `changes`, `apply`, `close`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))
        base = tempfile.gettempdir()
        if _UNSAFE_PATH & set(base):
            base = "/tmp"
        self.dir = Path(tempfile.mkdtemp(prefix="duckflow-box-", dir=base))
        self.upper = self.dir / "upper"
        self.merged = self.dir / "merged"
        for d in ("lower", "upper", "work", "merged"):
            (self.dir / d).mkdir()

    def wrap(self, bwrap: list[str]) -> list[str]:
        """`bwrap` (which binds `self.merged` as the workspace) run after the overlay is mounted,
        inside a user and mount namespace of its own (nothing outside sees the mount)."""
        return wrap_overlay(self.root, self.dir, bwrap)

    def changes(self, covered: tuple[str, ...] = ()) -> BoxEffects:
        fx = BoxEffects()
        _walk(self.upper, self.root, "", fx)
        kept: list[Change] = []
        for c in fx.changes:
            if cached(c.path):
                fx.dropped += c.kind != "dir"
                continue
            why = protected(c.path)
            if why is None and c.what != "created" and not _covers(covered, c.path):
                why = "the approval does not cover this file"
            if why is None and c.kind == "link" and not _link_inside(self.upper, c.path):
                why = "a link that leads out of the workspace"
            if why is None and c.kind == "other":
                why = "not a file, folder or link"
            c.why = why or ""
            kept.append(c)
        fx.changes = kept
        return fx

    def apply(self, fx: BoxEffects) -> None:
        """Put what may be kept into the workspace, parents first, never through a link."""
        held_dirs = {c.path for c in fx.changes if c.why and c.kind == "dir"}
        for c in sorted(fx.changes, key=lambda c: (c.path.count("/"), c.path)):
            if c.why or any(c.path.startswith(d + "/") for d in held_dirs):
                c.why = c.why or "its folder was not applied"
                continue
            try:
                _apply_one(self.root, self.upper, c)
                c.applied = True
            except OSError as exc:
                c.why = f"could not be applied: {exc.strerror or exc}"

    def diff(self, fx: BoxEffects, limit: int = 200) -> str:
        """A unified diff of the changed text files that were not applied, then the removals."""
        import difflib

        out: list[str] = []
        for c in fx.held:
            if c.what == "changed" and c.kind == "file":
                old, new = _text(self.root / c.path), _text(self.upper / c.path)
                if old is None or new is None:
                    out.append(f"Binary or large file {c.path} changed")
                    continue
                out.extend(difflib.unified_diff(old.splitlines(), new.splitlines(),
                                                f"a/{c.path}", f"b/{c.path}", lineterm=""))
            elif c.what == "created" and c.kind == "file":
                new = _text(self.upper / c.path)
                out.extend([f"new file: {c.path}", *(f"+{ln}" for ln in (new or "").splitlines()[:20])])
        out.extend(f"deleted: {c.path}" for c in fx.held if c.what == "removed")
        if len(out) > limit:
            out = [*out[:limit], f"[... {len(out) - limit} more lines]"]
        return "\n".join(out)

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def _text(path: Path, limit: int = 1 << 20) -> str | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError:
        return None
    if len(data) > limit or b"\0" in data[:4096]:
        return None
    return data.decode("utf-8", "replace")


def _covers(covered: tuple[str, ...], rel: str) -> bool:
    return any(rel == p or rel.startswith(p.rstrip("/") + "/") for p in covered)


def _link_inside(upper: Path, rel: str) -> bool:
    target = os.readlink(upper / rel)
    joined = os.path.normpath(os.path.join(os.path.dirname(rel), target))
    return not target.startswith("/") and not joined.startswith("..")


def _walk(upper: Path, lower: Path, rel: str, fx: BoxEffects) -> None:
    """Read the upper layer: whiteouts are removals, opaque folders replace their lower one."""
    try:
        entries = sorted(os.scandir(upper / rel if rel else upper), key=lambda e: e.name)
    except OSError:
        return
    for e in entries:
        r = f"{rel}/{e.name}" if rel else e.name
        st = e.stat(follow_symlinks=False)
        low = lower / r
        try:
            was = os.lstat(low)
        except OSError:
            was = None
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # a whiteout
            if was is not None:
                _removed(lower, r, was, fx)
            continue
        kind = _kind(st.st_mode)
        if was is None:
            fx.changes.append(Change(r, "created", kind))
            if kind == "dir":
                _walk(upper, lower, r, fx)
            continue
        if _kind(was.st_mode) != kind:
            _removed(lower, r, was, fx)
            fx.changes.append(Change(r, "created", kind))
            if kind == "dir":
                _walk(upper, lower, r, fx)
            continue
        if kind == "dir":
            if _opaque(upper / r):  # removed and made again: the lower content is gone
                names = {x.name for x in os.scandir(upper / r)}
                for gone in sorted(os.listdir(low)):
                    if gone not in names:
                        _removed(lower, f"{r}/{gone}", os.lstat(low / gone), fx)
            if stat.S_IMODE(st.st_mode) != stat.S_IMODE(was.st_mode):
                fx.changes.append(Change(r, "chmod", "dir"))
            _walk(upper, lower, r, fx)
        elif kind == "link":
            if os.readlink(upper / r) != os.readlink(low):
                fx.changes.append(Change(r, "changed", "link"))
        elif kind == "file":
            if not _same_content(upper / r, low, st, was):
                fx.changes.append(Change(r, "changed", "file"))
            elif stat.S_IMODE(st.st_mode) != stat.S_IMODE(was.st_mode):
                fx.changes.append(Change(r, "chmod", "file"))
        else:
            fx.changes.append(Change(r, "changed", kind))


def _removed(lower: Path, rel: str, was: os.stat_result, fx: BoxEffects) -> None:
    """`rel` and, for a folder, everything it held (each file is named)."""
    fx.changes.append(Change(rel, "removed", _kind(was.st_mode)))
    if stat.S_ISDIR(was.st_mode):
        try:
            names = sorted(os.listdir(lower / rel))
        except OSError:
            return
        for name in names:
            try:
                _removed(lower, f"{rel}/{name}", os.lstat(lower / rel / name), fx)
            except OSError:
                continue


def _kind(mode: int) -> str:
    return "dir" if stat.S_ISDIR(mode) else "link" if stat.S_ISLNK(mode) else \
        "file" if stat.S_ISREG(mode) else "other"


def _opaque(path: Path) -> bool:
    for name in ("user.overlay.opaque", "trusted.overlay.opaque"):
        try:
            if os.getxattr(path, name, follow_symlinks=False) == b"y":
                return True
        except OSError:
            continue
    return False


def _same_content(a: Path, b: Path, sa: os.stat_result, sb: os.stat_result) -> bool:
    if sa.st_size != sb.st_size:
        return False
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            while True:
                x, y = fa.read(1 << 20), fb.read(1 << 20)
                if x != y:
                    return False
                if not x:
                    return True
    except OSError:
        return False


def _parent_fd(root: Path, rel: str) -> tuple[int, str]:
    """A descriptor of `rel`'s folder, walked from the root without following any link."""
    from duckflow.workspace.undocheck import bad_rel

    if bad_rel(rel):
        raise OSError(0, "not a plain workspace path")
    parts = rel.split("/")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for p in parts[:-1]:
            nxt = os.open(p, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError:
        os.close(fd)
        raise
    return fd, parts[-1]


def _apply_one(root: Path, upper: Path, c: Change) -> None:
    fd, name = _parent_fd(root, c.path)
    src = upper / c.path
    try:
        if c.what == "removed":
            try:
                if c.kind == "dir":
                    os.rmdir(name, dir_fd=fd)
                else:
                    os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                pass
            return
        st = os.lstat(src)
        if c.what == "chmod":
            os.chmod(name, stat.S_IMODE(st.st_mode), dir_fd=fd, follow_symlinks=False)
        elif c.kind == "dir":
            os.mkdir(name, stat.S_IMODE(st.st_mode), dir_fd=fd)
        elif c.kind == "link":
            if c.what == "changed":
                os.unlink(name, dir_fd=fd)
            os.symlink(os.readlink(src), name, dir_fd=fd)
        else:
            tmp = f".{name}.duckflow-{os.getpid()}"
            out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                          stat.S_IMODE(st.st_mode), dir_fd=fd)
            try:
                with open(src, "rb") as fh:
                    while chunk := fh.read(1 << 20):
                        os.write(out, chunk)
                os.fchmod(out, stat.S_IMODE(st.st_mode))
            finally:
                os.close(out)
            if c.what == "created":
                try:
                    os.lstat(name, dir_fd=fd)
                except FileNotFoundError:
                    pass
                else:
                    os.unlink(tmp, dir_fd=fd)
                    raise FileExistsError(17, "a file appeared there meanwhile")
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
    finally:
        os.close(fd)


_MOUNT = ('mount --bind "$1" "$2/lower" && mount -t overlay overlay -o '
          '"lowerdir=$2/lower,upperdir=$2/upper,workdir=$2/work,userxattr" "$2/merged" '
          '&& shift 2 && exec "$@"')


def wrap_overlay(root: Path, staging: Path, argv: list[str]) -> list[str]:
    """`argv` run after mounting the overlay of `root` at `staging/merged`, in a new user and
    mount namespace (util-linux `unshare`, `mount`)."""
    return ["unshare", "--user", "--map-root-user", "--mount", "--", "/bin/sh", "-c", _MOUNT,
            "duckflow-box", str(root), str(staging), *argv]


@functools.cache
def overlay_usable() -> bool:
    """True when an unprivileged overlay (user namespace + overlayfs, kernel >= 5.11) and
    bubblewrap inside it work here."""
    from duckflow.workspace.sandbox import bwrap_argv

    if shutil.which("unshare") is None or shutil.which("mount") is None or shutil.which("bwrap") is None:
        return False
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        (ws / "a").write_text("a")
        st = Staging(ws)
        try:
            argv = st.wrap(bwrap_argv(ws, ["/bin/sh", "-c", "echo b > a; echo c > n"], merged=st.merged))
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
            ok = proc.returncode == 0 and (ws / "a").read_text() == "a" and not (ws / "n").exists()
            return ok and {c.path for c in st.changes(("a",)).changes} == {"a", "n"}
        except (OSError, subprocess.TimeoutExpired):
            return False
        finally:
            st.close()
