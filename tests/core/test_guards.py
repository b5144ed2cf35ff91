"""Guardrails (input before any token, output, regex, schema, custom) and the TokenGuard."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from duckflow.config import TokenGuardConfig
from duckflow.core.agent import Agent
from duckflow.core.errors import GuardrailTripped, TokenBudgetExceeded
from duckflow.core.guardrails import Guardrail, GuardrailResult
from duckflow.core.token_guard import MemoryCounter, SQLiteCounter, TokenGuard
from duckflow.llm.scripted import ScriptedModel, reply, tool_call
from duckflow.llm.types import Usage

from .conftest import RecordingTrace


async def test_input_guardrail_blocks_before_any_delta_or_model_call(trace: RecordingTrace) -> None:
    async def no_secrets(text: str) -> GuardrailResult:
        await asyncio.sleep(0)
        if "password" in text:
            return GuardrailResult.block("Please do not paste passwords into the chat.")
        return GuardrailResult.ok()

    model = ScriptedModel([reply("should never stream")])
    agent = Agent("a", "x", model=model, guardrails=[Guardrail(custom_funcs=[no_secrets])], trace=trace)
    result = await agent.run("my password is hunter2", raise_errors=False)
    assert [c.type for c in result.chunks] == ["error"]
    assert result.chunks[0].data.message == "Please do not paste passwords into the chat."  # type: ignore[union-attr]
    assert isinstance(result.error, GuardrailTripped) and model.requests == []
    guard_events = [e for e in trace.events if e["event"] == "guardrail"]
    assert guard_events[0]["tripwire"] is True and guard_events[0]["stage"] == "input"
    agent.model = ScriptedModel([reply("hi")])
    assert (await agent.run("hello")).text == "hi"  # clean input passes


async def test_regex_block_does_not_echo_the_match_and_passes_clean_text() -> None:
    guard = Guardrail(name="keys", regex_blocks=[r"sk-[A-Za-z0-9]{8,}"])
    blocked = await guard.validate_input("use sk-abcdefgh12345")
    assert blocked.tripwire and "sk-abcdefgh12345" not in blocked.message and blocked.guardrail == "keys"
    assert not (await guard.validate_input("nothing here")).tripwire
    custom = Guardrail(regex_blocks=[(r"(?i)drop table", "SQL commands are not accepted here.")])
    assert (await custom.validate_input("DROP TABLE users")).message == "SQL commands are not accepted here."


async def test_input_and_output_schemas() -> None:
    class Order(BaseModel):
        item: str
        qty: int

    guard = Guardrail(input_schema=Order, output_schema=Order)
    assert not (await guard.validate_input('{"item": "tea", "qty": 2}')).tripwire
    bad = await guard.validate_input('{"item": "tea"}')
    assert bad.tripwire and "qty" in bad.message and "Order" in bad.message
    assert (await guard.validate_output({"item": "x", "qty": "lots"})).tripwire


async def test_sync_custom_functions_and_their_return_forms() -> None:
    guard = Guardrail(custom_funcs=[lambda t: "too long" if len(t) > 5 else None])
    assert (await guard.validate_input("123456")).message == "too long"
    flag = Guardrail(name="flag", custom_funcs=[lambda t: t == "x"], applies_to="output")
    assert not (await flag.validate_input("x")).tripwire  # only checks output
    out = await flag.validate_output("x")
    assert out.tripwire and "flag" in out.message


async def test_output_guardrail_ends_the_step_with_an_error() -> None:
    guard = Guardrail(custom_funcs=[lambda t: "The answer mentioned an internal host." if "10.0." in t else None],
                      applies_to="output")
    result = await Agent("a", "x", model=ScriptedModel([reply("try 10.0.0.5")]),
                         output_guardrails=[guard]).run("where?", raise_errors=False)
    assert result.chunks[-1].type == "error" and isinstance(result.error, GuardrailTripped)
    assert not any(c.type == "done" for c in result.chunks)


@pytest.mark.parametrize("codec", [None, "symops"])
async def test_output_guardrails_hold_the_text_back_until_they_pass(codec: str | None) -> None:
    """Nothing of a refused answer reaches a channel; an accepted one is shown once, after the check."""
    guard = Guardrail(regex_blocks=[r"10\.0\.\d+"], applies_to="output")
    text = "~ the host is 10.0.0.5\n" if codec else "the host is 10.0.0.5"
    model = ScriptedModel([reply(text, chunks=[text[:6], text[6:]])], supports_tools=codec is None)
    agent = Agent("a", "x", model=model, output_guardrails=[guard], codec=codec)
    refused = [c async for c in agent.stream("where?")]
    assert not any(c.type == "delta" for c in refused)  # not even the harmless first piece
    assert refused[-1].type == "error"
    good = "~ all fine here\n" if codec else "all fine here"
    agent.model = ScriptedModel([reply(good, chunks=[good[:4], good[4:]])], supports_tools=codec is None)
    shown = [c async for c in agent.stream("and now?")]
    deltas = [c.data.text for c in shown if c.type == "delta"]  # type: ignore[union-attr]
    assert [d.strip() for d in deltas] == ["all fine here"]
    done = next(i for i, c in enumerate(shown) if c.type == "done")
    assert max(i for i, c in enumerate(shown) if c.type == "delta") < done


async def test_input_only_guardrails_do_not_hold_text_back() -> None:
    guard = Guardrail(regex_blocks=[r"secret"], applies_to="input")
    model = ScriptedModel([reply("one two", chunks=["one ", "two"])])
    chunks = [c async for c in Agent("a", "x", model=model, guardrails=[guard]).stream("hi")]
    assert [c.data.text for c in chunks if c.type == "delta"] == ["one ", "two"]  # type: ignore[union-attr]


async def test_token_guard_warns_once_then_blocks_before_the_next_call() -> None:
    guard = TokenGuard(warn_at=50, block_at=100, counter=MemoryCounter())

    def echo(text: str) -> str:
        return text

    model = ScriptedModel([
        tool_call("echo", text="hi"),  # usage 30 → under warn
        tool_call("echo", text="hi"),  # +30 → 60+: warn
        tool_call("echo", text="hi"),  # +30 → 100+: block before the tool
        reply("never"),
    ])
    for step in model.steps:
        step.usage = Usage(20, 10)  # type: ignore[union-attr]
    agent = Agent("a", "x", model=model, tools=[echo], token_guard=guard)
    result = await agent.run("go", session="s1", raise_errors=False)
    types = [c.type for c in result.chunks]
    assert types.count("warning") == 1
    assert isinstance(result.error, TokenBudgetExceeded) and types[-1] == "error"
    assert len(model.requests) == 3
    totals = [c.data.session_total for c in result.chunks if c.type == "usage"]  # type: ignore[union-attr]
    assert totals[0] == 30 and totals == sorted(totals) and totals[-1] >= 100
    assert types.count("tool_response") == 2  # the third tool call was stopped
    status = await guard.status("s1")
    assert status.level == "block" and status.total >= 100
    again = await Agent("a", "x", model=ScriptedModel([reply("no")]), token_guard=guard).run(
        "more", session="s1", raise_errors=False)
    assert [c.type for c in again.chunks] == ["error"]  # blocked before the model call
    other = await Agent("a", "x", model=ScriptedModel([reply("yes")]), token_guard=guard).run(
        "more", session="s2")
    assert other.text == "yes"


def test_sqlite_counter_survives_a_new_process(tmp_path: Path) -> None:
    db = tmp_path / "tokens.db"
    counter = SQLiteCounter(db)
    assert asyncio.run(counter.add("s", 40)) == 40
    counter.close()
    code = (
        "import asyncio, sys\n"
        "from duckflow.core.token_guard import SQLiteCounter\n"
        "c = SQLiteCounter(sys.argv[1])\n"
        "print(asyncio.run(c.add('s', 2)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "42"
    fresh = SQLiteCounter(db)
    assert asyncio.run(fresh.get("s")) == 42 and asyncio.run(fresh.get("other")) == 0
    asyncio.run(fresh.reset("s"))
    assert asyncio.run(fresh.get("s")) == 0


async def test_sqlite_counter_is_exact_under_concurrent_adds(tmp_path: Path) -> None:
    a, b = SQLiteCounter(tmp_path / "t.db"), SQLiteCounter(tmp_path / "t.db")
    await asyncio.gather(*[(a if i % 2 else b).add("s", 1) for i in range(100)])
    assert await a.get("s") == 100


def test_from_config_defaults_to_sqlite_in_duckflow_home(tmp_path: Path) -> None:
    guard = TokenGuard.from_config(TokenGuardConfig(warn_at=1, block_at=2, db_path=str(tmp_path / "g.db")))
    assert isinstance(guard.counter, SQLiteCounter) and (tmp_path / "g.db").exists()
    home_guard = TokenGuard.from_config(TokenGuardConfig())
    assert isinstance(home_guard.counter, SQLiteCounter)
    assert Path(home_guard.counter.path).name == "token_guard.db"
    assert isinstance(TokenGuard.from_config(TokenGuardConfig(backend="memory")).counter, MemoryCounter)
    with pytest.raises(Exception, match="warn_at"):
        TokenGuard(warn_at=10, block_at=5)


def _redis_server() -> str | None:
    import shutil

    return shutil.which("redis-server")


@pytest.mark.skipif(_redis_server() is None, reason="redis-server binary not installed")
async def test_redis_counter_against_a_real_server(tmp_path: Path) -> None:
    import socket

    from duckflow.core.token_guard import RedisCounter

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([str(_redis_server()), "--port", str(port), "--save", "",
                             "--dir", str(tmp_path)], stdout=subprocess.DEVNULL)
    try:
        counter = RedisCounter(f"redis://127.0.0.1:{port}/0")
        for _ in range(50):
            try:
                await counter.get("s")
                break
            except Exception:
                await asyncio.sleep(0.1)
        await asyncio.gather(*[counter.add("s", 2) for _ in range(20)])
        assert await counter.get("s") == 40
        await counter.aclose()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def test_a_blocked_session_stays_blocked_after_a_restart(tmp_path: Path) -> None:
    cfg = TokenGuardConfig(warn_at=10, block_at=20, db_path=str(tmp_path / "budget.db"))
    first = Agent("a", "x", model=ScriptedModel([reply("long answer", usage=Usage(15, 10))]),
                  token_guard=TokenGuard.from_config(cfg))
    assert (await first.run("hi", session="persist")).ok
    restarted = Agent("a", "x", model=ScriptedModel([reply("never")]),
                      token_guard=TokenGuard.from_config(cfg))  # a new counter on the same file
    result = await restarted.run("again", session="persist-" + "x")
    assert result.ok  # another session is not affected
    blocked = await Agent("a", "x", model=ScriptedModel([reply("never")]),
                          token_guard=TokenGuard.from_config(cfg)).run("again", session="persist",
                                                                        raise_errors=False)
    assert isinstance(blocked.error, TokenBudgetExceeded) and [c.type for c in blocked.chunks] == ["error"]


async def test_sqlite_counter_answers_inline_and_waits_in_a_thread_when_the_database_is_busy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3
    import time

    db = tmp_path / "t.db"
    counter = SQLiteCounter(db)
    real_to_thread = asyncio.to_thread
    handed: list[str] = []

    async def spy(fn, *args):  # type: ignore[no-untyped-def]
        handed.append(fn.__name__)
        return await real_to_thread(fn, *args)

    monkeypatch.setattr(asyncio, "to_thread", spy)
    assert await counter.add("s", 5) == 5 and await counter.get("s") == 5
    assert handed == []  # nothing to wait for: answered in the loop's thread

    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    other.execute("UPDATE token_usage SET n = n + 100 WHERE session = 's'")
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        for _ in range(10):
            ticks += 1
            await asyncio.sleep(0.02)
        other.execute("COMMIT")

    started = time.monotonic()
    total, _ = await asyncio.gather(counter.add("s", 1), ticker())
    assert total == 106 and handed == ["_add"]  # waited for the lock in a worker thread, counted exactly
    assert ticks == 10 and time.monotonic() - started >= 0.15  # the loop kept running meanwhile
    assert await counter.get("s") == 106
    other.close()
    counter.close()
