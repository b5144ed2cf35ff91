"""Agent memory: a bounded short-term window per session and long-term stores (SQLite FTS5, pgvector).

- `ShortTermMemory(maxlen)`: the last `maxlen` items of each session, in order.
- `MemoryStore`: the long-term interface — `add`, `search`, `delete`, `list`.
- `SQLiteMemoryStore(path)`: the default; full-text search with FTS5 ranked by BM25, plus
  a trigram index so Japanese and other unsegmented text is found by substring.
- `PgVectorMemoryStore(dsn, embed, dim)`: cosine similarity over embeddings in Postgres
  with pgvector (the `[postgres]` extra; psycopg and pgvector are imported only here).
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from duckflow.errors import DuckflowError

T = TypeVar("T")


class ShortTermMemory(Generic[T]):
    """The last `maxlen` items per session (a bounded deque each); thread-safe."""

    def __init__(self, maxlen: int = 50, *, max_sessions: int = 10_000) -> None:
        if maxlen < 1:
            raise ValueError("maxlen must be at least 1")
        self.maxlen = maxlen
        self.max_sessions = max_sessions
        self._items: dict[str, deque[T]] = {}
        self._lock = threading.Lock()

    def add(self, session: str, item: T) -> None:
        with self._lock:
            window = self._items.pop(session, None)
            if window is None:
                window = deque(maxlen=self.maxlen)
                if len(self._items) >= self.max_sessions:  # forget the least recently used
                    self._items.pop(next(iter(self._items)))
            window.append(item)
            self._items[session] = window

    def get(self, session: str, last: int | None = None) -> list[T]:
        with self._lock:
            items = list(self._items.get(session, ()))
        return items if last is None else items[-last:] if last > 0 else []

    def clear(self, session: str) -> None:
        with self._lock:
            self._items.pop(session, None)

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        return len(self._items)


@dataclass(frozen=True)
class MemoryItem:
    id: int
    session: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    score: float = 0.0  # search relevance, higher is better (0 for list())


# aliases: the stores' `list` method would shadow the builtin inside their class bodies
ItemList = list[MemoryItem]
RowList = list[sqlite3.Row]


@runtime_checkable
class MemoryStore(Protocol):
    """Long-term memory. `search` returns the best matches first."""

    def add(self, session: str, text: str, metadata: dict[str, Any] | None = None) -> int: ...

    def search(self, query: str, *, session: str | None = None, limit: int = 5) -> ItemList: ...

    def delete(self, item_id: int) -> bool: ...

    def list(self, session: str, *, limit: int | None = None) -> ItemList: ...


_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY,
    session TEXT NOT NULL,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS memories_session ON memories(session, id);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    text, content='memories', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_tri USING fts5(
    text, content='memories', content_rowid='id', tokenize='trigram'
);
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, text) VALUES (new.id, new.text);
    INSERT INTO memories_tri(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO memories_tri(memories_tri, rowid, text) VALUES ('delete', old.id, old.text);
END;
"""

_WORD = re.compile(r"\w+", re.UNICODE)


def _fts_query(query: str) -> str | None:
    """Words of `query`, each quoted (no FTS5 syntax gets through), any of them may match."""
    words = _WORD.findall(query)
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words) or None


class SQLiteMemoryStore:
    """Long-term memory in SQLite: BM25-ranked FTS5 search, trigram fallback for CJK text."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        from duckflow.store.sqlite import connect

        self.path = path
        self._conn = connect(path)
        self._lock = threading.Lock()
        try:
            self._conn.executescript(_SCHEMA)
        except sqlite3.OperationalError as exc:
            raise DuckflowError(
                f"this SQLite ({sqlite3.sqlite_version}) cannot build the memory index: {exc}",
                hint="Duckflow needs SQLite with FTS5 and the trigram tokenizer (3.34 or newer)",
            ) from exc

    def add(self, session: str, text: str, metadata: dict[str, Any] | None = None) -> int:
        with self._lock, self._conn:
            cur = self._conn.execute(
                "INSERT INTO memories(session, text, metadata, created_at) VALUES (?, ?, ?, ?)",
                (session, text, json.dumps(metadata or {}, ensure_ascii=False), time.time()),
            )
        return int(cur.lastrowid or 0)

    def search(self, query: str, *, session: str | None = None, limit: int = 5) -> ItemList:
        match = _fts_query(query)
        if match is None or limit <= 0:
            return []
        where = "AND m.session = ?" if session is not None else ""
        params: tuple[Any, ...] = (match, session, limit) if session is not None else (match, limit)
        rows = self._query(
            "SELECT m.*, bm25(memories_fts) AS rank FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid "
            f"WHERE memories_fts MATCH ? {where} ORDER BY rank LIMIT ?",
            params,
        )
        if len(rows) < limit:
            seen = {r["id"] for r in rows}
            tri = self._trigram(query, session, limit)
            rows += [r for r in tri if r["id"] not in seen][: limit - len(rows)]
        return [self._item(r, score=-float(r["rank"])) for r in rows]

    def _trigram(self, query: str, session: str | None, limit: int) -> RowList:
        terms = [w for w in _WORD.findall(query) if len(w) >= 3]
        if not terms:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in terms)
        where = "AND m.session = ?" if session is not None else ""
        params: tuple[Any, ...] = (match, session, limit) if session is not None else (match, limit)
        return self._query(
            "SELECT m.*, bm25(memories_tri) AS rank FROM memories_tri JOIN memories m ON m.id = memories_tri.rowid "
            f"WHERE memories_tri MATCH ? {where} ORDER BY rank LIMIT ?",
            params,
        )

    def delete(self, item_id: int) -> bool:
        with self._lock, self._conn:
            cur = self._conn.execute("DELETE FROM memories WHERE id = ?", (item_id,))
        return cur.rowcount > 0

    def list(self, session: str, *, limit: int | None = None) -> ItemList:
        sql = "SELECT * FROM memories WHERE session = ? ORDER BY id"
        params: tuple[Any, ...] = (session,)
        if limit is not None:
            sql = f"SELECT * FROM ({sql} DESC LIMIT ?) ORDER BY id"
            params = (session, limit)
        return [self._item(r) for r in self._query(sql, params)]

    def close(self) -> None:
        self._conn.close()

    def _query(self, sql: str, params: Sequence[Any]) -> RowList:
        with self._lock:
            return list(self._conn.execute(sql, params))

    @staticmethod
    def _item(row: sqlite3.Row, score: float = 0.0) -> MemoryItem:
        return MemoryItem(row["id"], row["session"], row["text"], json.loads(row["metadata"]),
                          float(row["created_at"]), score)


Embedder = Callable[[str], Sequence[float]]


class PgVectorMemoryStore:
    """Long-term memory in Postgres with pgvector: cosine similarity over `embed(text)`.

    Needs the `[postgres]` extra (psycopg 3) and the `vector` extension in the database.
    `embed` turns text into a vector of `dim` floats (a local embedding model). Vectors
    travel in pgvector's text form (`'[0.1,0.2]'::vector`), so numpy is not needed.
    """

    def __init__(self, dsn: str, embed: Embedder, dim: int, *, table: str = "duckflow_memories") -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", table):
            raise ValueError(f"invalid table name: {table!r}")
        try:
            import psycopg
        except ImportError as exc:
            raise DuckflowError(
                "the pgvector memory store needs psycopg and pgvector",
                hint="pip install 'duckflow-agent[postgres]'",
            ) from exc
        self.embed, self.dim, self.table = embed, dim, table
        try:
            self._conn = psycopg.connect(dsn, autocommit=True)
        except psycopg.Error as exc:
            raise DuckflowError(f"cannot connect to Postgres: {exc}", hint="check the DSN and that the server runs") from exc
        try:
            self._conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except psycopg.Error as exc:
            self._conn.close()
            raise DuckflowError(
                f"the database has no pgvector extension: {exc}",
                hint="install pgvector on the server (https://github.com/pgvector/pgvector) or use SQLiteMemoryStore",
            ) from exc
        self._conn.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (id BIGSERIAL PRIMARY KEY, session TEXT NOT NULL, "
            f"text TEXT NOT NULL, metadata JSONB NOT NULL DEFAULT '{{}}', created_at DOUBLE PRECISION NOT NULL, "
            f"embedding vector({dim}) NOT NULL)"
        )
        self._conn.execute(f"CREATE INDEX IF NOT EXISTS {table}_session ON {table}(session, id)")
        self._lock = threading.Lock()

    def _vector(self, text: str) -> str:
        vec = [float(x) for x in self.embed(text)]
        if len(vec) != self.dim:
            raise ValueError(f"embedding has {len(vec)} dimensions, expected {self.dim}")
        return "[" + ",".join(repr(x) for x in vec) + "]"

    def add(self, session: str, text: str, metadata: dict[str, Any] | None = None) -> int:
        with self._lock:
            row = self._conn.execute(
                f"INSERT INTO {self.table}(session, text, metadata, created_at, embedding) "
                "VALUES (%s, %s, %s, %s, %s::vector) RETURNING id",
                (session, text, json.dumps(metadata or {}), time.time(), self._vector(text)),
            ).fetchone()
        return int(row[0]) if row else 0

    def search(self, query: str, *, session: str | None = None, limit: int = 5) -> ItemList:
        where = "WHERE session = %s" if session is not None else ""
        vec = self._vector(query)
        params: tuple[Any, ...] = (vec, session, vec, limit) if session is not None else (vec, vec, limit)
        with self._lock:
            rows = self._conn.execute(
                f"SELECT id, session, text, metadata, created_at, 1 - (embedding <=> %s::vector) AS score "
                f"FROM {self.table} {where} ORDER BY embedding <=> %s::vector LIMIT %s",
                params,
            ).fetchall()
        return [MemoryItem(r[0], r[1], r[2], dict(r[3]), float(r[4]), float(r[5])) for r in rows]

    def delete(self, item_id: int) -> bool:
        with self._lock:
            cur = self._conn.execute(f"DELETE FROM {self.table} WHERE id = %s", (item_id,))
        return cur.rowcount > 0

    def list(self, session: str, *, limit: int | None = None) -> ItemList:
        with self._lock:
            rows = self._conn.execute(
                f"SELECT id, session, text, metadata, created_at FROM {self.table} WHERE session = %s "
                "ORDER BY id DESC LIMIT %s",
                (session, limit),
            ).fetchall()
        return [MemoryItem(r[0], r[1], r[2], dict(r[3]), float(r[4])) for r in reversed(rows)]

    def close(self) -> None:
        self._conn.close()
