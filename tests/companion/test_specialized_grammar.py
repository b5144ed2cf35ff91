"""The two-call turn with a local backend: the Specialized reply is constrained by the grammar of
the session's protocol (Sym-Ops or DML), the Main decision by its schema; switchable off."""

from __future__ import annotations

from typing import Any

import pytest

from duckflow.companion.replygrammar import specialized_grammar
from duckflow.companion.state import Step
from duckflow.llm.scripted import ScriptedModel, reply
from tests.helpers.companion import decision, env  # noqa: F401
from tests.helpers.gbnf_walk import Walker


class LocalScripted(ScriptedModel):
    """Looks like llama.cpp's server on this machine: grammars and schemas are sent."""

    provider = "llamacpp"


REPLY = {"symops": "~ write the greeting\n#c0.8 #m0.8 #f0.8 #s0.8\n$ create @ hi.txt\n---\nhello\n---\n",
         "dml": "Thought: write the greeting\nAction:\n🦆▶️[T:write_file|hi.txt|\nhello\n]◀️🦆\n"}
SHAPE = {"symops": ('root ::= thought vitals action{1,4}', 'create ::= "$ create @ " ( "notes.txt" | "hi.txt" )',
                    'edit ::= "$ edit @ " ( "notes.txt" )'),
         "dml": ('root ::= "Thought: " dchar{1,200} "\\nAction:\\n" action{1,4}\n',
                 '"🦆▶️[T:write_file" "|" ( ( "notes.txt" | "hi.txt" ) ) "|" dblock',
                 '"🦆▶️[T:edit_file" "|" ( "notes.txt" ) "|" dblock', '"🦆▶️[T:read_file" "|" ( "notes.txt" )')}


@pytest.mark.parametrize("codec", ["symops", "dml"])
async def test_the_specialized_reply_is_grammar_constrained(env: Any, codec: str) -> None:  # noqa: F811
    (env.root / "notes.txt").write_text("old\n")  # an existing file: edit (and read in DML) are offered
    model = LocalScripted([decision("EXECUTION", "base_main_specialized"), reply(REPLY[codec])],
                          supports_tools=False)
    o = env.open(model, codec=codec, mode="two-call")
    r = await o.session.handle_message("write hi.txt with a greeting")
    assert [x.status for x in r.outcomes] == ["pending"]  # read by the codec, gated as before
    main, special = model.requests
    assert main.settings is not None and "response_format" in main.settings.extra  # the decision: schema
    assert special.settings is not None and special.settings.max_tokens
    grammar = special.settings.extra["grammar"]
    for part in SHAPE[codec]:
        assert part in grammar, grammar
    assert "next" not in grammar.lower()  # the step marker is single-call only
    assert "newname" not in grammar  # the task names its file: no other new name (seen: `src/main.py`)
    o.session.owner.change("task", lambda st: setattr(st, "task", "write a greeting script"))
    assert "newname ::=" in (specialized_grammar(o.session, Step.EXECUTION) or "")
    for seed in range(60):  # what the grammar allows, the session's codec reads strictly
        text = Walker(grammar, seed=seed, star_max=8).sample()
        decoded = o.session.codec.decode(text, o.session.runner.specs)
        assert decoded.calls and not (decoded.errors or decoded.warnings or decoded.repairs), (text, decoded)
        assert all(c.executable for c in decoded.calls)
    await o.session.answer_approval(True)
    assert (env.root / "hi.txt").read_text() == "hello\n"


async def test_no_grammar_when_constrained_decoding_is_off_or_the_model_is_cloud(env: Any) -> None:  # noqa: F811
    model = LocalScripted([decision("EXECUTION", "base_main_specialized"), reply(REPLY["dml"])],
                          supports_tools=False)
    o = env.open(model, codec="dml", mode="two-call")
    o.session.constrained_decoding = False
    await o.session.handle_message("write hi.txt with a greeting")
    special = model.requests[1].settings
    assert special is not None and "grammar" not in special.extra and special.max_tokens  # bounds stay
    cloud = ScriptedModel([decision("EXECUTION", "base_main_specialized"), reply(REPLY["dml"])],
                          supports_tools=False, is_local=False)
    o2 = env.open(cloud, codec="dml", mode="two-call")
    await o2.session.handle_message("write hi.txt with a greeting")
    assert cloud.requests[1].settings is None and o2.session.state.step == Step.AWAITING_APPROVAL
