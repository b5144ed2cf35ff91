"""The reference corpus: loading a folder of texts, BM25 search in SQLite, pgvector search.

`RefStore` keeps the corpus in the engine's long-term memory store (`SQLiteMemoryStore`: FTS5
with BM25 ranking, and a trigram index so Japanese, which has no spaces, is found too), one
entry per reference with its path and sha256, re-indexed only when a file changed.
`PgVectorRefStore` is the `[postgres]` variant with the seed's query (cosine similarity,
highest first, `LIMIT k`) over a feature-hashing embedding of character shingles.
"""

from __future__ import annotations

import hashlib
import math
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duckflow.apps.smartao.text import shingles
from duckflow.errors import DuckflowError

MAX_REF_BYTES = 2_000_000
SUFFIXES = (".txt", ".md", ".markdown", ".text")


@dataclass(frozen=True)
class Reference:
    path: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Hit:
    path: str
    score: float
    text: str


def load_references(folder: str | Path) -> list[Reference]:
    """Every .txt/.md file under `folder` (regular files only, no symlinks followed, ≤ 2 MB each)."""
    root = Path(folder)
    if not root.is_dir():
        raise DuckflowError(f"references folder not found: {folder}",
                            hint="pass --refs DIR with the texts to compare against")
    refs: list[Reference] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.lower().endswith(SUFFIXES):
                continue
            path = Path(dirpath) / name
            st = path.lstat()
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_REF_BYTES:
                continue
            refs.append(Reference(str(path), path.read_bytes().decode("utf-8", "replace")))
    return refs


class RefStore:
    """BM25 search over a reference corpus, kept in SQLite (`:memory:` or a file)."""

    def __init__(self, db: str | Path = ":memory:", *, corpus: str = "default") -> None:
        from duckflow.core.memory import SQLiteMemoryStore

        self.store = SQLiteMemoryStore(db)
        self.session = f"refs:{corpus}"

    def index(self, refs: Sequence[Reference]) -> int:
        """Add new or changed references, drop vanished ones; returns how many were (re)indexed."""
        known = {item.metadata.get("path"): item for item in self.store.list(self.session)}
        wanted = {r.path: r for r in refs}
        for path, old in known.items():
            if path not in wanted or old.metadata.get("sha256") != wanted[path].sha256:
                self.store.delete(old.id)
        added = 0
        for ref in refs:
            item = known.get(ref.path)
            if item is None or item.metadata.get("sha256") != ref.sha256:
                self.store.add(self.session, ref.text, {"path": ref.path, "sha256": ref.sha256})
                added += 1
        return added

    def vector_search(self, query: str, k: int = 5) -> list[Hit]:
        """The `k` references that best match `query` (BM25; trigram for CJK)."""
        items = self.store.search(query, session=self.session, limit=k)
        return [Hit(str(i.metadata.get("path", "")), i.score, i.text) for i in items]

    def close(self) -> None:
        self.store.close()


def hashed_embedding(text: str, dim: int = 256) -> list[float]:
    """A unit vector of `dim` buckets counting the text's shingles (feature hashing).

    No model needed: similar wording gives similar vectors, which is what plagiarism and
    reference search ask of the corpus. A learned embedding can be passed instead.
    """
    vec = [0.0] * dim
    for sh in shingles(text):
        h = int.from_bytes(hashlib.blake2b(sh.encode(), digest_size=8).digest(), "big")
        vec[h % dim] += 1.0 if (h >> 63) == 0 else -1.0
    norm = math.sqrt(sum(x * x for x in vec)) or 1.0
    return [x / norm for x in vec]


class PgVectorRefStore:
    """The reference corpus in Postgres + pgvector (`[postgres]` extra)."""

    def __init__(self, dsn: str, *, dim: int = 256, table: str = "smartao_refs",
                 embed: Any = None) -> None:
        from duckflow.core.memory import PgVectorMemoryStore

        self.embed = embed or (lambda t: hashed_embedding(t, dim))
        self.store = PgVectorMemoryStore(dsn, self.embed, dim, table=table)
        self.table = table

    def index(self, refs: Sequence[Reference]) -> int:
        known = {i.metadata.get("path"): i for i in self.store.list("refs", limit=None)}
        n = 0
        for ref in refs:
            item = known.get(ref.path)
            if item is not None and item.metadata.get("sha256") == ref.sha256:
                continue
            if item is not None:
                self.store.delete(item.id)
            self.store.add("refs", ref.text, {"path": ref.path, "sha256": ref.sha256})
            n += 1
        return n

    def vector_search(self, query: str, k: int = 5) -> list[Hit]:
        """`SELECT …, cos_sim … ORDER BY cos_sim DESC LIMIT k`, as the seed writes it."""
        vec = "[" + ",".join(repr(float(x)) for x in self.embed(query)) + "]"
        rows = self.store._conn.execute(
            f"SELECT metadata->>'path', 1 - (embedding <=> %s::vector) AS cos_sim, text "
            f"FROM {self.table} WHERE session = 'refs' ORDER BY cos_sim DESC LIMIT %s",
            (vec, k),
        ).fetchall()
        return [Hit(str(r[0]), float(r[1]), str(r[2])) for r in rows]

    def close(self) -> None:
        self.store.close()
