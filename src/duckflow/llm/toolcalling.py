"""Which models call tools natively and reliably: a small table of families, and probes remembered.

Every HTTP provider accepts tool definitions, but many models behind them do not use them
reliably (small local models, reasoning models without tool support, code-completion
models). `reliable_native(model)` answers from, in order: a probe remembered for that exact
model name (`duckflow models probe NAME`, kept in DUCKFLOW_HOME/models/tool_calling.json),
the family table below, and otherwise "no" — such models get the Sym-Ops text protocol,
which any model that can write text can follow.

The table lists families whose providers document native tool calling (OpenAI function
calling, Anthropic tool use, Google function calling, Mistral function calling, and the
Ollama library's "tools" tag for Llama 3.1+, Qwen 2.5/3 ≥ 7B, Mistral, Command R), and
families known not to have it (DeepSeek-R1 distills, Gemma 2, Phi, CodeLlama, sub-7B Qwen,
SmolLM, the bundled in-process models).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duckflow.llm.types import Message, ModelSettings, ToolSpec

# (pattern on the model name without its provider prefix, native tool calling is reliable)
FAMILIES: tuple[tuple[str, bool], ...] = (
    (r"deepseek-r1|r1-distill", False),
    (r"(^|[/:-])(gemma|phi|codellama|tinyllama|smollm|starcoder|codegemma)", False),
    (r"qwen2\.5(-coder)?[:-](0\.5|1\.5|3)b", False),
    (r"qwen3[:-](0\.6|1\.7|4)b", False),
    (r"^o1-(mini|preview)", False),
    (r"^gpt-(4o|4\.1|4-turbo|4|5|3\.5-turbo)", True),
    (r"^o[134](-mini|-pro)?\b", True),
    (r"claude-(3|sonnet-4|opus-4|haiku-4|[a-z]+-4)", True),
    (r"gemini-(1\.5|2|2\.5)", True),
    (r"mistral-(large|medium|small)|mistral-nemo|mixtral|ministral|codestral", True),
    (r"(^|[/:])llama-?3\.[123]|llama-?4", True),
    (r"qwen2\.5|qwen3|qwq", True),
    (r"command-r|command-a", True),
)
PROVIDERS = ("openai", "anthropic", "ollama", "local", "openrouter", "groq", "together", "azure")
# providers Duckflow builds from a name: their supports_tools says the API takes tools, not that
# the model behind it uses them well, so the table and probes decide for them
BUILT_BY_NAME = frozenset((*PROVIDERS, "vllm", "lmstudio", "llamacpp"))


def _bare(name: str) -> str:
    """`ollama:qwen2.5:7b` -> `qwen2.5:7b`; `openai:gpt-4o` -> `gpt-4o` (lower case)."""
    low = name.strip().lower()
    head, sep, rest = low.partition(":")
    return rest if sep and head in PROVIDERS else low


def family_verdict(name: str) -> bool | None:
    """What the table says about `name` (None: not in the table)."""
    bare = _bare(name)
    if name.lower().startswith("local:"):
        return False  # the bundled in-process models: grammar-constrained text, no native calls
    for pattern, ok in FAMILIES:
        if re.search(pattern, bare):
            return ok
    return None


def _memory_file() -> Path:
    from duckflow.paths import duckflow_home

    return duckflow_home() / "models" / "tool_calling.json"


def _load() -> dict[str, Any]:
    try:
        data = json.loads(_memory_file().read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remembered(name: str) -> bool | None:
    """The remembered probe of `name` (None: never probed)."""
    entry = _load().get(name)
    return bool(entry["native"]) if isinstance(entry, dict) and "native" in entry else None


def remember(name: str, native: bool, detail: str) -> Path:
    path = _memory_file()
    data = _load()
    data[name] = {"native": native, "detail": detail[:200], "checked_at": int(time.time())}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    tmp.replace(path)
    return path


def reliable_native(model: Any) -> bool:
    """Whether `model` should get native tool calling (else a text protocol)."""
    if not getattr(model, "supports_tools", False):
        return False
    name = str(getattr(model, "name", ""))
    if name.startswith("scripted:"):
        return True  # a script's replies are what its author wrote: its flag is the truth
    if name.partition(":")[0].lower() not in BUILT_BY_NAME:
        return True  # a Model the developer wrote: its supports_tools is its own claim, not a guess
    probed = remembered(name)
    if probed is not None:
        return probed
    return bool(family_verdict(name))


PROBE_TOOL = ToolSpec("get_weather", "Get the current weather of a city.", {
    "type": "object", "properties": {"city": {"type": "string", "description": "the city"}},
    "required": ["city"]})  # fmt: skip


@dataclass
class ProbeResult:
    native: bool
    detail: str


async def probe(model: Any) -> ProbeResult:
    """One call offering one tool; native tool calling works when the model calls it properly."""
    messages = [Message("system", "You can call tools. Use them when asked."),
                Message("user", "What is the weather in Paris right now? Call get_weather to find out.")]
    text: list[str] = []
    calls = []
    async for event in model.stream(messages, tools=[PROBE_TOOL], settings=ModelSettings(max_tokens=200)):
        if event.kind == "tool_call":
            calls.append(event.call)
        elif event.kind == "text":
            text.append(event.text)
    good = [c for c in calls if c.name == "get_weather" and "paris" in str(c.arguments.get("city", "")).lower()]
    if good:
        return ProbeResult(True, f"called get_weather({good[0].arguments})")
    if calls:
        return ProbeResult(False, f"called {calls[0].name}({calls[0].arguments}) instead of get_weather(city=Paris)")
    said = "".join(text).strip().replace("\n", " ")
    return ProbeResult(False, f"answered in text instead of calling the tool: {said[:80]!r}")
