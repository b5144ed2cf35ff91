"""`duckflow serve -w A` answers only A's approvals. The gate's database in DUCKFLOW_HOME holds
the jobs of every workspace; a job asked in B (by `duckflow run -w B`) used to be listed, shown
(diff and all) and grantable through A's `/v1/approvals`. Real server on 127.0.0.1, real gate
and SQLite, a real destructive command judged by the guard in B."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from duckflow.gate.guarded import guarded_operation
from duckflow.workspace.guard import WorkspaceGuard


def _ask(srv: Any, root: Path) -> str:
    (root / "keep.txt").write_text("precious\n")
    op = guarded_operation("execute_shell", {"command": "rm -f keep.txt"}, WorkspaceGuard(root))
    out = srv.app.state.runner.gate.submit(op)
    assert out.decision == "pending" and out.job_id
    return str(out.job_id)


def test_a_job_of_another_workspace_is_neither_listed_shown_nor_answered(live: Any, tmp_path: Path) -> None:
    srv = live()
    other = tmp_path / "other"
    other.mkdir()
    theirs = _ask(srv, other)
    ours = _ask(srv, srv.workspace)
    listed = [j["job_id"] for j in httpx.get(srv.url + "/v1/approvals", headers=srv.auth).json()["jobs"]]
    assert ours in listed and theirs not in listed
    every = httpx.get(srv.url + "/v1/approvals?all=true", headers=srv.auth).json()["jobs"]
    assert theirs not in [j["job_id"] for j in every]
    r = httpx.get(f"{srv.url}/v1/approvals/{theirs}", headers=srv.auth)
    assert r.status_code == 404 and "another workspace" in r.json()["detail"]
    for verb in ("grant", "deny"):
        r = httpx.post(f"{srv.url}/v1/approvals/{theirs}/{verb}", headers=srv.auth, json={})
        assert r.status_code == 404 and "another workspace" in r.json()["detail"]
    assert srv.app.state.runner.gate.get(theirs).status == "pending"  # left for B's person
    r = httpx.post(f"{srv.url}/v1/approvals/{ours}/deny", headers=srv.auth, json={})
    assert r.status_code == 200 and r.json()["status"] == "denied"


def test_a_session_of_another_workspace_is_not_listed_and_reading_it_is_a_404(live: Any, tmp_path: Path) -> None:
    # GET /v1/sessions/{id} of a session `duckflow run -w B` made answered 500 (a traceback in the log)
    from duckflow.channels.cli.main import main

    other = tmp_path / "other"
    other.mkdir()
    srv = live()
    ours = httpx.post(srv.url + "/v1/sessions", headers=srv.auth).json()["session_id"]
    assert main(["run", "hi", "-w", str(other), "--model", "scripted:demo"]) == 1  # the demo asks for a task
    theirs = srv.app.state.runner.store.latest(str(other.resolve()))
    listed = [s["session_id"] for s in httpx.get(srv.url + "/v1/sessions", headers=srv.auth).json()["sessions"]]
    assert ours in listed and theirs and theirs not in listed
    newest = httpx.get(srv.url + "/v1/sessions?limit=1", headers=srv.auth).json()["sessions"]
    assert [s["session_id"] for s in newest] == [ours]  # a newer session elsewhere does not crowd it out
    for path in ("", "/chunks", "/events"):
        r = httpx.get(f"{srv.url}/v1/sessions/{theirs}{path}", headers=srv.auth)
        assert r.status_code == 404 and "another workspace" in r.json()["detail"], (path, r.text)
    assert httpx.get(f"{srv.url}/v1/sessions/{ours}", headers=srv.auth).status_code == 200
