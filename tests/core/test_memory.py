"""Short-term memory windows and the SQLite (FTS5/BM25) long-term store."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from duckflow.core.memory import MemoryStore, ShortTermMemory, SQLiteMemoryStore


def test_short_term_memory_keeps_the_last_items_per_session() -> None:
    mem: ShortTermMemory[str] = ShortTermMemory(3)
    for i in range(5):
        mem.add("a", f"a{i}")
    mem.add("b", "b0")
    assert mem.get("a") == ["a2", "a3", "a4"]
    assert mem.get("a", last=2) == ["a3", "a4"] and mem.get("a", last=0) == []
    assert mem.get("b") == ["b0"] and mem.get("missing") == []
    mem.clear("a")
    assert mem.get("a") == [] and mem.sessions() == ["b"]
    with pytest.raises(ValueError):
        ShortTermMemory(0)


def test_short_term_memory_bounds_the_number_of_sessions() -> None:
    mem: ShortTermMemory[int] = ShortTermMemory(2, max_sessions=3)
    for s in ("s1", "s2", "s3"):
        mem.add(s, 1)
    mem.add("s1", 2)  # s1 becomes the most recent
    mem.add("s4", 1)  # evicts s2, the least recently used
    assert sorted(mem.sessions()) == ["s1", "s3", "s4"] and len(mem) == 3


def test_short_term_memory_is_thread_safe() -> None:
    mem: ShortTermMemory[int] = ShortTermMemory(1000)

    def work(n: int) -> None:
        for i in range(500):
            mem.add("s", n * 1000 + i)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert len(mem.get("s")) == 1000


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteMemoryStore]:
    s = SQLiteMemoryStore(tmp_path / "mem" / "memory.db")
    yield s
    s.close()


def test_sqlite_store_satisfies_the_protocol(store: SQLiteMemoryStore) -> None:
    assert isinstance(store, MemoryStore)


def test_search_ranks_by_bm25_and_filters_by_session(store: SQLiteMemoryStore) -> None:
    a = store.add("s1", "The deploy script uses rsync to copy the build to the server", {"src": "chat"})
    b = store.add("s1", "rsync rsync rsync: the deploy uses rsync with --delete")
    store.add("s1", "Lunch is at noon on Fridays")
    c = store.add("s2", "In session two the deploy is done with scp")
    hits = store.search("rsync deploy")
    assert [h.id for h in hits[:2]] == [b, a]
    assert hits[0].score >= hits[1].score > 0
    assert hits[1].metadata == {"src": "chat"}
    assert [h.id for h in store.search("deploy", session="s2")] == [c]
    assert store.search("nothing matches this") == []
    assert store.search("   ") == [] and store.search("rsync", limit=0) == []


def test_query_syntax_is_not_interpreted(store: SQLiteMemoryStore) -> None:
    store.add("s", 'he said "NEAR(a b)" AND OR NOT * ^ col:value')
    assert len(store.search('NEAR( "a AND OR -x col:value')) == 1


def test_japanese_text_is_found_by_substring(store: SQLiteMemoryStore) -> None:
    i = store.add("s", "明日の会議は東京本社で行います")
    store.add("s", "今日は晴れです")
    assert [h.id for h in store.search("東京本社")] == [i]


def test_list_delete_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    s = SQLiteMemoryStore(path)
    ids = [s.add("s", f"note {i}") for i in range(4)]
    s.add("other", "note elsewhere")
    assert [m.text for m in s.list("s")] == ["note 0", "note 1", "note 2", "note 3"]
    assert [m.id for m in s.list("s", limit=2)] == ids[2:]
    assert s.delete(ids[1]) is True and s.delete(ids[1]) is False
    s.close()
    again = SQLiteMemoryStore(path)
    assert [m.text for m in again.list("s")] == ["note 0", "note 2", "note 3"]
    assert all(h.id != ids[1] for h in again.search("note"))
    again.close()
