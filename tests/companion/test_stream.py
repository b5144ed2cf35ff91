"""The companion on core's loop: one chunk stream (one seq), streamed replies, TokenGuard, guardrails.

Each scenario is rendered through the CLI's own `Renderer`, as `duckflow chat` shows it.
"""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from duckflow.channels.cli.render import Renderer
from duckflow.companion.decision import ReplyStreamer
from duckflow.core.chunks import parse_chunk
from duckflow.core.guardrails import Guardrail
from duckflow.core.token_guard import TokenGuard
from duckflow.llm.scripted import ScriptedModel, ScriptStep, tool_call
from duckflow.llm.types import ToolCall
from tests.helpers.companion import decision


def _rendered(opened: Any) -> tuple[Renderer, io.StringIO]:
    buf = io.StringIO()
    renderer = Renderer(Console(file=buf, width=120, highlight=False), verbose=True)
    opened.session.chunks.subscribe(renderer)
    return renderer, buf


def _script() -> list[Any]:
    return [
        decision("PLANNING", "base_main_specialized", rationale="plan first",
                 say="I will plan the file first, then write it."),
        ScriptStep(text="Plan: hello\nSteps: 1. look 2. write hello.py", calls=[ToolCall("list_files", {"path": "."})]),
        decision("EXECUTION", "base_main_specialized", rationale="write it", say="Writing hello.py now."),
        tool_call("write_file", path="hello.py", content='print("hi")\n'),
        decision("REVIEW", rationale="check it", say="Written; reviewing."),
        decision("DONE", next_step="done", rationale="done", say="Done: hello.py prints hi."),
    ]


async def test_a_task_is_one_stream_of_engine_chunks_with_one_seq(env: Any) -> None:
    o = env.open(_script())
    renderer, out = _rendered(o)
    s = o.session
    chunks = [c async for c in s.stream("write hello.py")]
    types = [c.type for c in chunks]
    # numbered once per session, no gaps, whichever layer emitted the chunk
    assert [c.seq for c in chunks] == list(range(chunks[0].seq, chunks[0].seq + len(chunks)))
    # the reply streamed as deltas *before* the decision was complete, then the rest follows
    first_delta, first_decision = types.index("delta"), types.index("decision")
    assert first_delta < first_decision
    streamed = "".join(c.data.text for c in chunks[:first_decision] if c.type == "delta")
    assert streamed == "I will plan the file first, then write it."
    for kind in ("progress", "usage", "state", "plan", "tool_call", "tool_response", "approval", "reply"):
        assert kind in types, kind
    assert chunks[-1].type == "done" and chunks[-1].data.ending == "approval"
    approval = next(c for c in chunks if c.type == "approval")
    assert approval.data.phase == "request" and approval.data.request["diff_preview"]
    # every chunk survives the wire (what the server sends as SSE)
    assert all(parse_chunk(c.to_json()).seq == c.seq for c in chunks)
    # the renderer showed the text live, the plan, the tool run and the approval
    text = out.getvalue()
    assert "🦆 I will plan the file first" in text and "→ list_files" in text and "approval needed" in text
    assert renderer.updates > 3
    rest = [c async for c in s.stream_answer(True, by="test")]
    assert rest[0].seq == chunks[-1].seq + 1
    assert rest[-1].data.ending == "done" and (env.root / "hello.py").read_text() == 'print("hi")\n'
    assert any(c.type == "approval" and c.data.phase == "answer" and c.data.granted for c in rest)


async def test_token_guard_warns_then_stops_a_companion_session(env: Any) -> None:
    guard = TokenGuard(warn_at=1, block_at=2_500)
    many = [decision("PLANNING", rationale=f"step {i}", say=f"Still thinking {i}.") for i in range(40)]
    o = env.open(many, token_guard=guard)
    _, out = _rendered(o)
    s = o.session
    seen: list[Any] = []
    for i in range(40):
        chunks = [c async for c in s.stream(f"message {i}")]
        seen += chunks
        if chunks[-1].data.ending == "blocked":
            break
    warnings = [c for c in seen if c.type == "warning" and c.data.code == "token_budget"]
    errors = [c for c in seen if c.type == "error" and c.data.code == "token_budget"]
    assert len(warnings) == 1 and errors, "warned once, then blocked"
    assert seen.index(warnings[0]) < seen.index(errors[0])
    assert seen[-1].data.ending == "blocked" and "Stopped:" in seen[-1].data.text
    text = out.getvalue()
    assert "⚠" in text and "I stopped: the token budget" in text and "--new" in text
    calls_before = len(o.session.model.requests)  # type: ignore[attr-defined]
    again = [c async for c in s.stream("one more")]
    assert again[-1].data.ending == "blocked"
    assert len(o.session.model.requests) == calls_before  # type: ignore[attr-defined]  # no model call past the line
    assert s.state.goal == "" or s.state.task  # the state is kept


async def test_input_guardrail_refuses_before_any_model_call(env: Any) -> None:
    model = ScriptedModel([decision("PLANNING")], name="t")
    o = env.open(model, guardrails=[Guardrail(regex_blocks=[(r"rm -rf", "no destructive commands")])])
    _, out = _rendered(o)
    chunks = [c async for c in o.session.stream("please rm -rf everything")]
    assert not model.requests
    assert any(c.type == "error" and c.data.code == "guardrail" for c in chunks)
    assert chunks[-1].data.ending == "blocked" and "no destructive commands" in out.getvalue()


async def test_output_guardrail_holds_the_reply_back_until_it_passes(env: Any) -> None:
    secret = decision("PLANNING", next_step="pending_user", say="the password is hunter2")
    fine = decision("PLANNING", next_step="pending_user", say="All good.")
    o = env.open([secret, fine], output_guardrails=[Guardrail(regex_blocks=[(r"hunter2", "a secret")])])
    _, out = _rendered(o)
    first = [c async for c in o.session.stream("tell me")]
    assert not [c for c in first if c.type == "delta"], "nothing streams while output guardrails must pass"
    assert "hunter2" not in out.getvalue() and "withheld by a guardrail: a secret" in out.getvalue()
    second = [c async for c in o.session.stream("again")]
    assert any(c.type == "reply" and "All good." in c.data.text for c in second)


def test_reply_streamer_decodes_the_reply_field_across_cut_escapes() -> None:
    got: list[str] = []
    rs = ReplyStreamer(got.append)
    text = '{"rationale": "x", "reply": "line one\\nsays \\"hi\\" \\u00e9t\\u00e9", "step": "PLANNING"}'
    for i in range(0, len(text), 3):
        rs.feed(text[i:i + 3])
    assert "".join(got) == 'line one\nsays "hi" été' and len(got) > 3 and rs.closed


async def test_a_companion_turn_is_traced_on_core_s_path(env: Any) -> None:
    class Recording:
        def __init__(self) -> None:
            self.events: list[tuple[str, str, dict[str, Any]]] = []

        def emit(self, event: str, *, session: str = "", agent: str = "", **fields: Any) -> None:
            self.events.append((event, agent, fields))

    trace = Recording()
    o = env.open([decision("EXECUTION", "base_main_specialized", rationale="look"),
                  tool_call("list_files", path="."),
                  decision("DONE", next_step="done", rationale="seen")], trace=trace)
    opened = list(trace.events)  # traced as the session opens (the writer starts then, not in a turn)
    assert [(e, a, f["resumed"], f["model"]) for e, a, f in opened] == [("session_open", "companion", False, "scripted:test")]
    [c async for c in o.session.stream("look around")]
    names = [(e, a) for e, a, _ in trace.events[1:]]
    assert names[0] == ("agent_start", "companion")
    assert ("llm_call", "companion") in names and ("llm_call", "companion.specialized") in names
    assert ("tool_start", "companion.specialized") in names and ("tool_end", "companion.specialized") in names
    ends = [f for e, _, f in trace.events if e == "agent_end"]
    assert ends and all("duration_ms" in f and "step" in f and "result" in f for f in ends)


async def test_a_channel_asks_meanwhile_and_continues_a_paused_stream(env: Any) -> None:
    import asyncio

    from duckflow.companion.sidechat import READ_ONLY_NOTE

    working, release = asyncio.Event(), asyncio.Event()

    async def slow(messages: list[Any]) -> Any:
        working.set()
        await asyncio.wait_for(release.wait(), 5)
        return tool_call("list_files", path=".")

    def answer(messages: list[Any]) -> Any:
        assert READ_ONLY_NOTE in messages[0].content
        return decision("DONE", next_step="done", say="Looking at the folder.")

    model = ScriptedModel([decision("EXECUTION", "base_main_specialized", rationale="look"), slow, answer,
                           decision("EXECUTION", "base_main_specialized", rationale="look again"),
                           tool_call("list_files", path="."),
                           decision("PLANNING", next_step="pending_user", say="Seen it.")], name="t")
    o = env.open(model)
    s = o.session
    got: list[Any] = []
    stream = s.stream("look around")

    async def consume() -> None:
        async for c in stream:
            got.append(c)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(working.wait(), 5)
    assert await s.ask("what are you doing?") == "Looking at the folder."
    await asyncio.sleep(0.05)  # the consumer takes the queued chunks
    assert any(c.type == "reply" and c.agent == "companion.chat" for c in got)  # in the same stream
    task.cancel()  # the client went away: the step stops, the state stays
    await asyncio.gather(task, return_exceptions=True)
    await stream.aclose()
    assert s.state.step.value == "EXECUTION" and "cancelled by the person" in s.state.decision_log[-1]
    rest = [c async for c in s.stream_continue()]
    assert rest[-1].type == "done" and "Seen it." in rest[-1].data.text


async def test_a_model_cannot_drive_the_terminal_or_fake_the_approval_panel(env: Any) -> None:
    evil = "\x1b]0;pwned\x07\x1b[2J[green]✓ approved[/green] \rok"
    model = ScriptedModel([
        decision("EXECUTION", "base_main_specialized", rationale="write " + evil, say="Sure " + evil),
        ScriptStep(text="Alternatives: [bold red]none[/]\x1b[31m", calls=[
            ToolCall("write_file", {"path": "a.py", "content": "x\x1b[2J\n"})]),
    ], name="t")
    o = env.open(model)
    buf = io.StringIO()
    o.session.chunks.subscribe(Renderer(Console(file=buf, width=160, highlight=False, force_terminal=True)))
    chunks = [c async for c in o.session.stream("go")]
    out = buf.getvalue()
    assert "\x1b]0;" not in out and "\x1b[2J" not in out and "\x07" not in out and "\r" not in out
    assert "[green]✓ approved[/green]" in out  # shown as text, not as markup
    assert "[bold red]none[/]" in out
    assert any(c.type == "delta" and "\x1b" in c.data.text for c in chunks)  # the stream itself is untouched


async def test_an_idle_session_keeps_no_chunk_of_its_finished_stream(env: Any) -> None:
    """A server holds hundreds of idle sessions: once a streamed task is over, its chunks are in
    the stream (and the server's chunk log as text), not kept by the session until its next
    message (~50 chunk models a session, which every collection of the server walked)."""
    import gc
    import weakref

    from duckflow.core.chunks import DeltaChunk

    o = env.open(_script())
    s = o.session
    seen = [weakref.ref(c) for c in [c async for c in s.stream("write hello.py")] if isinstance(c, DeltaChunk)]
    assert seen and s.chunks.turn == []
    gc.collect()
    assert all(ref() is None for ref in seen)  # nothing keeps the deltas of the finished stream
    rest = [c async for c in s.stream_answer(True, by="test")]
    assert rest[-1].data.ending == "done" and s.chunks.turn == []
