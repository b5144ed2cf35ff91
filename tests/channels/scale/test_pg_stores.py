"""The PostgreSQL stores against a real server: migrations, the gate's own code on PgGateStore
(jobs, decisions from two gates, auto-approve, masked audit rows), sessions, identities, the event log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from duckflow.channels.shared.pg import MIGRATIONS, Database
from duckflow.channels.shared.pggate import share_gate
from duckflow.gate import AutoApproveScope, Gate, Operation

DOCS = AutoApproveScope(task_types=("design",), tools=("*",), paths=("docs/",), deny_operations=("delete",),
                        max_risk="medium")


@pytest.fixture
def db(database: str) -> Any:
    d = Database(database)
    d.migrate()
    yield d
    d.close()


def _gate(tmp_path: Path, name: str, db: Database) -> Gate:
    gate = Gate(tmp_path / f"{name}.db", audit_path=tmp_path / f"{name}-audit.jsonl")
    share_gate(gate, db)
    return gate


def test_migrations_run_once_and_record_their_version(db: Database) -> None:
    assert db.migrate() == MIGRATIONS[-1][0]  # a second start changes nothing
    rows = db.query("SELECT version FROM schema_version ORDER BY version")
    assert [r["version"] for r in rows] == [v for v, _ in MIGRATIONS]


def test_a_job_asked_through_one_gate_is_decided_through_another(tmp_path: Path, db: Database) -> None:
    asking, answering = _gate(tmp_path, "a", db), _gate(tmp_path, "b", db)
    key = "AKIAIOSFODNN7EXAMPLE"
    out = asking.submit(Operation("write", tool="write_file", paths=("docs/x.md",), size=10, task_type="design"),
                        intent=f"write the guide with {key}")
    assert out.decision == "pending" and out.job_id
    assert [j.job_id for j in answering.pending()] == [out.job_id]
    assert answering.get(out.job_id[:6]).job_id == out.job_id  # a prefix resolves (LIKE)
    answering.decide(out.job_id, True, "bob")
    assert asking.get(out.job_id).status == "granted" and asking.pending() == []
    audit = answering.audit_entries(out.job_id)
    assert [r["event"] for r in audit][:1] == ["approval.requested"]
    assert all(key not in str(r["data"]) for r in audit)  # masked before it is written, as with SQLite
    assert [j.job_id for j in answering.history(limit=5)] == [out.job_id]


def test_auto_approve_switched_on_through_one_gate_counts_on_another_and_off_at_once(
        tmp_path: Path, db: Database) -> None:
    a, b = _gate(tmp_path, "a", db), _gate(tmp_path, "b", db)
    active = a.autoapprove.on(DOCS, ttl_min=30, by="alice")
    assert active.id >= 1 and b.autoapprove.active() is not None
    op = Operation("write", tool="write_file", paths=("docs/y.md",), size=10, task_type="design")
    out = b.submit(op, intent="write")
    assert out.decision == "auto_approved"
    assert b.get(out.job_id or "").decision.by == f"auto:scope#{active.id}"  # type: ignore[union-attr]
    assert b.autoapprove.off(by="bob") == 1
    assert a.autoapprove.active() is None and a.submit(op, intent="write").decision == "pending"


def test_sessions_identities_and_the_event_log(tmp_path: Path, db: Database) -> None:
    from duckflow.channels.shared.pgorchestra import PgEventLog
    from duckflow.channels.shared.pgstores import PgIdentityMap, PgSessionStore
    from duckflow.companion.state import AgentState

    store = PgSessionStore(db)
    state = AgentState("s1", workspace=str(tmp_path))
    state.pending_gate = True
    state.pending_job = {"job_id": "job-1"}
    store.save(state, {"history": [1]})
    loaded = store.load("s1")
    assert loaded is not None and loaded[0].pending_job == {"job_id": "job-1"} and loaded[1] == {"history": [1]}
    assert store.waiting_on("job-1") == "s1" and store.waiting_on("job-2") is None
    assert [s.session_id for s in store.list(workspace=str(tmp_path))] == ["s1"]
    assert store.latest(str(tmp_path)) == "s1" and store.delete("s1") and store.load("s1") is None
    store.close()

    ids = PgIdentityMap(db)
    ids.put("slack:C1:1.2", "s1", "slack")
    ids.put("slack:C1:1.2", "s2", "slack")
    assert ids.get("slack:C1:1.2") == "s2" and [i["identity"] for i in ids.all()] == ["slack:C1:1.2"]

    events = PgEventLog(db)
    events.emit("router.decision", "s1", reason="the key AKIAIOSFODNN7EXAMPLE was pasted", initial_route="CHAT")
    events.emit("loop.stop", "s2", stop_reason="done")
    got = list(events.read(session="s1"))
    assert [e["type"] for e in got] == ["router.decision"] and "AKIAIOSFODNN7EXAMPLE" not in got[0]["reason"]
    assert [e["session_id"] for e in events.read(type="loop.*")] == ["s2"]


def test_a_webhook_event_is_taken_once_by_all_processes(db: Database, database: str) -> None:
    from duckflow.channels.shared.pgstores import PgSeenEvents

    other = Database(database)  # another process's connections
    try:
        mine, theirs = PgSeenEvents(db, keep_s=60), PgSeenEvents(other, keep_s=60)
        assert mine.first("line:e1", now=1000.0)
        assert not theirs.first("line:e1", now=1001.0)  # a redelivery to the other process
        assert not mine.first("line:e1", now=1002.0)
        assert theirs.first("slack:e2", now=1003.0)
        assert theirs.first("line:e1", now=2000.0)  # forgotten only once past keeping (pruned then)
    finally:
        other.close()
