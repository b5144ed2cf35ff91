"""One JSON reader for model replies: unwrap, repair, validate, and say what was done."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from duckflow.protocols.jsonreply import read_json, reask_message, schema_hint


class Decision(BaseModel):
    rationale: str
    step: Literal["plan", "execute", "review"]
    confidence: float = 1.0


@pytest.mark.parametrize(
    ("text", "value", "repairs"),
    [
        ('{"a": 1}', {"a": 1}, []),
        ('```json\n{"a": 1}\n```', {"a": 1}, ["stripped_code_fence"]),
        ('```\n[1, 2]\n```\nDone.', [1, 2], ["stripped_code_fence"]),
        ('Sure! Here is the result: {"a": {"b": [1, "}"]}} Hope it helps.', {"a": {"b": [1, "}"]}}, ["extracted_from_prose"]),
        ('{"a": 1, "b": 2,}', {"a": 1, "b": 2}, ["json_repair"]),
        ("{'a': 'x', 'b': True}", {"a": "x", "b": True}, ["json_repair"]),
        ('{"a": 1, // the answer\n "b": 2}', {"a": 1, "b": 2}, ["json_repair"]),
        ('{"a": 1, "b": [1, 2', {"a": 1, "b": [1, 2]}, ["json_repair", "closed_truncated_json"]),
        ('```json\n{"a": "x"', {"a": "x"}, ["stripped_code_fence", "json_repair", "closed_truncated_json"]),
        ("結果は次の通りです：{\"答え\": \"はい\"} 以上です。", {"答え": "はい"}, ["extracted_from_prose"]),
        ("true", True, []),
        ('\r\n  {"a": [1,\r\n 2]}  \r\n', {"a": [1, 2]}, []),
    ],
)
def test_broken_replies_are_read(text: str, value: object, repairs: list[str]) -> None:
    got = read_json(text)
    assert got.ok, got.errors
    assert got.value == value
    assert got.repairs == repairs


@pytest.mark.parametrize("text", ["", "   \n", "I cannot do that.", "{garbage nonsense}", "{"])
def test_nothing_is_invented(text: str) -> None:
    got = read_json(text)
    assert not got.ok and got.value is None and got.errors


def test_schema_validation_and_errors_for_reask() -> None:
    good = read_json('```json\n{"rationale": "read first", "step": "plan"}\n```', Decision)
    assert good.ok and isinstance(good.value, Decision) and good.value.step == "plan"
    bad = read_json('{"step": "dance", "confidence": "high"}', Decision)
    assert not bad.ok and bad.value is None
    text = "\n".join(bad.errors)
    assert "`rationale` is missing" in text
    assert "`step`" in text and "'plan'" in text and '"dance"' in text
    assert "`confidence`" in text
    msg = reask_message(bad.errors, schema_hint(Decision))
    assert "`rationale` is missing" in msg and '"step"' in msg and "exactly one JSON" in msg


def test_second_candidate_used_when_first_does_not_validate() -> None:
    text = 'Format: {"x": 1}. Answer: {"rationale": "ok", "step": "review"}'
    got = read_json(text, Decision)
    assert got.ok and got.value.step == "review"


def test_double_encoded_json_string() -> None:
    got = read_json('"{\\"rationale\\": \\"r\\", \\"step\\": \\"execute\\"}"', Decision)
    assert got.ok and "decoded_json_string" in got.repairs


def test_nested_error_path() -> None:
    class Outer(BaseModel):
        items: list[Decision]

    got = read_json('{"items": [{"rationale": "a", "step": "plan"}, {"rationale": "b"}]}', Outer)
    assert not got.ok and any("items[1].step" in e for e in got.errors)


def test_to_dict_dumps_models() -> None:
    got = read_json('{"rationale": "r", "step": "plan"}', Decision)
    assert got.to_dict() == {
        "ok": True,
        "value": {"rationale": "r", "step": "plan", "confidence": 1.0},
        "repairs": [],
        "errors": [],
    }


async def test_reask_loop_names_errors_and_keeps_history_clean() -> None:
    from duckflow.llm.types import Message
    from duckflow.protocols.jsonreply import read_json_reasking

    replies = iter(['{"step": "dance"}', '```json\n{"rationale": "ok", "step": "plan"}\n```'])
    seen: list[list[Message]] = []

    async def complete(messages: list[Message]) -> str:
        seen.append(list(messages))
        return next(replies)

    history = [Message("user", "decide")]
    got = await read_json_reasking(complete, history, Decision)
    assert got.ok and got.value.step == "plan" and len(got.attempts) == 1
    assert history == [Message("user", "decide")]
    reask = seen[1][-1].content
    assert seen[1][-2].content == '{"step": "dance"}' and "`rationale` is missing" in reask


async def test_reask_loop_gives_up_after_two_rounds() -> None:
    from duckflow.llm.types import Message
    from duckflow.protocols.jsonreply import read_json_reasking

    calls = 0

    async def complete(messages: list[Message]) -> str:
        nonlocal calls
        calls += 1
        return "I would rather not."

    got = await read_json_reasking(complete, [Message("user", "decide")], Decision)
    assert not got.ok and calls == 3 and len(got.attempts) == 3


@pytest.mark.parametrize(
    "text",
    [
        '<think>The user wants {"a": 2}? or {x}</think>\n{"a": 1}',
        'the format is {"a": 2} I think</think>\n```json\n{"a": 1}\n```',
    ],
)
def test_reasoning_blocks_are_not_read_as_the_answer(text: str) -> None:
    got = read_json(text)
    assert got.ok and got.value == {"a": 1} and got.repairs[0] == "removed_thinking"


def test_reasoning_only_is_not_an_answer() -> None:
    got = read_json('<think>maybe {"a": 1}')
    assert not got.ok and "only reasoning" in got.errors[0]
