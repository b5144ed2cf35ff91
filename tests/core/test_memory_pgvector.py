"""PgVectorMemoryStore: errors a person meets, and a real round trip when a pgvector Postgres is given.

The round trip runs only with DUCKFLOW_TEST_PG_DSN pointing at a Postgres where
`CREATE EXTENSION vector` works; it is skipped otherwise (no such server in CI).
"""

from __future__ import annotations

import math
import os
import sys
import uuid

import pytest

from duckflow.core.memory import MemoryStore, PgVectorMemoryStore
from duckflow.errors import DuckflowError


def _embed(text: str) -> list[float]:
    """A tiny deterministic bag-of-letters embedding (26 dims), enough to rank by topic."""
    vec = [0.0] * 26
    for ch in text.lower():
        if "a" <= ch <= "z":
            vec[ord(ch) - 97] += 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def test_missing_extra_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(DuckflowError) as err:
        PgVectorMemoryStore("postgresql://x", _embed, 26)
    assert "duckflow-agent[postgres]" in str(err.value)


def test_unreachable_server_is_a_clear_error() -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(DuckflowError) as err:
        PgVectorMemoryStore("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2", _embed, 26)
    assert "cannot connect to Postgres" in str(err.value)


def test_bad_table_name_is_refused() -> None:
    with pytest.raises(ValueError):
        PgVectorMemoryStore("postgresql://x", _embed, 26, table="x; DROP TABLE y")


@pytest.mark.skipif(not os.environ.get("DUCKFLOW_TEST_PG_DSN"), reason="no pgvector Postgres (set DUCKFLOW_TEST_PG_DSN)")
def test_round_trip_against_a_real_pgvector_server() -> None:
    table = "t_" + uuid.uuid4().hex[:12]
    store = PgVectorMemoryStore(os.environ["DUCKFLOW_TEST_PG_DSN"], _embed, 26, table=table)
    try:
        assert isinstance(store, MemoryStore)
        a = store.add("s", "zebra zebra zoo", {"k": 1})
        store.add("s", "apple banana")
        store.add("t", "zebra crossing")
        hits = store.search("zebra zoo", session="s", limit=2)
        assert hits[0].id == a and hits[0].metadata == {"k": 1} and hits[0].score > hits[1].score
        assert [m.text for m in store.list("s")] == ["zebra zebra zoo", "apple banana"]
        assert store.delete(a) and not store.delete(a)
    finally:
        store._conn.execute(f"DROP TABLE IF EXISTS {table}")
        store.close()
