"""What a command did to the workspace's files: a snapshot before, a comparison after, a rollback.

Where the box has no copy-on-write (Landlock, Seatbelt) and for read-only commands run without
a box, the effects of an auto-approved command are found here (with bubblewrap they are read
from the staging overlay instead, staging.py). `Watch.start` takes a stat snapshot of the
workspace (kind, size, mtime_ns, ctime_ns, inode, mode) and makes sure the checkpoint store
(checkpoints.py, the undo store) holds the content of every file: a file whose stat matches the
stored baseline is not read again, so only what changed since the last check is hashed. The
ctime cannot be set back by a process, so a rewrite that restores size and mtime still shows.
`Watch.finish` scans again: every file or folder that was deleted, overwritten, renamed away,
replaced or chmod-ed outside `covered` (paths the approval covers) is restored from that
content through a checkpoint, file by file (a link left at or on the way to one path blocks
only that path, said as not restored), so `duckflow undo` can put the command's version back,
and the effects are returned for the person to judge (`Effects`). Files the command created
are kept.

Not watched: dependency and cache folders a package manager or tool rebuilds (SKIP_DIRS), in
`.git/` all but `config`, `hooks/` and `info/` (`git status` rewrites the index), and
files over STORE_LIMIT are compared but cannot be restored (they are listed as such).
`readonly()` names files to bind read-only for a plain bubblewrap run (at most READONLY_LIMIT;
the boxed runs of auto-approve use the overlay and need none).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from duckflow.workspace.checkpoints import CheckpointError, Checkpoints

SKIP_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox",
                       "node_modules", ".venv", "venv", ".nox"})
GIT_WATCHED = frozenset({"config", "hooks", "info"})  # in .git/: what changes what git runs
STORE_LIMIT = 16 * 1024 * 1024
READONLY_LIMIT = 100  # read-only binds at most (bubblewrap pays for each mount; the shallowest first)
_DIFF_LINES = 200


@dataclass(frozen=True)
class Seen:
    """One path as a scan saw it (`key` changes whenever the file's content or mode may have)."""

    kind: str  # file, dir, link, other
    key: str
    mode: int
    link: str | None = None


def scan(root: Path) -> dict[str, Seen]:
    """Every path under `root` (relative, POSIX), links not followed, SKIP_DIRS left out."""
    out: dict[str, Seen] = {}
    stack = [("", str(root))]
    while stack:
        rel, path = stack.pop()
        try:
            it = os.scandir(path)
        except OSError:
            continue  # unreadable (a folder chmod-ed 000 shows as a mode change of the folder)
        with it:
            for e in it:
                if rel == ".git" and e.name not in GIT_WATCHED:
                    continue  # git's own bookkeeping (index, objects, refs, logs) changes on reads
                r = f"{rel}/{e.name}" if rel else e.name
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                m = st.st_mode
                if stat.S_ISDIR(m):
                    if e.name in SKIP_DIRS:
                        continue
                    out[r] = Seen("dir", f"{st.st_ino}", stat.S_IMODE(m))
                    stack.append((r, e.path))
                elif stat.S_ISLNK(m):
                    out[r] = Seen("link", f"{st.st_ino}", 0, os.readlink(e.path))
                else:
                    kind = "file" if stat.S_ISREG(m) else "other"
                    key = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}:{m}"
                    out[r] = Seen(kind, key, stat.S_IMODE(m))
    return out


def _read(root: Path, rel: str) -> bytes | None:
    try:
        fd = os.open(root / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > STORE_LIMIT:
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def under(path: str, prefixes: Iterable[str]) -> bool:
    """True when `path` is one of `prefixes` or inside one (workspace-relative, segment-wise)."""
    for pre in prefixes:
        pre = pre.strip("/")
        if pre in ("", ".", "*") or path == pre or path.startswith(pre + "/"):
            return True
    return False


@dataclass
class Effects:
    """What a command changed outside `covered`, and what the rollback did about it."""

    deleted: list[str] = field(default_factory=list)
    overwritten: list[str] = field(default_factory=list)
    chmodded: list[str] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    not_restored: list[str] = field(default_factory=list)
    diff: str = ""
    checkpoint: int | None = None  # the checkpoint holding the state before the command
    saved_as: int | None = None  # the command's version: `duckflow undo ID` puts it back

    @property
    def changed(self) -> list[str]:
        return [*self.deleted, *self.overwritten, *self.chmodded]

    def summary(self) -> str:
        """One line: `deleted keep.txt; overwrote a.txt, b.txt (+3 more)`."""
        def names(paths: list[str]) -> str:
            more = f" (+{len(paths) - 5} more)" if len(paths) > 5 else ""
            return ", ".join(paths[:5]) + more
        parts = [f"{verb} {names(paths)}" for verb, paths in (
            ("deleted", self.deleted), ("overwrote", self.overwritten),
            ("changed the permissions of", self.chmodded)) if paths]
        return "; ".join(parts)


class Watch:
    """One command's effects check: `start()` before it runs, `finish()` after."""

    def __init__(self, root: Path, covered: Iterable[str], before: dict[str, Seen],
                 blobs: dict[str, str | None], store: Checkpoints) -> None:
        self.root = root
        self.covered = tuple(covered)
        self.before = before
        self.blobs = blobs
        self.store = store

    @classmethod
    def start(cls, root: Path | str, covered: Iterable[str] = ()) -> Watch:
        """Snapshot the workspace; the content of every file is in the undo store afterwards."""
        real = Path(os.path.realpath(root))
        store = Checkpoints(real)
        before = scan(real)
        base = store.baseline()
        blobs: dict[str, str | None] = {}
        changed: dict[str, tuple[str, str | None]] = {}
        for rel, seen in before.items():
            if seen.kind != "file":
                continue
            known = base.get(rel)
            if known is not None and known[0] == seen.key and known[1] is not None:
                blobs[rel] = known[1]
                continue
            data = _read(real, rel)
            blobs[rel] = store.store_blob(data) if data is not None else None
            changed[rel] = (seen.key, blobs[rel])
        store.save_baseline(changed, [p for p in base if p not in blobs])
        return cls(real, covered, before, blobs, store)

    def close(self) -> None:
        self.store.close()

    def readonly(self, limit: int = READONLY_LIMIT) -> list[str]:
        """The existing files outside `covered` to bind read-only in the sandbox: at most
        `limit`, the shallowest first (the comparison after the run covers every file)."""
        out = [p for p, s in self.before.items() if s.kind == "file" and not under(p, self.covered)]
        return sorted(out, key=lambda p: (p.count("/"), p))[:limit]

    def finish(self) -> Effects:
        """Compare with the snapshot, roll back what changed outside `covered`, say what it was."""
        try:
            return self._finish()
        finally:
            self.close()

    def _finish(self) -> Effects:
        after = scan(self.root)
        fx = Effects()
        # folders' modes first: a folder chmod-ed 000 hides its files, which are not deleted
        for rel, was in self.before.items():
            now = after.get(rel)
            if (was.kind == "dir" and now is not None and now.kind == "dir"
                    and now.mode != was.mode and not under(rel, self.covered)):
                fx.chmodded.append(rel)
                if not self._chmod_back(rel, was.mode):
                    fx.not_restored.append(rel)
        if fx.chmodded:
            after = scan(self.root)
        fx.created = sorted(p for p in after if p not in self.before)
        texts: list[tuple[str, bytes, bytes | None]] = []
        for rel, was in self.before.items():
            if under(rel, self.covered) or rel in fx.chmodded:
                continue
            now = after.get(rel)
            if now is None or now.kind != was.kind:
                fx.deleted.append(rel) if now is None else fx.overwritten.append(rel)
            elif was.kind == "link" and now.link != was.link:
                fx.overwritten.append(rel)
            elif was.kind == "file" and now.key != was.key:
                blob = self.blobs.get(rel)
                data = _read(self.root, rel)
                same = blob is not None and data is not None and hashlib.sha256(data).hexdigest() == blob
                if not same:
                    fx.overwritten.append(rel)
                    if blob is not None and data is not None:
                        texts.append((rel, self.store.load_blob(blob), data))
                elif now.mode != was.mode:
                    fx.chmodded.append(rel)
        if fx.changed:
            fx.diff = _diff(texts, fx.deleted, self.before)
            self._rollback(fx)
        return fx

    def _chmod_back(self, rel: str, mode: int) -> bool:
        from duckflow.workspace.undocheck import bad_rel

        try:
            if bad_rel(rel) or not stat.S_ISDIR(os.lstat(self.root / rel).st_mode):
                return False
            os.chmod(self.root / rel, mode, follow_symlinks=False)
            return True
        except OSError:
            return False

    def _rollback(self, fx: Effects) -> None:
        from duckflow.workspace.undocheck import bad_rel

        rows = []
        for rel in sorted({*fx.deleted, *fx.overwritten, *fx.chmodded}, key=lambda p: (p.count("/"), p)):
            was = self.before[rel]
            if was.kind == "dir" and rel not in fx.deleted and rel not in fx.overwritten:
                continue  # a folder's mode: set back already, never removed and rebuilt
            if bad_rel(rel) or (was.kind == "file" and self.blobs.get(rel) is None) or was.kind == "other":
                fx.not_restored.append(rel)
            else:
                rows.append((rel, rel, 1, was.kind, was.mode, self.blobs.get(rel), was.link))
        if not rows:
            return
        try:
            fx.checkpoint = self.store.record_rows("effects-check", rows, "state before an "
                                                   "auto-approved command changed it")
            done = self.store.undo(fx.checkpoint)  # file by file: a link blocks only its own path
            fx.saved_as = done.saved_as
            fx.not_restored.extend(path for path, _ in done.not_restored)
        except (CheckpointError, OSError):
            fx.not_restored.extend(r[0] for r in rows)


def _diff(texts: list[tuple[str, bytes, bytes | None]], deleted: list[str],
          before: dict[str, Seen]) -> str:
    """A unified diff of the text files overwritten, then the list of deleted paths."""
    out: list[str] = []
    for rel, old, new in texts:
        if b"\0" in old[:4096] or (new is not None and b"\0" in new[:4096]):
            out.append(f"Binary file {rel} changed")
            continue
        out.extend(difflib.unified_diff(old.decode("utf-8", "replace").splitlines(),
                                        (new or b"").decode("utf-8", "replace").splitlines(),
                                        f"a/{rel}", f"b/{rel}", lineterm=""))
    out.extend(f"deleted: {rel}{'/' if before[rel].kind == 'dir' else ''}" for rel in deleted)
    if len(out) > _DIFF_LINES:
        out = [*out[:_DIFF_LINES], f"[... {len(out) - _DIFF_LINES} more lines]"]
    return "\n".join(out)
