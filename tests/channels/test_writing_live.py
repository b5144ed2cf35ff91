"""The wait shows the work in DML and with native tool calls too: a scripted model streams its reply in
small pieces and the terminal's Renderer (what `duckflow run` prints) shows the file's lines and the
command before the file is written and before the turn ends, then the turn's quiet end line. The
native case also runs on a real 127.0.0.1 server speaking OpenAI's streamed tool-call wire."""

from __future__ import annotations

import io
import json
import re
from typing import Any

from rich.console import Console

from duckflow.channels.cli.render import Renderer
from duckflow.llm.scripted import ScriptedModel, reply, streamed_call
from tests.helpers.companion import decision, env  # noqa: F401
from tests.helpers.fakeserver import FakeServer, Reply, openai_stream

DML = ("Thought: write greet.py and run it\nAction:\n"
       "🦆▶️[T:write_file|greet.py|\nimport sys\n\nprint(\"hi\", *sys.argv[1:])\n]◀️🦆\n"
       "🦆▶️[T:execute_shell|python3 greet.py]◀️🦆\nNext: DONE\n")
CONTENT = 'import sys\n\nprint("hi é 😀", *sys.argv[1:])\n'  # as JSON: \u00e9 and a surrogate pair
END_LINE = re.compile(r"\d+(\.\d+)? s · [\d,]+ tokens in, [\d,]+ out( · [\d.]+ tokens/s)? · \S+")


async def approving(opened: Any, text: str) -> list[Any]:
    """The message's turn and every approval granted (as a person at the card), to the turn's end."""
    chunks = [c async for c in opened.session.stream(text)]
    while chunks[-1].data.ending == "approval":
        chunks += [c async for c in opened.session.stream_answer(True, by="test")]
    return chunks


class Watched:
    """The Renderer's output, and what it held when each chunk kind first arrived."""

    def __init__(self, opened: Any) -> None:
        self.out = io.StringIO()
        self.render = Renderer(Console(file=self.out, width=80, highlight=False))
        self.at: dict[str, str] = {}
        opened.session.chunks.subscribe(self)

    def __call__(self, chunk: Any) -> None:
        self.at.setdefault(chunk.type, self.out.getvalue())  # before this chunk is shown
        self.render(chunk)

    @property
    def text(self) -> str:
        return self.out.getvalue()


async def test_a_dml_reply_in_small_pieces_shows_its_lines_before_the_file_is_written(env: Any) -> None:  # noqa: F811
    cuts = [DML[i:i + 3] for i in range(0, len(DML), 3)]  # the emoji markers cut too
    o = env.open(ScriptedModel([reply(DML, chunks=cuts)], name="t"), codec="dml", mode="single-call")
    seen = Watched(o)
    chunks = await approving(o, "Create greet.py that greets its arguments, run it")
    assert chunks[-1].data.ending == "done" and (env.root / "greet.py").exists()
    before = seen.at["tool_call"]  # what the person had read when the first action began
    assert "Writing greet.py:" in before and '3 │ print("hi", *sys.argv[1:])' in before
    assert "$ python3 greet.py" in before and "🦆▶" not in seen.text and "]◀" not in seen.text
    assert "● Create greet.py" in seen.text and seen.text.index("1 │ import sys") < seen.text.index("● Create")
    assert END_LINE.search(seen.text), seen.text  # the turn's quiet end line, in DML too


def _native_script(every: int) -> list[Any]:
    return [decision("EXECUTION", "base_main_specialized", rationale="write it", say="Writing greet.py."),
            streamed_call("write_file", every=every, path="greet.py", content=CONTENT),
            decision("REVIEW", "base_main_specialized", rationale="run it", say="Running it."),
            streamed_call("execute_shell", every=every, command="python3 greet.py"),
            decision("DONE", next_step="done", rationale="done", say="Done: greet.py greets.")]


async def test_a_native_call_in_small_pieces_shows_its_lines_and_command_as_they_form(env: Any) -> None:  # noqa: F811
    o = env.open(ScriptedModel(_native_script(every=3), name="t"))
    seen = Watched(o)
    chunks = [c async for c in o.session.stream("Create greet.py that greets its arguments")]
    types = [c.type for c in chunks]
    assert types.index("tool_call_delta") < types.index("approval")
    grown = "".join(c.data.text for c in chunks if c.type == "tool_call_delta" and c.data.key == "content")
    assert grown == CONTENT  # decoded: é and 😀 whole, though the pieces cut inside their escapes
    before = seen.at["approval"]  # the card comes after the lines
    assert "Writing greet.py:" in before and '3 │ print("hi é 😀", *sys.argv[1:])' in before
    rest = [c async for c in o.session.stream_answer(True, by="test")]
    assert (env.root / "greet.py").read_text() == CONTENT
    assert any(c.type == "tool_call_delta" and c.data.key == "command" for c in rest)
    assert "$ python3 greet.py" in seen.text
    assert END_LINE.search(seen.text), seen.text  # the turn's end line with native calls too


def _openai_call(name: str, arguments: dict[str, Any], every: int) -> list[str]:
    raw = json.dumps(arguments)
    frags = [{"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": ""}}]
    frags += [{"index": 0, "function": {"arguments": raw[i:i + every]}} for i in range(0, len(raw), every)]
    return openai_stream([], tool_calls=frags, usage=(120, 40))


def _decision(step: str, say: str, next_step: str = "continue") -> list[str]:
    body = {"rationale": say, "goal_consistency": "yes", "constraint_check": "yes", "next_step": next_step,
            "step": step, "prompt_pattern": "base_main_specialized" if next_step != "done" else "base_main",
            "state_delta": {}, "reply": say}
    return openai_stream([json.dumps(body)], usage=(300, 30))


async def test_a_real_openai_stream_of_a_tool_call_shows_the_file_as_it_forms(env: Any, server: FakeServer) -> None:  # noqa: F811
    from duckflow.llm.openai_compat import OpenAICompatModel

    path = "/v1/chat/completions"
    server.queue(path, Reply(chunks=_decision("EXECUTION", "Writing greet.py.")),
                 Reply(chunks=_openai_call("write_file", {"path": "greet.py", "content": CONTENT}, 4),
                       chunk_delay=0.03),  # (read at most 20 times a second)
                 Reply(chunks=_decision("DONE", "Done.", "done")))
    from duckflow.companion.factory import open_session
    from duckflow.companion.store import SessionStore
    from duckflow.gate import Gate

    model = OpenAICompatModel("gpt-4o-mini", base_url=f"{server.url}/v1", api_key="sk-test")
    o = open_session(env.root, model=model, store=SessionStore(env.home / "sessions.db"),
                     gate=Gate(env.home / "gate.db"), codec="native")
    env.opened.append(o)
    seen = Watched(o)
    chunks = [c async for c in o.session.stream("Create greet.py that greets its arguments")]
    deltas = [c for c in chunks if c.type == "tool_call_delta"]
    assert len(deltas) > 5 and deltas[0].data.name == "write_file"
    assert "".join(c.data.text for c in deltas if c.data.key == "content") == CONTENT
    before = seen.at["approval"]
    assert "Writing greet.py:" in before and '3 │ print("hi é 😀", *sys.argv[1:])' in before
    assert [c.type for c in chunks][-1] == "done"
    assert END_LINE.search(seen.text) and "openai:gpt-4o-mini" in seen.text, seen.text


SYMOPS = ("~ write greet.py\n$ create @ greet.py\n---\nimport sys\n\nprint(\"hi\", *sys.argv[1:])\n---\n")


async def test_a_two_call_text_reply_shows_its_lines_too(env: Any) -> None:  # noqa: F811
    for codec, text in (("symops", SYMOPS), ("dml", DML)):
        cuts = [text[i:i + 3] for i in range(0, len(text), 3)]
        script = [decision("EXECUTION", "base_main_specialized", rationale="write it", say="Writing greet.py."),
                  reply(text, chunks=cuts)]
        o = env.open(ScriptedModel(script, name=codec, supports_tools=False), codec=codec, mode="two-call")
        assert o.session.mode == "layered"
        seen = Watched(o)
        chunks = [c async for c in o.session.stream("Create greet.py that greets its arguments")]
        assert chunks[-1].data.ending == "approval", codec
        before = seen.at["approval"]
        assert "Writing greet.py:" in before and '3 │ print("hi", *sys.argv[1:])' in before, (codec, before)


async def test_a_two_call_dml_reply_names_a_file_by_its_path_not_its_alias(env: Any) -> None:  # noqa: F811
    (env.root / "src").mkdir()
    (env.root / "src" / "greet.py").write_text("print('hi')\n")
    text = "Thought: change it\nAction:\n🦆▶️[T:write_file|{{F:greet}}|\nprint('hello')\n]◀️🦆\n"
    script = [decision("EXECUTION", "base_main_specialized", rationale="edit it", say="Changing greet.py.",
                       context_refs=["src/greet.py"]), reply(text)]
    o = env.open(ScriptedModel(script, name="dml", supports_tools=False), codec="dml", mode="two-call")
    seen = Watched(o)
    chunks = [c async for c in o.session.stream("Make src/greet.py say hello")]
    assert chunks[-1].data.ending == "approval", [c.type for c in chunks]
    assert "Writing src/greet.py:" in seen.at["approval"] and "{{F:" not in seen.text, seen.text
