"""The router in front of the companion, live: `duckflow run` / `duckflow chat` with a Worker on a 127.0.0.1 Ollama."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from duckflow.channels.cli.main import main as cli
from duckflow.llm.ollama import OllamaModel
from duckflow.orchestra.health import OllamaReadiness

from .conftest import worker_json
from .ollama_server import FakeOllama

PATCH = "\n".join(["--- a/app.py", "+++ b/app.py", "@@ -1,2 +1,2 @@", " def add(a, b):", "-    return a - b",
                   "+    return a + b", ""])


def configure(home: Path, monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    cfg = home / "config.toml"
    cfg.write_text('[routing.llm]\nworker_provider = "ollama"\nworker_model = "worker-v1:latest"\n'
                   'coder2_provider = "ollama"\ncoder2_model = "worker-v1:latest"\n', encoding="utf-8")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
    monkeypatch.setenv("OLLAMA_HOST", url)


def test_run_routes_plan_to_the_worker_and_logs_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOllama() as server:
        configure(tmp_path, monkeypatch, server.url)
        server.replies = [worker_json("1. freeze the branch\n2. tag v1.0")]
        ws = tmp_path / "ws"
        ws.mkdir()
        rc = cli(["run", "リリースの段取りを考えて", "-w", str(ws), "--model", "scripted:demo"])
        out = capsys.readouterr().out
        assert rc == 0 and "freeze the branch" in out and "段取り" not in out.split("freeze")[0][-5:]
        assert "» Planning this step by step." in out  # the declaration line (route changed from CHAT)
        body = server.chat_bodies[0]
        assert body["keep_alive"] == -1 and body["options"]["num_ctx"] == 8192
        assert server.hits["/api/ps"] == 1  # the readiness check ran before the message
        from duckflow.companion.store import SessionStore

        store = SessionStore()
        state, _ = store.load(store.latest())  # type: ignore[arg-type, misc]
        store.close()
        assert state.exchanges[-1].user == "リリースの段取りを考えて" and "freeze" in state.exchanges[-1].reply
        assert cli(["events", "--type", "loop.stop", "--json"]) == 0
        stop = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert stop["stop_reason"] == "done" and stop["final_route"] == "PLAN"


def test_run_code2_proposes_and_auto_approve_workspace_lets_the_worker_apply(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOllama() as server:
        configure(tmp_path, monkeypatch, server.url)
        server.replies = [json.dumps({"job_id": "j", "plan": "fix add", "patch": PATCH, "risk": "low",
                                      "need_approval": True})]
        ws = tmp_path / "ws"
        ws.mkdir()
        (ws / "app.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
        rc = cli(["run", "/code2 fix add in app.py", "-w", str(ws), "--model", "scripted:demo", "--json"])
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert rc == 4 and out["ending"] == "approval" and "return a - b" in (ws / "app.py").read_text()
        server.replies = [json.dumps({"job_id": "j", "plan": "fix add", "patch": PATCH, "risk": "low",
                                      "need_approval": True})]
        rc = cli(["run", "/code2 fix add in app.py", "-w", str(ws), "--model", "scripted:demo",
                  "--auto-approve-workspace", "--json"])
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert rc == 0 and out["ok"] and "return a + b" in (ws / "app.py").read_text()
        assert cli(["events", "--type", "approval.*", "--json"]) == 0
        kinds = [json.loads(x)["type"] for x in capsys.readouterr().out.strip().splitlines()]
        assert kinds == ["approval.requested", "approval.requested", "approval.auto_approved"]


def test_chat_local_then_code_is_refused_with_how_to_lift_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("/local\n/code2 fix app.py\n/cloud\n"))
    rc = cli(["chat", "-w", str(tmp_path), "--model", "scripted:demo", "--new"])
    out = " ".join(capsys.readouterr().out.split())
    assert rc == 0
    assert "Local-only mode on" in out and "Send /cloud to lift it" in out and "Local-only mode off" in out


async def test_ollama_readiness_checks_once_per_window_and_restarts_an_unloaded_model(tmp_path: Path) -> None:
    now = [0.0]
    with FakeOllama() as server:
        flag = tmp_path / "loaded"
        server.loaded_flag = flag
        flag.touch()
        restart = f"{sys.executable} -c \"open(r'{flag}', 'w').close()\""
        model = OllamaModel("worker-v1:latest", base_url=server.url, restart_command=restart, restart_wait_s=10)
        ready = OllamaReadiness(clock=lambda: now[0])
        assert await ready.ensure(model) == "ok"
        assert await ready.ensure(model) == "ok" and server.hits["/api/ps"] == 1  # cached for 1.5 s
        flag.unlink()  # the model was unloaded (keep_alive -1 should have kept it)
        now[0] += 2.0
        assert await ready.ensure(model) == "restarted" and flag.exists() and model.restarts == 1
    assert await OllamaReadiness().ensure(object()) == "skipped"


def test_the_chat_role_model_makes_the_companions_decision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOllama(model="chat-v1:latest") as server:
        cfg = tmp_path / "config.toml"
        cfg.write_text('[routing.llm]\nchat_alias = "Mio"\nchat_provider = "ollama"\n'
                       'chat_model = "ollama/chat-v1:latest"\n', encoding="utf-8")
        monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        cli(["run", "hello there", "-w", str(tmp_path), "--max-turns", "1", "--json"])
        capsys.readouterr()
        assert server.chat_bodies and server.chat_bodies[0]["model"] == "chat-v1:latest"
        assert server.hits["/api/ps"] == 1  # the readiness check before the message


async def test_a_cloud_coder_gets_secrets_masked(make_orch: Any) -> None:
    from duckflow.llm.ollama import OllamaModel

    with FakeOllama() as server:
        server.replies = ['{"job_id": "j", "plan": "p", "patch": "not a diff", "risk": "low"}']
        cloud = OllamaModel("worker-v1:latest", base_url=server.url, is_local=False)
        orch = make_orch({"coder1": cloud})
        (orch.workspace / "settings.py").write_text('API_KEY = "sk-live-1234567890abcdefghijklmnop"\n')
        await orch.handle("/code1 rotate the key in settings.py")
        sent = json.dumps(server.chat_bodies)
        assert "settings.py" in sent and "sk-live-1234567890abcdefghijklmnop" not in sent


def test_events_command_filters_and_refuses_unknown_types(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from duckflow.orchestra.events import EventLog, default_events_path

    log = EventLog(default_events_path())
    log.emit("router.decision", "a", initial_route="PLAN", token="ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    log.emit("loop.stop", "b", stop_reason="max_loops")
    assert cli(["events", "--session", "a", "--json"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [r["type"] for r in rows] == ["router.decision"] and "ghp_abcdefghij" not in json.dumps(rows)
    assert cli(["events", "--type", "nonsense"]) == 1
    assert "unknown event type" in capsys.readouterr().err


def test_events_reads_past_a_line_cut_inside_a_character(capsys: pytest.CaptureFixture[str]) -> None:
    # a crash mid-write can cut the last line inside a multi-byte character (Japanese text)
    from duckflow.orchestra.events import EventLog, default_events_path

    log = EventLog(default_events_path())
    log.emit("router.decision", "a", initial_route="CHAT", reason="こんにちは")
    with log.path.open("ab") as fh:
        fh.write('{"type": "loop.stop", "session_id": "a", "reason": "止め'.encode()[:-1])
    assert cli(["events", "--json"]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(x)["type"] for x in out.splitlines()] == ["router.decision"] and err == ""


def test_route_uses_a_configured_classifier_once_and_falls_back_when_it_is_unreachable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with FakeOllama() as server:
        cfg = tmp_path / "config.toml"
        cfg.write_text('[routing.classifier]\nmodel = "ollama:worker-v1:latest"\n', encoding="utf-8")
        monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        server.replies = ['{"route": "PLAN", "confidence": 0.75, "reason": "organising", "evidence": ["move"]}']
        assert cli(["route", "we need to move the office next month", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert (out["primary_route"], out["source"], out["confidence"]) == ("PLAN", "classifier", 0.75)
        assert len(server.chat_bodies) == 1
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{port}")
    assert cli(["route", "we need to move the office next month", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["primary_route"], out["source"]) == ("CHAT", "fallback")


async def test_channel_entry_point_runs_the_whole_turn(tmp_path: Path) -> None:
    from duckflow.config import load_config
    from duckflow.llm.scripted import ScriptedModel, reply
    from duckflow.orchestra import InputMessage, handle_async

    chat = ScriptedModel([reply("DELEGATE: RESEARCH\nTASK: find sources on tea")])
    worker = ScriptedModel([reply(worker_json("three sources"))])
    turn = await handle_async(InputMessage(channel="slack", session_id="T1", user_text="tea?"), workspace=tmp_path,
                              config=load_config(env={}), models={"chat": chat, "worker": worker})
    assert turn.action == "reply" and turn.text.startswith("three sources")


def test_companion_approvals_reach_the_event_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli(["run", "Create hello.py", "-w", str(tmp_path), "--model", "scripted:demo", "--json"])
    job = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["pending"]["job_id"]
    assert rc == 4
    assert cli(["events", "--type", "approval.requested", "--json"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.strip().splitlines()]
    assert rows[-1]["job_id"] == job and rows[-1]["approval_status"] == "pending" and rows[-1]["final_route"] == "CODE"


def test_chat_shows_the_coders_diff_and_yes_applies_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import io

    with FakeOllama() as server:
        configure(tmp_path, monkeypatch, server.url)
        server.replies = [json.dumps({"job_id": "j", "plan": "fix the sign", "patch": PATCH, "risk": "low",
                                      "need_approval": True})]
        ws = tmp_path / "ws"
        ws.mkdir()
        (ws / "app.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
        monkeypatch.setattr(sys, "stdin", io.StringIO("/code2 fix add in app.py\nmaybe\nyes\n"))
        assert cli(["chat", "-w", str(ws), "--model", "scripted:demo", "--new"]) == 0
        out = " ".join(capsys.readouterr().out.split())
        # the card says what changes and shows the diff; "maybe" is not an answer, "yes" applies it
        assert "Coder2 proposes a change: fix the sign" in out and "Edit app.py — +1 −1 lines" in out
        assert "+ return a + b" in out and "A change waits for your approval: Apply the Coder's change? y(es) / n(o)" in out
        assert "Applied job" in out and "return a + b" in (ws / "app.py").read_text()


def test_run_resume_applies_a_coder_job_granted_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 26: grant with `duckflow approvals grant ID`, then `run --resume` applies the patch and logs the grant."""
    with FakeOllama() as server:
        configure(tmp_path, monkeypatch, server.url)
        server.replies = [json.dumps({"job_id": "j", "plan": "fix add", "patch": PATCH, "risk": "low",
                                      "need_approval": True})]
        ws = tmp_path / "ws"
        ws.mkdir()
        (ws / "app.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
        assert cli(["run", "/code2 fix add in app.py", "-w", str(ws), "--model", "scripted:demo"]) == 4
        err = capsys.readouterr().err
        hint = err[err.index("duckflow approvals grant "):].split("`")[0]
        job = hint.split()[-1]
        assert len(job) == 8 and job != "JOB"
        assert cli(["approvals", "grant", job]) == 0
        capsys.readouterr()
        assert "return a - b" in (ws / "app.py").read_text()  # granted, not applied yet
        assert cli(["run", "--resume", "-w", str(ws), "--model", "scripted:demo"]) == 0
        assert "Applied job" in capsys.readouterr().out
        assert "return a + b" in (ws / "app.py").read_text()
        assert cli(["events", "--type", "approval.*", "--json"]) == 0
        kinds = [json.loads(x)["type"] for x in capsys.readouterr().out.strip().splitlines()]
        assert kinds == ["approval.requested", "approval.granted"]


def test_run_exits_non_zero_when_the_worker_loop_stops_at_max_loops(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOllama() as server:
        configure(tmp_path, monkeypatch, server.url)
        server.replies = [worker_json("step", needs_next_loop=True) for _ in range(6)]
        ws = tmp_path / "ws"
        ws.mkdir()
        rc = cli(["run", "リリースの段取りを考えて", "-w", str(ws), "--model", "scripted:demo", "--json"])
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert cli(["events", "--type", "loop.stop", "--json"]) == 0
        stop = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert stop["stop_reason"] == "max_loops"
        assert rc == 1 and not out["ok"], out


def test_analyze_results_are_kept_as_structured_data_for_later_turns_and_status(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 003 §9: an ANALYZE result is kept in one store; the next turn's Worker and `duckflow status` read it."""
    with FakeOllama() as server:
        configure(tmp_path, monkeypatch, server.url)
        server.replies = [worker_json("the loop in app.py reads the file 1000 times", next_actions=["cache the read"]),
                          worker_json("caching the read removes 999 reads")]
        ws = tmp_path / "ws"
        ws.mkdir()
        assert cli(["run", "/analyze why is app.py slow", "-w", str(ws), "--model", "scripted:demo"]) == 0
        capsys.readouterr()
        assert cli(["status", "-w", str(ws), "--json"]) == 0
        kept = json.loads(capsys.readouterr().out)["analyses"]
        assert kept[0]["result"] == "the loop in app.py reads the file 1000 times"
        assert kept[0]["next_actions"] == ["cache the read"] and kept[0]["task"] == "why is app.py slow"
        assert cli(["status", "-w", str(ws)]) == 0
        assert "Last analysis" in capsys.readouterr().out
        assert cli(["run", "/analyze what would caching change", "-w", str(ws), "--model", "scripted:demo"]) == 0
        second = json.loads(server.chat_bodies[1]["messages"][-1]["content"])
        assert "the loop in app.py reads the file 1000 times" in second["context"]  # the next turn reads it
