"""SelfCorrector, RobustProcessor, DebugProcessor and the prompt templates."""

from __future__ import annotations

import io

from duckflow.llm.scripted import ScriptedModel, reply
from duckflow.llm.types import Message, complete
from duckflow.protocols.symops import (
    DebugProcessor,
    PromptBuilder,
    RobustProcessor,
    SelfCorrector,
    parse,
)
from duckflow.protocols.symops.prompts import correction_message, few_shot_examples, system_prompt

BROKEN = "$ create @ a.py\n--\nx = 1\n"  # cut off: unclosed block
GOOD = "$ create @ a.py\n--\nx = 1\n--\n"


class Script:
    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.seen: list[list[Message]] = []

    async def __call__(self, messages: list[Message]) -> str:
        self.seen.append(list(messages))
        return self.replies.pop(0)


async def test_reask_names_each_error_and_keeps_failures_out_of_history() -> None:
    script = Script("still broken: $ create @ a.py", GOOD)
    history = [Message("system", "sys"), Message("user", "make a.py")]
    fix = await SelfCorrector(script).correct(history, BROKEN)
    assert fix.corrected and fix.rounds == 2 and fix.reply == GOOD
    assert [m.content for m in fix.history] == ["sys", "make a.py", GOOD]
    assert [a.reply for a in fix.attempts] == [BROKEN, "still broken: $ create @ a.py"]
    reask = script.seen[0][-1].content
    assert "unclosed_block at line 1" in reask and "expected" in reask
    assert script.seen[0][-2] == Message("assistant", BROKEN)
    assert script.seen[1][-2].content == "still broken: $ create @ a.py"  # only the latest failure


async def test_at_most_two_rounds_then_the_best_reading_is_returned() -> None:
    script = Script("nothing", "nothing either", GOOD)
    fix = await SelfCorrector(script).correct([], BROKEN)
    assert fix.rounds == 2 and not fix.corrected and len(script.replies) == 1
    assert fix.reply == BROKEN  # its reading had more to offer than plain prose
    assert len(fix.attempts) == 3


async def test_a_good_reply_is_not_reasked() -> None:
    script = Script()
    fix = await SelfCorrector(script).correct([], GOOD)
    assert fix.rounds == 0 and fix.result.ok and script.seen == []


async def test_works_with_a_scripted_model() -> None:
    model = ScriptedModel([reply(GOOD)])

    async def ask(messages: list[Message]) -> str:
        return (await complete(model, messages)).text

    fix = await SelfCorrector(ask).correct([Message("user", "go")], BROKEN)
    assert fix.corrected and model.requests[0].messages[-1].role == "user"


async def test_robust_processor_strategies() -> None:
    rp = RobustProcessor()
    assert rp.process(GOOD).strategy == "strict_parse"
    assert rp.process("**$ create @ a.py**\n--\nx\n--\n").strategy == "auto_repair"
    assert rp.process("Sure:\n```python\nx\n```\n").strategy == "fuzzy_parse"
    assert rp.process("no code at all").strategy == "none"
    fixed = await RobustProcessor(Script(GOOD)).process_with_fallbacks(BROKEN)
    assert fixed.strategy == "self_correct" and fixed.success


def test_debug_processor_shows_each_stage() -> None:
    out = io.StringIO()
    r = DebugProcessor(out).process("- $ run @ ls\n")
    text = out.getvalue()
    for title in ("RAW OUTPUT", "STRICT PARSE: FAILED", "AFTER REPAIR", "REPAIRS", "RESULT: stage=repaired"):
        assert title in text
    assert r.actions[0].path == "ls"


def test_templates_are_data_and_their_examples_are_strict_symops() -> None:
    examples = few_shot_examples()
    assert len(examples) >= 3
    for ex in examples:
        assert parse(ex.assistant).stage == "strict" and parse(ex.assistant).ok
    assert "$ create @ path" in system_prompt()
    prompt = PromptBuilder().build_prompt("add a test", {"files": ["a.py"]})
    assert "- a.py" in prompt and "add a test" in prompt and examples[0].user in prompt
    assert "1. kind at line 3" in correction_message(["kind at line 3"])
