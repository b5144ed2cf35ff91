"""Seed 003 §7 live for the companion: a cloud model answers only coding, every channel says which model answered.

End to end through the one front door (`Conversation`) with the companion's cloud model a real
Anthropic Messages client talking to a 127.0.0.1 server that records every request, and a
ScriptedModel as the local model. The route line is read through the presentation layer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from duckflow.channels.conversation import Conversation
from duckflow.channels.present import Presenter
from duckflow.config import load_config
from duckflow.llm.anthropic import AnthropicModel
from duckflow.llm.scripted import ScriptedModel
from tests.helpers.companion import decision
from tests.helpers.fakeserver import FakeServer, Reply, anthropic_stream

PATH = "/v1/messages"


def said(text: str, step: str = "PLANNING") -> str:
    """A Main decision that answers and waits for the person (one model call)."""
    return json.dumps({"rationale": text, "goal_consistency": "yes", "constraint_check": "yes",
                       "next_step": "pending_user", "step": step, "prompt_pattern": "base_main",
                       "state_delta": {}, "reply": text})


def local_says(*texts: str) -> ScriptedModel:
    return ScriptedModel([decision("PLANNING", next_step="pending_user", say=t) for t in texts], name="local")


@pytest.fixture
async def cloud() -> Any:
    server = await FakeServer().start()
    yield server
    await server.close()


def cloud_model(server: FakeServer) -> AnthropicModel:
    # on 127.0.0.1 for the test, but a cloud model for Duckflow (as api.anthropic.com would be)
    return AnthropicModel("claude-test", base_url=server.url, api_key="k", is_local=False, deadline_s=30)


class Talk:
    """A conversation whose chunks are also read by the presentation layer, as a channel reads them."""

    def __init__(self, conv: Conversation) -> None:
        self.conv = conv
        self.present = Presenter()
        self.lines: list[Any] = []

    async def say(self, text: str) -> list[Any]:
        chunks = [c async for c in self.conv.stream(text)]
        for c in chunks:
            self.lines += self.present.feed(c)
        return chunks

    def notes(self) -> list[str]:
        return [ln.text for ln in self.lines if ln.kind == "note"]

    def ends(self) -> list[str]:
        return [ln.text for ln in self.lines if ln.data.get("turn_end")]


def talk(env: Any, server: FakeServer, local: ScriptedModel | None) -> Talk:
    from duckflow.companion.factory import open_session
    from duckflow.companion.store import SessionStore
    from duckflow.gate import Gate

    opened = open_session(env.root, model=cloud_model(server), store=SessionStore(env.home / "sessions.db"),
                          gate=Gate(env.home / "gate.db"), codec="native")
    env.opened.append(opened)
    return Talk(Conversation.for_session(opened, config=load_config(env={}), local_model=local))


async def test_conversation_stays_local_coding_goes_to_the_cloud_and_its_follow_ups_stay_there(
        env: Any, cloud: FakeServer) -> None:
    cloud.queue(PATH, Reply(chunks=anthropic_stream([said("Which name should the script have?")])),
                Reply(chunks=anthropic_stream([said("greet.py it is. Shall I also add a test?")])),
                Reply(chunks=anthropic_stream([said("I will add test_greet.py next.")])))
    local = local_says("I help you change code in this folder.", "Tabs or spaces: whatever the project uses.")
    t = talk(env, cloud, local)
    try:
        hello = await t.say("hello, what can you do?")  # CHAT: the local model, the cloud server never asked
        assert hello[-1].data.ending == "input" and cloud.requests == [] and len(local.requests) == 1
        assert t.ends()[-1].endswith("answered by scripted:local")

        await t.say("fix the bug in app.py")  # CODE: the cloud model
        assert len(cloud.requests) == 1 and cloud.requests[0].json["model"] == "claude-test"
        assert t.ends()[-1].endswith("answered by anthropic:claude-test")
        for follow_up in ("call it greet.py instead", "yes"):  # follow-ups of the coding task stay CODE
            chunks = await t.say(follow_up)
            route = next(c for c in chunks if c.type == "notice" and c.data.code == "route")
            assert route.data.details["primary_route"] == "CODE" and not route.data.details["declaration"]
        assert len(cloud.requests) == 3 and len(local.requests) == 1
        assert t.ends()[-1].endswith("answered by anthropic:claude-test")
        assert t.notes().count("» Switching to coding.") == 1  # said once, when the route changed

        await t.say("/chat tabs or spaces?")  # a route command leaves the task: local again
        assert len(cloud.requests) == 3 and len(local.requests) == 2
        assert t.ends()[-1].endswith("answered by scripted:local")
    finally:
        t.conv.close()


async def test_local_only_never_reaches_the_cloud(env: Any, cloud: FakeServer) -> None:
    local = local_says("Local-only: I answer from this machine.")
    t = talk(env, cloud, local)
    try:
        await t.say("/local")
        refused = await t.say("fix the bug in app.py")  # CODE while local-only: refused at the router
        assert refused[-1].data.ending == "input" and "/cloud" in refused[-1].data.text
        await t.say("how does the parser work?")
        assert cloud.requests == [] and len(local.requests) == 1
        assert t.ends()[-1].endswith("answered by scripted:local")
    finally:
        t.conv.close()


async def test_without_a_local_model_nothing_is_sent_and_a_bare_code_sends_it_as_coding(
        env: Any, cloud: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("duckflow.companion.seats._bundled_installed", lambda config: False)
    cloud.queue(PATH, Reply(chunks=anthropic_stream([said("I will rename greet to hello in every file.")])))
    t = talk(env, cloud, None)
    try:
        held = await t.say("rename greet to hello everywhere")  # no rule says coding: CHAT, and no local model
        assert held[-1].data.ending == "input" and cloud.requests == []
        line = held[-1].data.text
        assert line.startswith("Not sent:") and "anthropic:claude-test is a cloud model" in line
        assert "/code" in line and "duckflow models install" in line and "\n" not in line
        assert t.ends() == []  # no model answered: no model is named
        await t.say("/code")  # the message not sent, now as a coding task
        assert len(cloud.requests) == 1 and "rename greet to hello everywhere" in json.dumps(cloud.requests[0].json)
        await t.say("/local")
        refused = await t.say("/chat hello")
        assert refused[-1].data.text.startswith("Not sent: local-only mode is on") and len(cloud.requests) == 1
    finally:
        t.conv.close()


async def test_a_chat_channel_reply_names_the_model_that_answered(env: Any, cloud: FakeServer,
                                                                  tmp_path: Path) -> None:
    from duckflow.channels.manager import ChannelManager, IdentityMap, Outbox
    from duckflow.channels.streamlog import ChunkLog

    cloud.queue(PATH, Reply(chunks=anthropic_stream([said("Which name should the script have?")])))
    t = talk(env, cloud, local_says("Hello from this machine."))

    class Runner:
        def exists(self, sid: str) -> bool:
            return True

        def belongs_here(self, sid: str) -> bool:
            return True

        def new_session(self) -> str:
            return "s1"

        def run_message(self, sid: str, text: str, channel: str, images: Any) -> Any:
            return t.conv.stream(text)

    class Sent:
        def __init__(self) -> None:
            self.parts: list[str] = []

        async def send(self, target: Any, part: str, approval: Any) -> None:
            self.parts.append(part)

    sent = Sent()
    mgr = ChannelManager(Runner(), ChunkLog(tmp_path / "c.db"), IdentityMap(tmp_path / "i.db"))
    mgr.outboxes["slack"] = Outbox(sent, limit=3000)
    try:
        sid = mgr.session_for("slack", "slack:C:1")
        mgr.submit(sid, "hello there", "slack", target="C")
        mgr.submit(sid, "fix the bug in app.py", "slack", target="C")
        await mgr.drain()
        assert sent.parts[0].endswith("(answered by scripted:local)")
        assert sent.parts[1].endswith("(answered by anthropic:claude-test)") and len(cloud.requests) == 1
    finally:
        t.conv.close()


async def test_a_run_task_is_coding_by_nature_and_starts_with_no_route_line(env: Any, cloud: FakeServer,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("duckflow.companion.seats._bundled_installed", lambda config: False)
    cloud.queue(PATH, Reply(chunks=anthropic_stream([said("Renaming greet to hello.")])))
    t = talk(env, cloud, None)
    try:
        chunks = [c async for c in t.conv.stream("rename greet to hello everywhere", task=True)]
        for c in chunks:
            t.lines += t.present.feed(c)
        assert len(cloud.requests) == 1  # a task nothing else claims goes to the coding model
        assert not [n for n in t.notes() if n.startswith("»")]  # no "Switching to coding." for the task
        assert t.ends()[-1].endswith("answered by anthropic:claude-test")
    finally:
        t.conv.close()


def test_duckflow_run_shows_no_route_line_for_its_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from duckflow.channels.cli.main import main

    (tmp_path / "ws").mkdir()
    rc = main(["run", "create hello.py", "-w", str(tmp_path / "ws"), "--model", "scripted:demo",
               "--auto-approve-workspace"])
    out = capsys.readouterr().out
    assert rc == 0 and (tmp_path / "ws" / "hello.py").exists()
    assert "»" not in out and "Switching" not in out
    assert "answered by scripted:demo" in out


async def test_after_the_coding_task_is_done_a_follow_up_stays_on_the_cloud_until_a_route_command(
        env: Any, cloud: FakeServer) -> None:
    def step(step: str, pattern: str, next_step: str, text: str) -> Reply:
        return Reply(chunks=anthropic_stream([json.dumps({
            "rationale": text, "goal_consistency": "yes", "constraint_check": "yes", "next_step": next_step,
            "step": step, "prompt_pattern": pattern, "state_delta": {}, "reply": text})]))

    write = json.dumps({"path": "hello.py", "content": "print('hello')\n"})
    cloud.queue(PATH, step("EXECUTION", "base_main_specialized", "continue", "I will write hello.py."),
                Reply(chunks=anthropic_stream([""], tool=("tu_1", "write_file", [write[:20], write[20:]]))),
                step("DONE", "base_main", "done", "hello.py prints a greeting."),
                step("PLANNING", "base_main", "pending_user", "Which test framework do you use?"),
                step("PLANNING", "base_main", "pending_user", "I can explain once the test is written."))
    local = local_says("A monad wraps a value with a way to chain steps.")
    t = talk(env, cloud, local)
    try:
        [c async for c in t.conv.stream("make hello.py print a greeting", auto_approve_workspace=True)]
        assert t.conv.session.state.step.value == "DONE" and (env.root / "hello.py").exists()
        assert len(cloud.requests) == 3
        orch = t.conv.orch
        assert orch.state.flags(orch.channel, orch.session_id).coding == "ended"  # the task ended
        await t.say("now add a test for it")  # goes on with what was just done: still coding, on the cloud
        assert len(cloud.requests) == 4 and local.requests == []
        await t.say("what is a monad?")  # inside the task under way (it asked a question): still coding
        assert len(cloud.requests) == 5 and local.requests == []
        await t.say("/chat what is a monad?")  # a route command leaves the task: local
        assert len(cloud.requests) == 5 and len(local.requests) == 1
        assert t.ends()[-1].endswith("answered by scripted:local")
    finally:
        t.conv.close()


def test_duckflow_run_says_once_why_a_task_that_is_not_coding_was_not_sent(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from duckflow.channels.cli.main import main

    monkeypatch.setattr("duckflow.companion.seats._bundled_installed", lambda config: False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")  # a cloud model; the refusal comes before any call
    (tmp_path / "ws").mkdir()
    rc = main(["run", "analyze the sales data by month", "-w", str(tmp_path / "ws"),
               "--model", "anthropic:claude-test"])
    out = " ".join(capsys.readouterr().out.split())
    assert rc == 1 and out.count("Not sent: this reads as data analysis") == 1
    assert "anthropic:claude-test is a cloud model" in out and "Stopped:" not in out and "answered by" not in out


def test_the_banner_says_a_cloud_model_answers_coding_only(env: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from duckflow.channels.cli.routed import CliConversation
    from duckflow.companion.factory import open_session
    from duckflow.companion.store import SessionStore
    from duckflow.gate import Gate

    monkeypatch.setattr("duckflow.companion.seats._bundled_installed", lambda config: False)
    cloud = AnthropicModel("claude-test", base_url="https://api.anthropic.com", api_key="k")
    opened = open_session(env.root, model=cloud, store=SessionStore(env.home / "s.db"), gate=Gate(env.home / "g.db"))
    env.opened.append(opened)
    talk_ = CliConversation(opened, config=load_config(env={}))
    try:
        line = talk_.speakers()
        assert line.startswith("anthropic:claude-test is a cloud model: it answers coding only;")
        assert "other messages are not sent" in line and "duckflow models install" in line
        assert talk_.conv.seats.cloud
    finally:
        talk_.close()
    here = CliConversation(env.open(ScriptedModel([], name="here")), config=load_config(env={}))
    assert here.speakers() == ""  # a local model answers everything: nothing to say
    here.close()


async def test_a_task_the_chat_role_hands_to_the_companion_is_coding_and_both_models_are_named(
        env: Any, cloud: FakeServer) -> None:
    from duckflow.companion.factory import open_session
    from duckflow.companion.store import SessionStore
    from duckflow.gate import Gate
    from duckflow.llm.scripted import reply

    cloud.queue(PATH, Reply(chunks=anthropic_stream([said("Which name should the script have?")])),
                Reply(chunks=anthropic_stream([said("greet.py then.")])))
    chat = ScriptedModel([reply("On it.\nDELEGATE: CODE\nTASK: write a greeting script")], name="mio")
    opened = open_session(env.root, model=cloud_model(cloud), store=SessionStore(env.home / "sessions.db"),
                          gate=Gate(env.home / "gate.db"), codec="native")
    env.opened.append(opened)
    t = Talk(Conversation.for_session(opened, config=load_config(env={}), models={"chat": chat}))
    try:
        await t.say("could you make me something that says hello?")  # CHAT: Mio (local) hands it on as CODE
        assert len(chat.requests) == 1 and len(cloud.requests) == 1
        assert t.ends()[-1].endswith("answered by scripted:mio + anthropic:claude-test")
        await t.say("the friendly one, please")  # the answer to its question: the coding task's follow-up, straight to it
        assert len(chat.requests) == 1 and len(cloud.requests) == 2
        assert t.ends()[-1].endswith("answered by anthropic:claude-test")
    finally:
        t.conv.close()
