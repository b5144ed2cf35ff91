"""The in-process llama.cpp provider with the bundled models (real inference, small and bounded)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duckflow.llm.constrain import constrained
from duckflow.llm.local import LocalModel, load_llama
from duckflow.llm.localmodels import resolve_local
from duckflow.llm.registry import get_model
from duckflow.llm.tokens import count_tokens
from duckflow.llm.types import Message, TextDelta, complete
from duckflow.protocols.grammar import json_string_rule
from tests.local.conftest import needs_llama

pytestmark = [pytest.mark.local_model, needs_llama, pytest.mark.timeout(1800)]


def smol() -> LocalModel:
    return LocalModel(resolve_local("smollm2", allow_pip=False), n_ctx=2048, n_threads=2)


async def test_streams_deltas_with_usage_and_is_loaded_once() -> None:
    model = smol()
    msgs = [Message("system", "Answer briefly."), Message("user", "Say hello.")]
    events = [ev async for ev in model.stream(msgs, settings=constrained(model, max_tokens=12))]
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert deltas and events[-1].kind == "finish" and events[-2].kind == "usage"
    usage = events[-2].usage  # type: ignore[union-attr]
    assert 0 < usage.completion_tokens <= 12 and usage.prompt_tokens > 5
    assert smol().llama is model.llama is load_llama(str(model.info.path), 2048, 2)


async def test_grammar_and_json_schema_constrain_the_reply() -> None:
    model = smol()
    msgs = [Message("user", "Is the sky green? Answer in a long essay.")]
    resp = await complete(model, msgs, settings=constrained(model, max_tokens=8,
                                                             grammar='root ::= "yes" | "no"\n'))
    assert resp.text in ("yes", "no")
    schema = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 20},
                                               "sure": {"type": "boolean"}},
              "required": ["answer", "sure"]}
    resp = await complete(model, [Message("user", 'Give JSON with "answer" and "sure".')],
                          settings=constrained(model, max_tokens=40, json_schema=schema))
    data = json.loads(resp.text)
    assert set(data) == {"answer", "sure"} and isinstance(data["sure"], bool)
    off = constrained(model, max_tokens=5, grammar='root ::= "yes"', enabled=False)
    assert off is not None and "grammar" not in off.extra and off.max_tokens == 5


async def test_json_string_grammar_allows_escaped_quotes() -> None:
    model = smol()
    grammar = f'root ::= "{{\\"q\\": " string "}}"\n{json_string_rule()}\n'
    resp = await complete(model, [Message("user", 'Write JSON {"q": "..."} quoting "hi" inside.')],
                          settings=constrained(model, max_tokens=30, grammar=grammar))
    assert isinstance(json.loads(resp.text)["q"], str)


def test_token_counts_use_the_models_own_tokenizer() -> None:
    model = smol()
    n = model.count_tokens("def add(a, b):\n    return a + b\n")
    got = count_tokens("def add(a, b):\n    return a + b\n", model.name)
    assert got.exact and got.tokens == n and "own tokenizer" in got.method


async def test_default_model_by_name_is_verified_and_answers(default_model_home: Path) -> None:
    model = get_model("local:default")
    assert isinstance(model, LocalModel) and model.info.params_b == 0.5
    resp = await complete(model, [Message("user", "Write the Python keyword that defines a function.")],
                          settings=constrained(model, max_tokens=4, grammar='root ::= "def" | "class" | "lambda"\n'))
    assert resp.text == "def"


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def test_memory_stays_flat_over_calls_with_different_prompts() -> None:
    """A call must not keep a copy of its prompt's logits (n_tokens × n_vocab float32): a
    LlamaRAMCache did, +60 MB a call for SmolLM2 with a 300-token prompt, 0.5 GB for Qwen2.5."""
    model = smol()
    settings = constrained(model, max_tokens=4)
    await complete(model, [Message("user", "Say one word.")], settings=settings)
    before = _rss_mb()
    for word in ("apple", "river", "stone", "cloud", "green"):
        await complete(model, [Message("system", f"You only talk about {word}s. " * 40),
                               Message("user", f"Name a {word}.")], settings=settings)
    assert _rss_mb() - before < 60, f"RSS grew {_rss_mb() - before:.0f} MB over 5 calls"


def test_a_run_in_process_exits_without_a_traceback(tmp_path: Path, default_model_home: Path) -> None:
    """`make run` calls the CLI in its own process; at exit llama_cpp's `Llama.__del__` freed the
    model after the module's globals were gone and printed an ignored TypeError traceback to the
    person's terminal. The models are now freed by an atexit hook, while everything still exists."""
    import subprocess
    import sys

    ws = tmp_path / "ws"
    ws.mkdir()
    code = ("from duckflow.channels.cli.main import main\n"
            f"rc = main(['run', 'Create hi.py that prints hi.', '-w', {str(ws)!r}, '--model', "
            "'local:default', '--auto-approve-workspace', '--max-turns', '1'])\n"
            "print('returned', rc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert "returned" in done.stdout, (done.stdout + done.stderr)[-2000:]
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr[-2000:]
