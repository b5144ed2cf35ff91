"""Seed 003 routing policy: commands win over rules, rules decide, the classifier falls back, local_only, LINE."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow.errors import ConfigError
from duckflow.llm.scripted import ScriptedModel, fail, reply
from duckflow.orchestra.contracts import InputMessage
from duckflow.orchestra.router import (
    MessageRouter,
    SessionFlags,
    declaration_for,
    load_rules,
    parse_commands,
)
from duckflow.orchestra.settings import RoutingConfig


def msg(text: str, channel: str = "cli") -> InputMessage:
    return InputMessage(channel=channel, session_id="s1", user_text=text)  # type: ignore[arg-type]


async def decide(text: str, *, channel: str = "cli", model: ScriptedModel | None = None,
                 flags: SessionFlags | None = None):  # type: ignore[no-untyped-def]
    router = MessageRouter(RoutingConfig(), classifier_model=model)
    return await router.decide(msg(text, channel), flags)


@pytest.mark.parametrize(("text", "route"), [
    ("fix the bug in app.py", "CODE"),
    ("```python\nprint(1)\n```", "CODE"),
    ("Traceback (most recent call last):\n  File \"a.py\", line 3", "CODE"),
    ("Write a Python function that reverses a string", "CODE"),
    ("このコードのバグを直して", "CODE"),
    ("ログイン機能を実装して", "CODE"),
    ("systemctlでnginxを再起動して", "OPS"),
    ("The production server is down, what should I do?", "OPS"),
    ("障害対応の手順を教えて", "OPS"),
    ("CSVを集計して傾向を見たい", "ANALYZE"),
    ("Analyze the sales figures from last quarter", "ANALYZE"),
    ("最新のニュースを調べて", "RESEARCH"),
    ("Compare React and Vue for a small app", "RESEARCH"),
    ("リリースの段取りを考えて", "PLAN"),
    ("Draft a roadmap for the migration", "PLAN"),
])
async def test_rules_decide(text: str, route: str) -> None:
    d = await decide(text)
    assert (d.primary_route, d.source) == (route, "rules")
    assert d.evidence and d.confidence >= 0.9


@pytest.mark.parametrize("text", ["hello there", "こんにちは", "ありがとう！", "Can you explain recursion?"])
async def test_small_talk_falls_back_to_chat_without_a_classifier(text: str) -> None:
    d = await decide(text)
    assert d.public() == {"primary_route": "CHAT", "source": "fallback", "confidence": 0.0,
                          "reason": d.reason, "evidence": [], "flags": {"local_only": False}}


async def test_commands_win_over_rules_and_count_only_at_the_start_of_a_line() -> None:
    d = await decide("/plan fix the bug in app.py")
    assert (d.primary_route, d.source, d.confidence, d.text) == ("PLAN", "command", 1.0, "fix the bug in app.py")
    d = await decide("see what I wrote\n/research the latest Python release")
    assert (d.primary_route, d.source) == ("RESEARCH", "command")
    d = await decide("please /code this")  # not at the start of a line: no command
    assert d.source == "fallback"
    assert parse_commands("/local /plan x").modes == ["local"]


async def test_local_sets_the_flag_and_code_is_refused_at_the_router_with_how_to_lift_it() -> None:
    flags = SessionFlags()
    d = await decide("/local", flags=flags)
    assert d.flags.local_only and flags.local_only and d.source == "command" and d.primary_route == "CHAT"
    d = await decide("/code fix the parser", flags=flags)
    assert (d.primary_route, d.source, d.refused) == ("CHAT", "command", True)
    assert "/cloud" in d.reason and "/cloud" in d.notice and d.flags.local_only
    d = await decide("fix the bug in app.py", flags=flags)  # CODE by rules: refused as well
    assert (d.primary_route, d.source, d.refused) == ("CHAT", "rules", True)
    d = await decide("/cloud", flags=flags)
    assert not flags.local_only
    d = await decide("/code fix the parser", flags=flags)
    assert d.primary_route == "CODE"


async def test_line_input_always_starts_at_chat_and_calls_no_classifier() -> None:
    model = ScriptedModel([reply('{"route": "PLAN", "confidence": 0.9, "reason": "r", "evidence": ["x"]}')])
    for text in ("/code fix app.py", "fix the bug in app.py", "tell me something"):
        d = await decide(text, channel="line", model=model)
        assert d.primary_route == "CHAT" and "line" in d.evidence[0]
    assert model.requests == []


async def test_classifier_decides_once_when_rules_do_not() -> None:
    model = ScriptedModel([reply('{"route": "PLAN", "confidence": 0.7, "reason": "work", "evidence": ["move"]}')])
    d = await decide("we need to move the office next month", model=model)
    assert (d.primary_route, d.source, d.confidence) == ("PLAN", "classifier", 0.7)
    assert len(model.requests) == 1


@pytest.mark.parametrize("answer", [
    "not json at all",
    '{"route": "PLAN", "confidence": 0.9}',                                          # missing fields
    '{"route": "DANCE", "confidence": 0.9, "reason": "r", "evidence": ["x"]}',     # outside the enum
    '{"route": "PLAN", "confidence": 1.7, "reason": "r", "evidence": ["x"]}',      # outside 0-1
    '{"route": "PLAN", "confidence": 0.5, "reason": "r", "evidence": ["x"]}',      # below 0.6
    '{"route": "CODE", "confidence": 0.7, "reason": "r", "evidence": ["thing"]}',  # CODE below 0.8
    '{"route": "CODE", "confidence": 0.95, "reason": "r", "evidence": ["unicorn"]}',  # evidence not in text
])
async def test_broken_classifier_json_falls_back_to_chat(answer: str) -> None:
    events: list[tuple[str, dict]] = []
    model = ScriptedModel([reply(answer)])
    router = MessageRouter(RoutingConfig(), classifier_model=model, on_event=lambda k, d: events.append((k, d)))
    d = await router.decide(msg("make the thing nicer please"))
    assert (d.primary_route, d.source) == ("CHAT", "fallback") and d.error_reason
    assert [k for k, _ in events] == ["classifier.error", "router.decision"]
    assert len(model.requests) == 1


async def test_classifier_code_needs_strong_evidence_and_a_failed_call_falls_back() -> None:
    model = ScriptedModel([reply('{"route": "CODE", "confidence": 0.9, "reason": "r", "evidence": ["the login function"]}')])
    d = await decide("make the login function faster", model=model)
    assert (d.primary_route, d.source) == ("CODE", "classifier")
    d = await decide("make the login function faster", model=ScriptedModel([fail()]))
    assert (d.primary_route, d.source) == ("CHAT", "fallback")


async def test_declaration_only_when_the_route_changes_and_never_for_chat() -> None:
    flags = SessionFlags()
    first = await decide("/plan the release", flags=flags)
    same = await decide("/plan more of it", flags=flags)
    chat = await decide("/chat thanks", flags=flags)
    again = await decide("/plan again", flags=flags)
    assert first.declaration and not same.declaration and not chat.declaration and again.declaration
    assert declaration_for("CHAT", "CODE", "ja") == "コーディングするね。"


def test_rule_dictionary_is_a_data_file_and_a_broken_one_is_a_clear_error(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rule]]\nroute = "OPS"\nkeywords = ["banana"]\npriority = 1\n', encoding="utf-8")
    assert load_rules(rules).match("a banana").route == "OPS"  # type: ignore[union-attr]
    rules.write_text("[[rule]\n", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_rules(rules)
    with pytest.raises(ConfigError):
        load_rules(tmp_path / "missing.toml")


def test_shipped_rules_compile_when_tried_and_all_of_them_are_valid(tmp_path: Path) -> None:
    import re

    from duckflow.orchestra.router import _load_rules

    shipped = _load_rules(None)  # a fresh copy: the process-wide one may be compiled already
    patterns = [p for rule in shipped.rules for p in rule._compiled]
    assert patterns and not any(p.is_compiled for p in patterns)  # type: ignore[union-attr]
    assert shipped.match("Create hello.py").route == "CODE"  # type: ignore[union-attr]
    assert 0 < sum(p.is_compiled for p in patterns) < len(patterns)  # type: ignore[union-attr]
    for rule in shipped.rules:  # every shipped pattern is a valid regex (a person's file is checked at load)
        for source in rule.patterns:
            re.compile(source, re.I | re.A)
    bad = tmp_path / "rules.toml"
    bad.write_text('[[rule]]\nroute = "OPS"\npatterns = ["(unclosed"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid regular expression"):
        load_rules(bad)


def _cli(*args: str, env_home: Path) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "DUCKFLOW_HOME": str(env_home), "DUCKFLOW_CONFIG": os.devnull}
    code = "import sys; from duckflow.channels.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=60)


def test_route_command_prints_the_routing_decision_json(tmp_path: Path) -> None:
    out = _cli("route", "/code fix it", "--local-only", "--json", env_home=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"primary_route", "source", "confidence", "reason", "evidence", "flags"}
    assert data["primary_route"] == "CHAT" and data["source"] == "command" and data["flags"] == {"local_only": True}
    out = _cli("route", "CSVを集計して", "--channel", "slack", "--json", env_home=tmp_path)
    assert json.loads(out.stdout)["primary_route"] == "ANALYZE"
    out = _cli("route", "CSVを集計して", "--channel", "line", "--json", env_home=tmp_path)
    assert json.loads(out.stdout)["primary_route"] == "CHAT"


@pytest.mark.parametrize("text", [
    "What's your plan for the weekend?", "Do you have any sources of motivation?",
    "Can you explain what a JSON file is?", "I went to a conference on architecture last week",
    "I'm going to deploy myself to the couch tonight", "Python is my favorite language, why do people like it?",
    "会議の議事録を要約して", "明日の予定を教えて",
])
async def test_weak_words_in_small_talk_do_not_trigger_rules(text: str) -> None:
    assert (await decide(text)).source == "fallback"


async def test_full_width_slash_from_a_japanese_ime_is_a_command() -> None:
    d = await decide("／plan 旅行")
    assert (d.primary_route, d.source) == ("PLAN", "command")


def test_route_command_shows_a_follow_up_of_a_coding_task(tmp_path: Path) -> None:
    out = _cli("route", "yes", "--coding", "open", "--previous", "CODE", "--json", env_home=tmp_path)
    data = json.loads(out.stdout)
    assert (data["primary_route"], data["evidence"]) == ("CODE", ["follow-up:coding-task"])
    out = _cli("route", "yes", "--json", env_home=tmp_path)
    assert json.loads(out.stdout)["primary_route"] == "CHAT"


def test_route_command_has_no_side_effects(tmp_path: Path) -> None:
    out = _cli("route", "/local", "--channel", "line", "--json", env_home=tmp_path)
    assert json.loads(out.stdout)["flags"]["local_only"] is True
    assert not (tmp_path / "events").exists() and not (tmp_path / "orchestra.db").exists()


async def test_a_mode_command_with_text_routes_the_text_and_has_no_notice() -> None:
    flags = SessionFlags()
    d = await decide("/local\nCSVを集計して", flags=flags)
    assert (d.primary_route, d.source, d.flags.local_only, d.notice) == ("ANALYZE", "rules", True, "")
    d = await decide("/cloud", flags=flags)
    assert d.notice and not d.flags.local_only


CORPUS = Path(__file__).parents[1] / "corpus" / "routing" / "cases.jsonl"


@pytest.mark.parametrize("case", [json.loads(x) for x in CORPUS.read_text(encoding="utf-8").splitlines()],
                         ids=lambda c: c["text"][:40])
async def test_routing_corpus(case: dict[str, str]) -> None:
    """English and Japanese phrasings of seed 003's categories, small talk that must stay CHAT, commands."""
    d = await decide(case["text"])
    assert (d.primary_route, d.source) == (case["route"], case["source"])


async def test_a_coding_task_keeps_its_follow_ups_on_code_until_a_route_command() -> None:
    flags = SessionFlags()
    first = await decide("fix the bug in app.py", flags=flags)
    assert (first.primary_route, flags.coding) == ("CODE", "open") and first.declaration
    for follow_up in ("yes", "now add a test", "call it data.csv instead", "The second one, please",
                      "Not done: it still prints nothing", "はい、それで"):
        d = await decide(follow_up, flags=flags)  # without the task these are CHAT or ANALYZE
        assert (d.primary_route, d.source, d.declaration) == ("CODE", "rules", ""), follow_up
        assert "follow-up:coding-task" in d.evidence and flags.coding == "open"
    assert (await decide("call it data.csv instead")).primary_route == "ANALYZE"  # (no task under way)
    left = await decide("/chat what do you think of tabs?", flags=flags)
    assert (left.primary_route, flags.coding) == ("CHAT", "")
    assert (await decide("yes", flags=flags)).primary_route == "CHAT"  # the task was left


async def test_after_a_coding_task_ended_only_what_goes_on_with_it_stays_code() -> None:
    flags = SessionFlags(prev_route="CODE", coding="ended")
    d = await decide("now add a test for it", flags=flags)
    assert (d.primary_route, d.declaration, flags.coding) == ("CODE", "", "open")
    flags.coding = "ended"
    d = await decide("What is a monad, in plain words?", flags=flags)  # another subject
    assert (d.primary_route, d.source, flags.coding) == ("CHAT", "fallback", "")
    flags.coding = "ended"
    d = await decide("also summarise the sales data by month", flags=flags)  # a rule of another route wins
    assert (d.primary_route, flags.coding) == ("ANALYZE", "")
    flags.coding = "ended"  # a classifier that routes it elsewhere wins too
    model = ScriptedModel([reply('{"route": "PLAN", "confidence": 0.9, "reason": "r", "evidence": ["trip"]}')])
    d = await decide("and then the trip next month", model=model, flags=flags)
    assert (d.primary_route, d.source, flags.coding) == ("PLAN", "classifier", "")


async def test_local_only_suspends_the_coding_task_and_line_never_follows_it() -> None:
    flags = SessionFlags(local_only=True, prev_route="CODE", coding="open")
    d = await decide("yes", flags=flags)  # not refused as CODE, not sent anywhere as coding
    assert (d.primary_route, d.source, d.refused, flags.coding) == ("CHAT", "fallback", False, "open")
    flags = SessionFlags(prev_route="CODE", coding="open")
    d = await decide("yes", channel="line", flags=flags)
    assert d.primary_route == "CHAT" and "line_forced_chat" in d.evidence and flags.coding == "open"
    d = await decide("/local", flags=flags)  # a mode switch alone changes no subject
    assert flags.coding == "open" and flags.local_only


async def test_a_task_is_coding_by_nature_its_first_route_is_declared_only_when_not_code() -> None:
    router = MessageRouter(RoutingConfig())
    d = await router.decide(msg("make the greeting friendlier"), SessionFlags(), task=True, fallback="CODE")
    assert (d.primary_route, d.source, d.declaration) == ("CODE", "fallback", "")
    d = await router.decide(msg("fix the bug in app.py"), SessionFlags(), task=True)
    assert (d.primary_route, d.declaration) == ("CODE", "")
    d = await router.decide(msg("Draft a roadmap for the migration"), SessionFlags(), task=True)
    assert (d.primary_route, d.declaration) == ("PLAN", "Planning this step by step.")
    d = await router.decide(msg("make the greeting friendlier"), SessionFlags(local_only=True), task=True,
                            fallback="CODE")
    assert (d.primary_route, d.refused) == ("CHAT", False)  # never CODE while local_only


async def test_a_cloud_classifier_is_not_asked_unless_conversation_may_go_to_the_cloud() -> None:
    answer = '{"route": "PLAN", "confidence": 0.9, "reason": "r", "evidence": ["move"]}'
    cloud = ScriptedModel([reply(answer)], name="cloud", is_local=False)
    d = await MessageRouter(RoutingConfig(), classifier_model=cloud).decide(msg("we need to move the office"))
    assert (d.primary_route, d.source) == ("CHAT", "fallback") and cloud.requests == []
    assert "cloud model, not asked" in d.notes[0]
    allowed = RoutingConfig(cloud_routes=["CODE", "CHAT", "PLAN"])
    d = await MessageRouter(allowed, classifier_model=cloud).decide(msg("we need to move the office"))
    assert (d.primary_route, d.source) == ("PLAN", "classifier") and len(cloud.requests) == 1
    d = await MessageRouter(allowed, classifier_model=cloud).decide(msg("we need to move the office"),
                                                                    SessionFlags(local_only=True))
    assert d.source == "fallback" and len(cloud.requests) == 1
