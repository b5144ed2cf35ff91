"""`duckflow essay` through the real CLI: check needs no model, exit 3 on block; eval over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.apps.smartao import texts
from tests.helpers.fakeserver import FakeServer, Reply, openai_stream


def duckflow(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "duckflow", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd, timeout=60)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    refs = tmp_path / "refs"
    refs.mkdir()
    (refs / "urban.txt").write_text(texts.EN_REF, encoding="utf-8")
    (refs / "toshi.md").write_text(texts.JA_REF, encoding="utf-8")
    return refs


@pytest.mark.parametrize("essay, verdict, code", [
    (texts.EN_REF, "block", 3), (texts.EN_PARTIAL, "warn", 0), (texts.JA_OTHER, "pass", 0), (texts.JA_REF, "block", 3)])
def test_check_prints_the_documented_json_and_exit_code(tmp_path: Path, corpus: Path, essay: str,
                                                        verdict: str, code: int) -> None:
    path = tmp_path / "essay.txt"
    path.write_text(essay, encoding="utf-8")
    proc = duckflow("essay", "check", str(path), "--refs", str(corpus), "--json")
    assert proc.returncode == code, proc.stderr
    report = json.loads(proc.stdout)
    p = report["plagiarism"]
    assert p["verdict"] == verdict and isinstance(p["score"], float)
    assert all(set(m) >= {"ref", "score"} for m in p["matches"])
    if verdict != "pass":
        assert Path(p["matches"][0]["ref"]).parent == corpus


def test_style_writes_beside_the_original_and_in_place_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "essay.md"
    path.write_text(texts.ESSAY_JA, encoding="utf-8")
    proc = duckflow("essay", "style", str(path))
    assert proc.returncode == 0, proc.stderr
    beside = tmp_path / "essay.style.md"
    assert "起きられる" in beside.read_text(encoding="utf-8")
    assert path.read_text(encoding="utf-8") == texts.ESSAY_JA
    assert duckflow("essay", "style", str(path), "--in-place").returncode == 0
    assert "。。" not in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("args, message", [
    (["check", "missing.txt", "--refs", "."], "essay not found"),
    (["check", "{essay}", "--refs", "nowhere"], "references folder not found"),
    (["eval", "{essay}", "--model", "openai:gpt-4o-mini"], "OPENAI_API_KEY is not set"),
    (["auto", "{essay}"], "needs --request"),
    (["check", "{essay}", "--refs", ".", "--warn", "0.9", "--block", "0.5"], "thresholds"),
])
def test_bad_input_is_one_line_without_traceback(tmp_path: Path, args: list[str], message: str) -> None:
    essay = tmp_path / "e.txt"
    essay.write_text("hello", encoding="utf-8")
    proc = duckflow("essay", *[a.replace("{essay}", str(essay)) for a in args], cwd=tmp_path)
    assert proc.returncode == 1
    assert message in proc.stderr and "Traceback" not in proc.stderr


@pytest.fixture
def openai_server() -> Iterator[FakeServer]:
    """The fake OpenAI-compatible server on its own event loop in a thread (the CLI runs its own)."""
    loop = asyncio.new_event_loop()
    server = FakeServer()
    started = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(server.start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    started.wait(10)
    yield server
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def test_eval_runs_on_a_real_openai_compatible_server_and_caches(tmp_path: Path, openai_server: FakeServer) -> None:
    from tests.apps.smartao.judges import Judge

    judge = Judge({c: ([1], [{"level": 3, "shows": f"{texts.REASONS[c]}.", "missing": f"a second example of {c}"}])
                   for c in ("motivation", "evidence", "reflection", "fit", "expression")})

    def answer(req: Any) -> Reply:
        return Reply(chunks=openai_stream([judge.answer(json.loads(req.body)["messages"][-1]["content"])]))

    openai_server.default("/v1/chat/completions", answer)
    essay = tmp_path / "essay.md"
    essay.write_text(texts.ESSAY_EN, encoding="utf-8")
    env = {"OPENAI_BASE_URL": openai_server.url + "/v1"}
    proc = duckflow("essay", "eval", str(essay), "--model", "openai:tiny", "--eval-mode", "whole", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    ev = json.loads(proc.stdout)["evaluation"]
    assert not ev["cached"] and ev["judged"] == 5 and ev["mode"] == "whole"
    fit = next(s for s in ev["scores"] if s["criterion"] == "fit")
    assert fit["by"] == "rules" and fit["level"] == 1   # no programme named: the rules decide, nothing asked
    assert "- fit (" not in judge.prompts[0]
    sent = openai_server.bodies("/v1/chat/completions")[0]
    assert sent["model"] == "tiny" and sent["temperature"] == 0.0 and sent["max_tokens"] > 0
    again = duckflow("essay", "eval", str(essay), "--model", "openai:tiny", "--eval-mode", "whole", "--json", env=env)
    assert json.loads(again.stdout)["evaluation"]["cached"] is True
    assert len(openai_server.requests) == 1


def test_ctrl_c_during_eval_ends_cleanly_with_what_was_judged(tmp_path: Path, openai_server: FakeServer) -> None:
    import signal

    from tests.apps.smartao.judges import Judge

    judge = Judge({c: ([1], [{"level": 2, "shows": f"{texts.REASONS[c]}.", "missing": f"an example of {c}"}])
                   for c in ("motivation", "evidence", "reflection", "fit", "expression")})

    def answer(req: Any) -> Reply:  # the first question is answered; the next one takes "forever"
        text = judge.answer(json.loads(req.body)["messages"][-1]["content"])
        return Reply(chunks=openai_stream([text]), delay=0.0 if len(judge.prompts) == 1 else 60.0)

    openai_server.default("/v1/chat/completions", answer)
    essay = tmp_path / "essay.md"
    essay.write_text(texts.ESSAY_EN, encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "duckflow", "essay", "eval", str(essay), "--model", "openai:tiny"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "OPENAI_BASE_URL": openai_server.url + "/v1",
                                 "DUCKFLOW_HOME": str(tmp_path / "home")})
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("evaluating: criterion 5 of 5"):  # evidence, reflection and fit: the rules
            break
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, "".join(seen) + err
    assert "motivation: 2/4 — line 3:" in out and "fit: 1/4" in out and "expression:" not in out
    assert "stopped: 4 of 5 criteria judged before you stopped it" in err and "Traceback" not in err
