"""search_code: an SQLite FTS5 (BM25) index of the workspace's text files, updated by mtime.

The index lives in `<DUCKFLOW_HOME>/search/<key>/search.db` (`<key>`: SHA-256 of the resolved
root, as for checkpoints), never in the workspace: a cloned repository could ship a forged
`.duckflow/search.db` whose snippets the model would read as file content, so that file is
never opened. Files are cut into chunks of
`CHUNK_LINES` lines, indexed twice: with the `unicode61` tokenizer (words; `snake_case`
becomes a phrase) and with `trigram` (substrings, and Japanese or Chinese text that has no
spaces); terms shorter than a trigram (接続) fall back to a substring scan. `refresh()` re-reads only new or changed files (mtime or size differs) and drops
deleted ones; .gitignore'd, binary and large files are skipped.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duckflow.errors import DuckflowError
from duckflow.paths import duckflow_home
from duckflow.workspace import fsops
from duckflow.workspace.ignore import walk

CHUNK_LINES = 20
MAX_INDEX_BYTES = 1_000_000
_WORD = re.compile(r"\w+", re.UNICODE)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER);
CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY, path TEXT NOT NULL,
                                   start_line INTEGER NOT NULL, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_path ON chunks(path);
CREATE VIRTUAL TABLE IF NOT EXISTS fts_words USING fts5(body, content='chunks',
    content_rowid='id', tokenize='unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS fts_tri USING fts5(body, content='chunks',
    content_rowid='id', tokenize='trigram');
"""


def index_path(root: str | Path) -> Path:
    """Where the code-search index of the workspace `root` lives: under DUCKFLOW_HOME, keyed
    by the SHA-256 of its resolved path (never the workspace's own `.duckflow/search.db`)."""
    from duckflow.workspace.checkpoints import workspace_key

    return duckflow_home() / "search" / workspace_key(root) / "search.db"


@dataclass(frozen=True)
class Hit:
    """One search result: `file:line`, the line itself, and its BM25 score (lower is better)."""

    file: str
    line: int
    snippet: str
    score: float

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class RefreshStats:
    added: int
    updated: int
    removed: int
    skipped: int


class CodeIndex:
    """The workspace's code-search index; cheap to reopen, refreshed before each search."""

    def __init__(self, root: str | Path, *, max_bytes: int = MAX_INDEX_BYTES) -> None:
        self.root = Path(os.path.realpath(root))
        from duckflow.workspace.checkpoints import open_owned_db, private_dir

        db = index_path(self.root)
        private_dir(db.parent)
        self.max_bytes = max_bytes
        self._db = open_owned_db(db, _SCHEMA, self.root, what="code-search index",
                                 hint="remove that folder; Duckflow rebuilds the index on the next search")

    def close(self) -> None:
        self._db.close()

    def refresh(self) -> RefreshStats:
        """Bring the index up to date with the files on disk (by mtime and size)."""
        known = {r["path"]: (r["mtime_ns"], r["size"])
                 for r in self._db.execute("SELECT path, mtime_ns, size FROM files")}
        seen: set[str] = set()
        added = updated = skipped = 0
        root_fd = os.open(self.root, fsops.DIR_FLAGS)
        try:
            with self._db:
                for entry in walk(root_fd, [], recursive=True):
                    if entry.is_dir or not stat.S_ISREG(entry.st.st_mode):
                        continue
                    if entry.st.st_size > self.max_bytes:
                        skipped += 1
                        continue
                    sig = (entry.st.st_mtime_ns, entry.st.st_size)
                    prev = known.get(entry.rel)
                    if prev == sig:
                        seen.add(entry.rel)
                        continue
                    text = self._read_text(root_fd, entry.rel)
                    if text is None:
                        skipped += 1
                        if prev is not None:
                            self._drop(entry.rel)
                        continue
                    seen.add(entry.rel)
                    self._drop(entry.rel)
                    self._add(entry.rel, text, sig)
                    if prev is None:
                        added += 1
                    else:
                        updated += 1
                removed = 0
                for path in set(known) - seen:
                    self._drop(path)
                    removed += 1
        finally:
            os.close(root_fd)
        return RefreshStats(added, updated, removed, skipped)

    def _read_text(self, root_fd: int, rel: str) -> str | None:
        from duckflow.workspace.files import looks_binary

        parts = rel.split("/")
        try:
            fd = fsops.walk_parent(root_fd, parts[:-1], create=False)
        except OSError:
            return None
        try:
            data = fsops.read_bytes(fd, parts[-1], self.max_bytes)
        except (OSError, ValueError):
            return None
        finally:
            os.close(fd)
        if looks_binary(data):
            return None
        return data.decode("utf-8", "replace")

    def _add(self, rel: str, text: str, sig: tuple[int, int]) -> None:
        lines = text.splitlines()
        for start in range(0, max(len(lines), 1), CHUNK_LINES):
            body = "\n".join(lines[start:start + CHUNK_LINES])
            if not body.strip():
                continue
            cur = self._db.execute("INSERT INTO chunks(path, start_line, body) VALUES (?, ?, ?)",
                                   (rel, start + 1, body))
            for table in ("fts_words", "fts_tri"):
                self._db.execute(f"INSERT INTO {table}(rowid, body) VALUES (?, ?)",
                                 (cur.lastrowid, body))
        self._db.execute("INSERT OR REPLACE INTO files(path, mtime_ns, size) VALUES (?, ?, ?)",
                         (rel, *sig))

    def _drop(self, rel: str) -> None:
        rows = self._db.execute("SELECT id, body FROM chunks WHERE path = ?", (rel,)).fetchall()
        for r in rows:
            for table in ("fts_words", "fts_tri"):
                self._db.execute(f"INSERT INTO {table}({table}, rowid, body) VALUES "
                                 "('delete', ?, ?)", (r["id"], r["body"]))
        self._db.execute("DELETE FROM chunks WHERE path = ?", (rel,))
        self._db.execute("DELETE FROM files WHERE path = ?", (rel,))

    def search(self, query: str, limit: int = 20) -> list[Hit]:
        """The best-matching lines for `query`, best first (BM25)."""
        terms = _WORD.findall(query)
        if not terms:
            raise DuckflowError("the search query has no words", hint="search for a name or phrase")
        words = " OR ".join('"' + " ".join(t.split("_")).replace('"', "") + '"' for t in terms)
        rows = self._query("fts_words", words, limit)
        if not rows:
            tri = [t for t in terms if len(t) >= 3]
            if tri:
                rows = self._query("fts_tri", " OR ".join(f'"{t}"' for t in tri), limit)
        if not rows:
            rows = self._substring(terms, limit)
        hits: list[Hit] = []
        needles = [t.casefold() for t in terms]
        for r in rows:
            line_no, snippet = _best_line(r["body"], needles)
            hits.append(Hit(r["path"], r["start_line"] + line_no, snippet, float(r["score"])))
        return hits

    def _query(self, table: str, match: str, limit: int) -> list[Any]:
        sql = (f"SELECT c.path, c.start_line, c.body, bm25({table}) AS score FROM {table} "
               f"JOIN chunks c ON c.id = {table}.rowid WHERE {table} MATCH ? "
               "ORDER BY score LIMIT ?")
        return list(self._db.execute(sql, (match, limit)).fetchall())


    def _substring(self, terms: list[str], limit: int) -> list[Any]:
        """Terms too short for a trigram (a two-character Japanese word such as 接続 sits inside a
        longer run that unicode61 keeps as one token): a plain substring scan of the chunks."""
        short = [t.casefold() for t in terms if len(t) < 3]
        if not short:
            return []
        where = " OR ".join("instr(lower(body), ?) > 0" for _ in short)
        sql = f"SELECT path, start_line, body, 0.0 AS score FROM chunks WHERE {where} ORDER BY path, start_line LIMIT ?"
        return list(self._db.execute(sql, (*short, limit)).fetchall())


def _best_line(body: str, needles: list[str]) -> tuple[int, str]:
    best, best_score = 0, -1
    lines = body.split("\n")
    for i, line in enumerate(lines):
        low = line.casefold()
        score = sum(low.count(n) for n in needles) + sum(n in low for n in needles) * 10
        if score > best_score:
            best, best_score = i, score
    text = lines[best].strip()
    return best, text[:200] + ("…" if len(text) > 200 else "")


def search_code(root: str | Path, query: str, limit: int = 20, *,
                max_file_bytes: int = MAX_INDEX_BYTES) -> dict[str, Any]:
    """Refresh the index, then search: `{query, results: [{location, snippet}], index}`."""
    index = CodeIndex(root, max_bytes=max_file_bytes)
    try:
        stats = index.refresh()
        hits = index.search(query, limit)
    finally:
        index.close()
    return {
        "query": query,
        "results": [{"location": h.location, "snippet": h.snippet} for h in hits],
        "index": {"added": stats.added, "updated": stats.updated, "removed": stats.removed},
    }
