"""Checkpoints: the state of files before each change, stored on disk, so any change can be undone.

Layout: `<DUCKFLOW_HOME>/checkpoints/<key>/index.db` (SQLite: one row per checkpoint, one per
file/dir/link recorded) and `blobs/<sha256>` (contents, stored once), where `<key>` is derived
from the workspace's resolved root. The store lives outside the workspace on purpose: a cloned
repository (or a command run in the workspace) can plant `.duckflow/checkpoints/`, and undo
must never act on data it did not write. Even so, every entry is checked again before it is
restored (a relative path under its recorded top, no `..`, nothing protected, no symlink on
the way; blobs verified by SHA-256), so a damaged or forged index cannot reach outside.
Everything survives a restart: a new `Checkpoints(root)` sees the same history. An undo
first records a checkpoint of what it is about to overwrite, so an undo can itself be undone.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import sqlite3
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from duckflow.paths import duckflow_home, workspace_state_dir
from duckflow.workspace import fsops
from duckflow.workspace.undocheck import (
    CheckpointError as CheckpointError,  # re-exported: it was defined here
)
from duckflow.workspace.undocheck import check_entries, is_digest

MAX_CHECKPOINT_BYTES = 200_000_000
_Row = tuple[str, str, int, str, int, "str | None", "str | None"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created REAL NOT NULL,
    tool TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    undone INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS entries (
    checkpoint_id INTEGER NOT NULL REFERENCES checkpoints(id),
    seq INTEGER NOT NULL,
    top TEXT NOT NULL,
    path TEXT NOT NULL,
    existed INTEGER NOT NULL,
    kind TEXT NOT NULL DEFAULT '',
    mode INTEGER NOT NULL DEFAULT 0,
    blob TEXT,
    link TEXT
);
CREATE INDEX IF NOT EXISTS entries_by_checkpoint ON entries(checkpoint_id, seq);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS baseline (path TEXT PRIMARY KEY, stat TEXT NOT NULL, blob TEXT);
CREATE TABLE IF NOT EXISTS undos (saved INTEGER PRIMARY KEY, target INTEGER NOT NULL);
"""



@dataclass(frozen=True)
class CheckpointInfo:
    """One recorded change: which tool, when, the paths it affected, whether it was undone."""

    id: int
    created: float
    tool: str
    summary: str
    paths: tuple[str, ...]
    undone: bool


@dataclass(frozen=True)
class UndoResult:
    """What an undo restored, and the checkpoint that saved the state it overwrote."""

    undone_id: int
    restored: tuple[str, ...]
    saved_as: int
    # per path what it did: "removed" (the change had created it), "recreated" (it had been
    # deleted), "restored" (changed back); a redo the other way round (workspace/undowords.py)
    effects: tuple[tuple[str, str], ...] = ()
    redone: bool = False
    not_restored: tuple[tuple[str, str], ...] = ()  # (path, why): left as they are, said so


def _restorable(cid: int, blocked: dict[str, str], paths: Sequence[str]) -> tuple[tuple[str, ...], dict[str, str]]:
    """The paths an undo may restore (those the workspace's present state does not block), or
    a refusal when none is left (never calling the store forged: the workspace changed)."""
    tops = tuple(t for t in paths if t not in blocked)
    if not tops:
        why = "; ".join(f"{t}: {w}" for t, w in list(blocked.items())[:3])
        raise CheckpointError(f"refused to undo #{cid}: nothing could be restored ({why})",
                              hint="nothing was changed; remove the link, then undo again")
    return tops, blocked


def workspace_key(root: str | Path) -> str:
    """The SHA-256 (first 32 hex digits) of the workspace's resolved path: names its state
    folders under DUCKFLOW_HOME (checkpoints, code-search index)."""
    real = os.path.realpath(root)
    return hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def store_dir(root: str | Path) -> Path:
    """Where the checkpoints of the workspace `root` live: under DUCKFLOW_HOME, keyed by the
    SHA-256 of its resolved path (never inside the workspace itself)."""
    return duckflow_home() / "checkpoints" / workspace_key(root)


def has_checkpoints(root: str | Path) -> bool:
    """True when Duckflow itself has recorded checkpoints for this workspace."""
    return (store_dir(root) / "index.db").is_file()


def planted_store(root: str | Path) -> Path | None:
    """A `.duckflow/checkpoints` inside the workspace: never read (Duckflow does not write
    there); returned so a command can say why it is ignored."""
    legacy = workspace_state_dir(root) / "checkpoints"
    return legacy if os.path.lexists(legacy) else None


def private_dir(path: Path) -> Path:
    """Create `path` (mode 0700) below an existing home; refuse a symlink at any step made here."""
    home = duckflow_home()
    home.mkdir(parents=True, exist_ok=True)
    cur = home
    for part in path.relative_to(home).parts:
        cur = cur / part
        if cur.is_symlink():
            raise CheckpointError(f"{cur} is a symlink; Duckflow keeps no state through links",
                                  hint="remove the link (Duckflow recreates what it needs)")
        try:
            cur.mkdir(mode=0o700)
        except FileExistsError:
            pass
    return path


def open_owned_db(db: Path, schema: str, root: Path, *, what: str, hint: str) -> sqlite3.Connection:
    """Open a workspace's database in its private folder under DUCKFLOW_HOME (checkpoints,
    code-search index): no link on the file or its WAL/SHM, and the root recorded in its `meta`
    table (which `schema` creates) must be `root`; a store of another workspace is refused."""
    from duckflow.store.sqlite import connect

    for name in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        if name.is_symlink():
            raise CheckpointError(f"{name} is a symlink; Duckflow keeps no state through links",
                                  hint="remove the link (Duckflow recreates what it needs)")
    conn = connect(db)
    conn.executescript(schema)
    with conn:
        conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('root', ?)", (str(root),))
    row = conn.execute("SELECT value FROM meta WHERE key = 'root'").fetchone()
    if row is None or row["value"] != str(root):
        conn.close()
        raise CheckpointError(f"the {what} {db.parent} belongs to another workspace "
                              f"({row['value'] if row else '?'}), not {root}", hint=hint)
    return conn


class Checkpoints:
    """Record-before-change and undo for one workspace; safe to create anew after a restart."""

    def __init__(self, root: str | Path, *, max_bytes: int = MAX_CHECKPOINT_BYTES) -> None:
        self.root = Path(os.path.realpath(root))
        self.dir = private_dir(store_dir(self.root))
        self.blobs = private_dir(self.dir / "blobs")
        self.max_bytes = max_bytes
        self._db = open_owned_db(self.dir / "index.db", _SCHEMA, self.root, what="checkpoint store",
                                 hint="nothing was changed; remove that folder if it is stale")

    def close(self) -> None:
        self._db.close()

    # ----------------------------------------------------------------- recording
    def record(self, tool: str, paths: Sequence[str], summary: str = "") -> int:
        """Save the current state of `paths` (relative to the root, already guarded)."""
        rows: list[_Row] = []
        root_fd = os.open(self.root, fsops.DIR_FLAGS)
        try:
            for top in dict.fromkeys(paths):
                rows.extend(self._capture(root_fd, top))
        except ValueError as exc:
            raise CheckpointError(
                f"could not record a checkpoint before {tool}: {exc}",
                hint="nothing was changed; change fewer files at once, or raise "
                "workspace.checkpoint_max_bytes",
            ) from exc
        except OSError as exc:
            raise CheckpointError(
                f"could not record a checkpoint before {tool}: {exc}",
                hint="nothing was changed; check the path and try again",
            ) from exc
        finally:
            os.close(root_fd)
        with self._db:
            cur = self._db.execute(
                "INSERT INTO checkpoints(created, tool, summary) VALUES (?, ?, ?)",
                (time.time(), tool, summary),
            )
            cid = int(cur.lastrowid or 0)
            self._db.executemany(
                "INSERT INTO entries(checkpoint_id, seq, top, path, existed, kind, mode, blob, link)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(cid, i, *row) for i, row in enumerate(rows)],
            )
        return cid

    def record_rows(self, tool: str, rows: Sequence[_Row], summary: str = "") -> int:
        """A checkpoint of a state captured earlier (workspace/effects.py: the files as they were
        before a command); every blob named must already be stored (`store_blob`)."""
        with self._db:
            cur = self._db.execute("INSERT INTO checkpoints(created, tool, summary) VALUES (?, ?, ?)",
                                   (time.time(), tool, summary))
            cid = int(cur.lastrowid or 0)
            self._db.executemany(
                "INSERT INTO entries(checkpoint_id, seq, top, path, existed, kind, mode, blob, link)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [(cid, i, *row) for i, row in enumerate(rows)])
        return cid

    def store_blob(self, data: bytes) -> str:
        """Keep a content (once per SHA-256; not fsynced: it is checked by hash when read
        back, and a workspace snapshot stores thousands); returns its digest."""
        return self._store(data, durable=False)

    def load_blob(self, digest: str) -> bytes:
        """A stored content, checked against its SHA-256."""
        return self._load(digest)

    def baseline(self) -> dict[str, tuple[str, str | None]]:
        """path -> (stat key, blob) of the files whose content is already stored (effects.py)."""
        return {r["path"]: (r["stat"], r["blob"]) for r in self._db.execute("SELECT * FROM baseline")}

    def save_baseline(self, changed: dict[str, tuple[str, str | None]], gone: Sequence[str]) -> None:
        with self._db:
            self._db.executemany("INSERT OR REPLACE INTO baseline(path, stat, blob) VALUES (?, ?, ?)",
                                 [(p, k, b) for p, (k, b) in changed.items()])
            self._db.executemany("DELETE FROM baseline WHERE path = ?", [(p,) for p in gone])

    def _capture(self, root_fd: int, top: str) -> list[_Row]:
        parts = [p for p in top.split("/") if p]
        if not parts:
            raise ValueError("the workspace root itself cannot be checkpointed")
        missing: list[_Row] = [(top, top, 0, "", 0, None, None)]
        try:
            pfd = fsops.walk_parent(root_fd, parts[:-1], create=False)
        except FileNotFoundError:
            return missing
        try:
            try:
                os.stat(parts[-1], dir_fd=pfd, follow_symlinks=False)
            except FileNotFoundError:
                return missing
            base = "/".join(parts[:-1])
            out: list[_Row] = []
            for entry in fsops.snapshot(pfd, parts[-1], self.max_bytes):
                path = f"{base}/{entry.rel}" if base else entry.rel
                blob = self._store(entry.data) if entry.kind == "file" else None
                out.append((top, path, 1, entry.kind, entry.mode, blob, entry.link or None))
            return out
        finally:
            os.close(pfd)

    def _store(self, data: bytes, durable: bool = True) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self.blobs / digest
        if not target.is_file() or target.is_symlink():
            dir_fd = os.open(self.blobs, fsops.DIR_FLAGS)
            try:  # O_EXCL | O_NOFOLLOW temp file, renamed over whatever is at the name
                fsops.atomic_write(dir_fd, digest, data, 0o600, durable=durable)
            finally:
                os.close(dir_fd)
        return digest

    def _load(self, digest: str) -> bytes:
        """A stored content, read without following links and checked against its hash."""
        if not is_digest(digest):
            raise OSError(f"checkpoint content name {str(digest)[:20]!r} is not a SHA-256")
        dir_fd = os.open(self.blobs, fsops.DIR_FLAGS)
        try:
            data = fsops.read_bytes(dir_fd, digest)
        finally:
            os.close(dir_fd)
        if hashlib.sha256(data).hexdigest() != digest:
            raise OSError(f"checkpoint content {digest[:12]}… is damaged (hash mismatch)")
        return data

    # ----------------------------------------------------------------- reading
    def list(self, limit: int = 50) -> "list[CheckpointInfo]":
        """The newest checkpoints first."""
        rows = self._db.execute(
            "SELECT * FROM checkpoints ORDER BY id DESC LIMIT ?", (limit,)
        ).fetchall()
        return [self._info(r) for r in rows]

    def get(self, cid: int) -> CheckpointInfo:
        row = self._db.execute("SELECT * FROM checkpoints WHERE id = ?", (cid,)).fetchone()
        if row is None:
            raise CheckpointError(f"there is no checkpoint #{cid}",
                                  hint="see `duckflow undo --list`")
        return self._info(row)

    def _info(self, row: sqlite3.Row) -> CheckpointInfo:
        tops = self._db.execute(
            "SELECT DISTINCT top FROM entries WHERE checkpoint_id = ? ORDER BY seq", (row["id"],)
        ).fetchall()
        return CheckpointInfo(row["id"], row["created"], row["tool"], row["summary"],
                              tuple(t["top"] for t in tops), bool(row["undone"]))

    def prune(self, keep: int = 500) -> int:
        """Forget all but the newest `keep` checkpoints and delete blobs nobody uses; returns
        how many checkpoints were dropped."""
        with self._db:
            old = [r["id"] for r in self._db.execute(
                "SELECT id FROM checkpoints ORDER BY id DESC LIMIT -1 OFFSET ?", (keep,))]
            for cid in old:
                self._db.execute("DELETE FROM entries WHERE checkpoint_id = ?", (cid,))
                self._db.execute("DELETE FROM checkpoints WHERE id = ?", (cid,))
        used = {r["blob"] for r in self._db.execute(
            "SELECT blob FROM entries WHERE blob IS NOT NULL UNION SELECT blob FROM baseline")}
        for blob in self.blobs.iterdir():
            if blob.name not in used and not blob.is_symlink():
                blob.unlink(missing_ok=True)
        return len(old)

    # ----------------------------------------------------------------- undo
    def undo(self, cid: int | None = None) -> UndoResult:
        """Restore the paths of checkpoint `cid` (default: the newest not yet undone). The undo is
        a stack: the state it overwrites is saved, `redo()` brings it back and the change can be
        undone again; `cid` naming such a saved state is that redo."""
        if cid is not None and self._target_of(cid) is not None:
            return self.redo(cid)
        if cid is None:
            row = self._db.execute(
                "SELECT id FROM checkpoints WHERE undone = 0 AND tool != 'undo' "
                "ORDER BY id DESC LIMIT 1"
            ).fetchone()
            if row is None:
                raise CheckpointError("there is nothing to undo",
                                      hint="changes made by Duckflow's tools are listed by "
                                      "`duckflow undo --list`")
            cid = int(row["id"])
        info = self.get(cid)
        entries = self._db.execute(
            "SELECT * FROM entries WHERE checkpoint_id = ? ORDER BY seq", (cid,)
        ).fetchall()
        # before anything is read or touched: a bad record refuses all; a path the workspace's
        # present state blocks (a link on the way) is skipped, the others are restored
        tops, blocked = _restorable(cid, check_entries(self.root, cid, info.paths, entries), info.paths)
        try:  # every content is read and checked before anything is touched
            contents = {e["blob"]: self._load(e["blob"]) for e in entries if e["blob"]}
        except OSError as exc:
            raise CheckpointError(f"cannot undo #{cid}: {exc}",
                                  hint="nothing was changed; choose another checkpoint") from exc
        effects = self._effects(tops, entries)
        saved = self.record("undo", tops, f"state before undo of #{cid}")
        failed = {**blocked, **self._restore(tops, entries, contents)}
        with self._db:
            self._db.execute("UPDATE checkpoints SET undone = 1 WHERE id = ?", (cid,))
            self._db.execute("INSERT OR REPLACE INTO undos(saved, target) VALUES (?, ?)", (saved, cid))
        return UndoResult(cid, tuple(t for t in tops if t not in failed), saved,
                          tuple(e for e in effects if e[0] not in failed),
                          not_restored=tuple(failed.items()))

    def _target_of(self, saved: int) -> int | None:
        row = self._db.execute("SELECT target FROM undos WHERE saved = ?", (saved,)).fetchone()
        return int(row["target"]) if row is not None else None

    def redo(self, saved: int | None = None) -> UndoResult:
        """Bring back the change the last undo took away (default: the newest undo not redone, as
        long as no change was made since it); the change can then be undone again."""
        if saved is None:
            row = self._db.execute(
                "SELECT u.saved FROM undos u JOIN checkpoints s ON s.id = u.saved "
                "JOIN checkpoints t ON t.id = u.target WHERE s.undone = 0 AND t.undone = 1 "
                "AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.id > u.saved AND c.tool != 'undo') "
                "ORDER BY u.saved DESC LIMIT 1").fetchone()
            if row is None:
                raise CheckpointError("there is nothing to redo", hint="undo a change first (/undo, `duckflow undo`)")
            saved = int(row["saved"])
        target = self._target_of(saved)
        info = self.get(saved)
        entries = self._db.execute("SELECT * FROM entries WHERE checkpoint_id = ? ORDER BY seq", (saved,)).fetchall()
        tops, blocked = _restorable(saved, check_entries(self.root, saved, info.paths, entries), info.paths)
        try:
            contents = {e["blob"]: self._load(e["blob"]) for e in entries if e["blob"]}
        except OSError as exc:
            raise CheckpointError(f"cannot redo #{saved}: {exc}", hint="nothing was changed") from exc
        effects = self._effects(tops, entries)
        failed = {**blocked, **self._restore(tops, entries, contents)}
        with self._db:
            self._db.execute("UPDATE checkpoints SET undone = 1 WHERE id = ?", (saved,))
            if target is not None:
                self._db.execute("UPDATE checkpoints SET undone = 0 WHERE id = ?", (target,))
        return UndoResult(target or saved, tuple(t for t in tops if t not in failed), saved,
                          tuple(e for e in effects if e[0] not in failed), redone=True,
                          not_restored=tuple(failed.items()))

    def _effects(self, paths: Sequence[str], entries: builtins.list[sqlite3.Row]) -> tuple[tuple[str, str], ...]:
        """What restoring `entries` does to each path: removed, recreated or restored."""
        out: list[tuple[str, str]] = []
        for top in paths:
            was = any(e["existed"] for e in entries if e["path"] == top)
            now = os.path.lexists(self.root / top)
            if was or now:
                out.append((top, "restored" if was and now else "recreated" if was else "removed"))
        return tuple(out)

    def _restore(self, paths: Sequence[str], entries: builtins.list[sqlite3.Row],
                 contents: dict[str, bytes]) -> dict[str, str]:
        """Restore path by path: one that fails does not stop the others (returned: path -> why)."""
        failed: dict[str, str] = {}
        root_fd = os.open(self.root, fsops.DIR_FLAGS)
        try:
            for top in paths:
                try:
                    self._restore_top(root_fd, top, [e for e in entries if e["top"] == top], contents)
                except OSError as exc:
                    failed[top] = f"could not be written ({exc.strerror or exc})"
        finally:
            os.close(root_fd)
        return failed

    def _restore_top(self, root_fd: int, top: str, entries: builtins.list[sqlite3.Row],
                     contents: dict[str, bytes]) -> None:
        parts = [p for p in top.split("/") if p]
        pfd = fsops.walk_parent(root_fd, parts[:-1], create=True)
        try:
            try:
                fsops.remove(pfd, parts[-1])
            except FileNotFoundError:
                pass
        finally:
            os.close(pfd)
        for e in sorted(entries, key=lambda r: (r["path"].count("/"), r["seq"])):
            if not e["existed"]:
                continue
            eparts = e["path"].split("/")
            fd = fsops.walk_parent(root_fd, eparts[:-1], create=True)
            try:
                name = eparts[-1]
                if e["kind"] == "dir":
                    try:
                        os.mkdir(name, (e["mode"] & 0o777) or 0o755, dir_fd=fd)
                    except FileExistsError:
                        pass
                    dfd = os.open(name, fsops.DIR_FLAGS, dir_fd=fd)
                    try:
                        os.fchmod(dfd, (stat.S_IMODE(e["mode"]) & 0o777) or 0o755)
                    finally:
                        os.close(dfd)
                elif e["kind"] == "link":
                    os.symlink(e["link"], name, dir_fd=fd)
                else:
                    fsops.atomic_write(fd, name, contents[e["blob"]], (e["mode"] & 0o777) or 0o644)
            finally:
                os.close(fd)

