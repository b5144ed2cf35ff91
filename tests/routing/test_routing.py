"""Routing: commands, ordered rules, the classifier's JSON answer and the chain's fallbacks."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from duckflow.errors import ConfigError
from duckflow.llm.errors import LLMTimeoutError
from duckflow.llm.scripted import ScriptedModel, fail, reply
from duckflow.routing import (
    CommandRouter,
    LLMRouter,
    Route,
    RouterChain,
    Rule,
    RuleRouter,
)

ROUTES = [
    Route("CHAT", "small talk and questions"),
    Route("CODE", "write or change code", examples=("fix the bug in app.py",), min_confidence=0.8,
          needs_evidence=True),
    Route("PLAN", "plan a larger piece of work"),
]


def answer(route: str, confidence: float = 0.9, evidence: Any = ("fix",), reason: str = "r") -> str:
    return json.dumps({"route": route, "confidence": confidence, "reason": reason, "evidence": list(evidence)})


async def test_commands_only_at_the_start() -> None:
    router = CommandRouter({"/code": "CODE", "plan": "PLAN"})
    d = await router.route("  /code fix the parser\nplease")
    assert d is not None and (d.route, d.source, d.args) == ("CODE", "command", "fix the parser\nplease")
    assert await router.route("please /code this") is None
    assert await router.route("/unknown thing") is None
    assert (await router.route("/PLAN")).route == "PLAN"  # type: ignore[union-attr]
    assert await router.route("/codex") is None


async def test_rules_priority_then_definition_order() -> None:
    router = RuleRouter([
        Rule("CHAT", keywords=["hello"], name="greeting"),
        Rule("OPS", keywords=["deploy"], name="ops-low"),
        Rule("CODE", patterns=[r"\bfix\b.*\.py"], priority=10, name="code-file"),
        Rule("PLAN", keywords=["deploy"], name="plan-same-priority"),
    ])
    d = router.match("hello, please fix app.py")
    assert d is not None and d.route == "CODE" and d.evidence == ["regex:fix app.py"]
    assert router.match("deploy it").route == "OPS"  # type: ignore[union-attr]
    assert router.match("nothing here") is None


async def test_rules_match_japanese_keywords_and_predicates() -> None:
    router = RuleRouter([
        Rule("CODE", keywords=["実装"]),
        Rule("OPS", predicate=lambda text, ctx: bool(ctx.get("ops_mode"))),
    ])
    assert router.match("この機能を実装してください").route == "CODE"  # type: ignore[union-attr]
    assert router.match("hi", {"ops_mode": True}).route == "OPS"  # type: ignore[union-attr]
    assert router.match("hi", {}) is None


def test_rules_from_data_and_bad_rules() -> None:
    router = RuleRouter.from_dicts([{"route": "CODE", "keywords": ["bug"], "priority": 2},
                                    {"route": "CHAT", "patterns": ["^hi"]}])
    assert [r.route for r in router.rules] == ["CODE", "CHAT"]
    with pytest.raises(ConfigError, match="unknown keys"):
        RuleRouter.from_dicts([{"route": "X", "keyword": ["typo"]}])
    with pytest.raises(ConfigError, match="no keywords"):
        Rule("X")
    with pytest.raises(ConfigError, match="invalid regular expression"):
        Rule("X", patterns=["("])


async def test_classifier_reads_json_and_prompt_lists_routes() -> None:
    model = ScriptedModel([reply("Sure!\n```json\n" + answer("CODE", 0.92, ["fix", "app.py"]) + "\n```")])
    router = LLMRouter(model, ROUTES)
    d = await router.route("fix the bug in app.py")
    assert d is not None and (d.route, d.confidence, d.source) == ("CODE", 0.92, "classifier")
    assert d.evidence == ["fix", "app.py"]
    system = model.requests[0].messages[0].content
    assert "- CODE: write or change code" in system and "CHAT, CODE, PLAN" in system
    assert model.requests[0].messages[1].content == "fix the bug in app.py"


@pytest.mark.parametrize(("text", "error"), [
    ("I think it is code", "not valid"),
    ('{"route": "CODE", "reason": "x"}', "not valid"),
    (answer("DEPLOY"), "unknown route 'DEPLOY'"),
    (answer("PLAN", 1.7), "not valid"),
    (answer("PLAN", -0.1), "not valid"),
    (answer("PLAN", 0.3), "below 0.6"),
    (answer("CODE", 0.7), "below 0.8"),
    (answer("CODE", 0.95, []), "without evidence"),
])
async def test_bad_classifier_answers_are_refused(text: str, error: str) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    router = LLMRouter(ScriptedModel([reply(text)]), ROUTES, on_event=lambda n, f: events.append((n, f)))
    assert await router.route("x") is None
    assert router.last_error is not None and re.search(re.escape(error), router.last_error)
    assert events[0][0] == "classifier.error"


async def test_classifier_failure_falls_back_to_rules() -> None:
    rules = RuleRouter([Rule("PLAN", keywords=["roadmap"])])
    router = LLMRouter(ScriptedModel([fail(LLMTimeoutError("slow"))]), ROUTES, fallback=rules)
    d = await router.route("draft a roadmap")
    assert d is not None and d.route == "PLAN" and d.source == "rules"
    assert "classifier call failed" in d.notes[-1]


async def test_chain_order_and_a_single_classifier_call() -> None:
    model = ScriptedModel([reply(answer("PLAN", 0.9)), reply("not json at all")])
    chain = RouterChain([
        CommandRouter({"code": "CODE"}),
        RuleRouter([Rule("CODE", keywords=["traceback"], priority=5)]),
        LLMRouter(model, ROUTES),
    ], fallback_route="CHAT")
    assert (await chain.route("/code do it")).source == "command"
    assert (await chain.route("here is a traceback")).source == "rules"
    assert model.requests == []
    d = await chain.route("let's organise next quarter")
    assert (d.route, d.source) == ("PLAN", "classifier") and len(model.requests) == 1
    d2 = await chain.route("hmm")
    assert (d2.route, d2.source, d2.confidence) == ("CHAT", "fallback", 0.0)
    assert len(model.requests) == 2
    assert any("not valid" in n for n in d2.notes)


async def test_chain_reports_decisions() -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    chain = RouterChain([CommandRouter({"chat": "CHAT"})], on_event=lambda n, f: events.append((n, f)))
    await chain.route("/chat hi")
    assert events == [("router.decision", {"route": "CHAT", "confidence": 1.0, "reason": "explicit command /chat",
                                           "evidence": ["command:/chat"], "source": "command", "args": "hi",
                                           "notes": []})]
