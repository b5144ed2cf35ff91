"""SelfCorrector in the live loop: a malformed text-codec reply is re-asked at most twice.

Scenario tests through `Agent.run` with Sym-Ops and DML: fixed in one re-ask (the tool runs
once, the failed attempt stays out of the history), and not fixable in two (the person is
told, nothing runs).
"""

from __future__ import annotations

import pytest

from duckflow.core.agent import Agent
from duckflow.core.session import Session
from duckflow.llm.scripted import ScriptedModel, reply

written: list[tuple[str, str]] = []


def write_file(path: str, content: str) -> str:
    """Write a file.

    Args:
        path: The file.
        content: Its new content.
    """
    written.append((path, content))
    return "ok"


BROKEN = {
    # the block is opened but never closed before the reply ends: a guess, not runnable
    "symops": "~ writing it\n$ create @ a.py\n--\nprint(1)\n",
    "dml": "🦆▶️[T:write_file|a.py]◀️🦆",  # the content argument is missing
}
GOOD = {
    "symops": "~ writing it\n$ create @ a.py\n--\nprint(1)\n--\n",
    "dml": "🦆▶️[T:write_file|a.py|print(1)]◀️🦆",
}


@pytest.mark.parametrize("codec", ["symops", "dml"])
async def test_a_malformed_reply_is_fixed_in_one_reask(codec: str) -> None:
    written.clear()
    model = ScriptedModel([reply(BROKEN[codec]), reply(GOOD[codec]), reply("Done.")], supports_tools=False)
    session = Session(id="s1")
    result = await Agent("coder", "Write code.", model=model, tools=[write_file], codec=codec).run(
        "make a.py", session=session)
    assert result.error is None and result.text == "Done."
    assert [p for p, _ in written] == ["a.py"]  # ran once, from the corrected reply
    reask = model.requests[1].messages[-1].content
    assert "could not be used" in reask and ("line" in reask or codec == "dml")
    if codec == "symops":
        assert "expected" in reask  # each error names its line and what was expected
    # the failed attempt is not in the conversation that goes on
    third = [m.content for m in model.requests[2].messages]
    assert BROKEN[codec] not in third and GOOD[codec] in third
    codes = [c.data.code for c in result.chunks if c.type == "warning"]  # type: ignore[union-attr]
    assert codes.count("codec_error") == 1


@pytest.mark.parametrize("codec", ["symops", "dml"])
async def test_a_reply_not_fixed_in_two_reasks_runs_nothing(codec: str) -> None:
    written.clear()
    model = ScriptedModel([reply(BROKEN[codec])] * 3 + [reply("never asked")], supports_tools=False)
    result = await Agent("coder", "Write code.", model=model, tools=[write_file], codec=codec).run("make a.py")
    assert written == []  # nothing ran
    assert len(model.requests) == 3  # the reply and two re-asks, no more
    assert "could not be read after 2 correction(s)" in result.text and "nothing was run" in result.text
    codes = [c.data.code for c in result.chunks if c.type == "warning"]  # type: ignore[union-attr]
    assert codes == ["codec_error", "codec_error", "codec_failed"]
