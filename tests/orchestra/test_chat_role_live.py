"""The Chat role live through the CLI's front door: it answers CHAT, hands work on with DELEGATE, and words
the Worker's result (seed 003 §1, §2.6) — models on a 127.0.0.1 Ollama, the companion on the scripted demo."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main as cli

from .conftest import worker_json
from .ollama_server import FakeOllama


def configure(home: Path, monkeypatch: pytest.MonkeyPatch, url: str, *, worker: bool = True) -> Path:
    cfg = home / "config.toml"
    text = '[routing.llm]\nchat_alias = "Mio"\nchat_provider = "ollama"\nchat_model = "worker-v1:latest"\n'
    if worker:
        text += 'worker_provider = "ollama"\nworker_model = "worker-v1:latest"\n'
    cfg.write_text(text, encoding="utf-8")
    monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
    monkeypatch.setenv("OLLAMA_HOST", url)
    ws = home / "ws"
    ws.mkdir()
    return ws


def events(capsys: pytest.CaptureFixture[str], kind: str) -> list[dict[str, object]]:
    capsys.readouterr()
    assert cli(["events", "--type", kind, "--json"]) == 0
    return [json.loads(x) for x in capsys.readouterr().out.strip().splitlines() if x.strip()]


def test_the_chat_role_answers_a_conversation_and_the_companion_is_not_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOllama() as server:
        ws = configure(tmp_path, monkeypatch, server.url)
        server.replies = ["Hello! I'm Mio. What shall we work on?"]
        rc = cli(["run", "hi, who are you?", "-w", str(ws), "--model", "scripted:demo"])
        out = capsys.readouterr().out
        assert rc == 0 and "I'm Mio" in out and "Done." in out
        assert len(server.chat_bodies) == 1  # one Chat call; the scripted companion said nothing
        assert "scripted demo" not in out
        system = server.chat_bodies[0]["messages"][0]["content"]
        assert "You are Mio, the Chat role" in system and "DELEGATE:" in system
        final = events(capsys, "final.route")[-1]
        assert final["final_route"] == "CHAT" and final["stop_reason"] == "done"


def test_chat_delegates_planning_to_the_worker_and_writes_the_final_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOllama() as server:
        ws = configure(tmp_path, monkeypatch, server.url)
        server.replies = ["DELEGATE: PLAN\nTASK: plan the v1.0 release steps",
                          worker_json("1. freeze the branch\n2. tag v1.0"),
                          "Here is the plan: first freeze the branch, then tag v1.0."]
        rc = cli(["run", "how should we ship v1.0?", "-w", str(ws), "--model", "scripted:demo", "--json"])
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert rc == 0 and out["ok"] and out["message"] == "Here is the plan: first freeze the branch, then tag v1.0."
        worker_call, final_call = server.chat_bodies[1], server.chat_bodies[2]
        assert "plan the v1.0 release steps" in json.dumps(worker_call["messages"])  # the TASK line went on
        assert "freeze the branch" in final_call["messages"][0]["content"]  # Chat words the Worker's result
        override = events(capsys, "route.override")[-1]
        assert override["source"] == "chat_delegate" and override["final_route"] == "PLAN"


def test_chat_delegates_code_to_the_companion_which_asks_before_writing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOllama() as server:
        ws = configure(tmp_path, monkeypatch, server.url)
        server.replies = ["DELEGATE: CODE\nTASK: create hello.py"]
        rc = cli(["run", "could you make me a hello script?", "-w", str(ws), "--model", "scripted:demo", "--json"])
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert rc == 4 and out["ending"] == "approval" and out["pending"]["job_id"]
        assert not (ws / "hello.py").exists()  # the companion's write waits at the gate
        assert len(server.chat_bodies) == 1
        requested = events(capsys, "approval.requested")[-1]
        assert requested["job_id"] == out["pending"]["job_id"] and requested["source"] == "companion"


def test_chat_sees_the_conversation_so_far(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOllama() as server:
        ws = configure(tmp_path, monkeypatch, server.url)
        server.replies = ["Nice to meet you, Aki.", "You told me your name is Aki."]
        monkeypatch.setattr(sys, "stdin", io.StringIO("my name is Aki\nwhat is my name?\n"))
        assert cli(["chat", "-w", str(ws), "--model", "scripted:demo", "--new"]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert "Nice to meet you, Aki." in out and "You told me your name is Aki." in out
        second = server.chat_bodies[1]["messages"]
        assert [m["role"] for m in second[1:]] == ["user", "assistant", "user"]
        assert second[1]["content"] == "my name is Aki" and "Nice to meet you" in second[2]["content"]


def test_without_a_worker_model_a_delegated_plan_goes_to_the_companion(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOllama() as server:
        ws = configure(tmp_path, monkeypatch, server.url, worker=False)
        server.replies = ["DELEGATE: PLAN\nTASK: create hello.py"]
        rc = cli(["run", "set up a hello script", "-w", str(ws), "--model", "scripted:demo", "--json"])
        out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert rc == 4 and out["ending"] == "approval"  # the companion took it and asks before writing
        final = events(capsys, "final.route")[-1]
        assert final["stop_reason"] == "companion" and "no Worker model" in str(final["error_reason"])


def test_no_with_words_to_a_coder_asks_it_again_with_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    patch = "\n".join(["--- a/app.py", "+++ b/app.py", "@@ -1,2 +1,2 @@", " def add(a, b):", "-    return a - b",
                       "+    return {}", ""])
    with FakeOllama() as server:
        cfg = tmp_path / "config.toml"
        cfg.write_text('[routing.llm]\ncoder2_provider = "ollama"\ncoder2_model = "worker-v1:latest"\n', encoding="utf-8")
        monkeypatch.setenv("DUCKFLOW_CONFIG", str(cfg))
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        ws = tmp_path / "ws"
        ws.mkdir()
        (ws / "app.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
        first = {"job_id": "j1", "plan": "negate b", "patch": patch.format("a + -b"), "risk": "low", "need_approval": True}
        second = {"job_id": "j2", "plan": "plain sum", "patch": patch.format("a + b"), "risk": "low", "need_approval": True}
        server.replies = [json.dumps(first), json.dumps(second)]
        monkeypatch.setattr(sys, "stdin", io.StringIO("/code2 fix add in app.py\nn\njust return a + b\ny\n"))
        assert cli(["chat", "-w", str(ws), "--model", "scripted:demo", "--new"]) == 0
        out = " ".join(capsys.readouterr().out.split())
        asked_again = json.dumps(server.chat_bodies[1]["messages"])
        assert "fix add in app.py" in asked_again and "just return a + b" in asked_again and "negate b" in asked_again
        assert "What should it do instead?" in out and "denied: nothing changed" in out
        assert (ws / "app.py").read_text() == "def add(a, b):\n    return a + b\n"  # the second proposal, applied


def test_what_chat_says_before_it_delegates_is_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOllama() as server:
        ws = configure(tmp_path, monkeypatch, server.url)
        server.replies = ["On it — the Worker will draft this.\nDELEGATE: PLAN\nTASK: plan the launch",
                          worker_json("1. write the notes\n2. ship"), "The launch plan: write the notes, then ship."]
        assert cli(["run", "how do we launch?", "-w", str(ws), "--model", "scripted:demo"]) == 0
        out = " ".join(capsys.readouterr().out.split())
        said, handed, final = (out.index("On it — the Worker will draft this."),
                               out.index("Mio handed this to Worker: plan the launch"),
                               out.index("The launch plan: write the notes, then ship."))
        assert said < handed < final and "DELEGATE" not in out
