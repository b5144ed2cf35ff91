"""One JSON answer from a SmartAO agent, through the engine's loop, validated, re-asked once.

Every SmartAO agent that needs a model is a `core.Agent` (so TokenGuard, traces, retries and
guardrails apply as for any agent). `ask_json` runs it, reads the reply with the project's one
JSON reader (`protocols.jsonreply.read_json`), and on a bad reply asks once more naming the
errors. A reply that is still bad is an `EssayError`: nothing is made up in its place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from duckflow.errors import DuckflowError
from duckflow.llm.types import ModelSettings

T = TypeVar("T", bound=BaseModel)
Check = Callable[[Any], list[str]]


class EssayError(DuckflowError):
    """A SmartAO step could not produce a trustworthy result (the message says why)."""


@dataclass
class AgentLog:
    """What the agents did in one essay session: notices for the person, chunks, usage."""

    notices: list[str] = field(default_factory=list)
    chunks: list[Any] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    progress: Callable[[str], None] | None = None  # "criterion 2 of 5 (evidence)" while a call runs
    _codes: set[Any] = field(default_factory=set)

    def on_chunk(self, chunk: Any) -> None:
        self.chunks.append(chunk)
        ctype = getattr(chunk, "type", "")
        data = getattr(chunk, "data", None)
        if ctype == "warning":
            code, msg = _field(data, "code"), _field(data, "message")
            if msg and code not in self._codes:
                self._codes.add(code)
                self.notices.append(msg)
        elif ctype == "usage":
            self.prompt_tokens += int(_field(data, "prompt_tokens") or 0)
            self.completion_tokens += int(_field(data, "completion_tokens") or 0)


def _field(data: Any, name: str) -> Any:
    if isinstance(data, dict):
        return data.get(name)
    return getattr(data, name, None)


def json_settings(model: Any, schema: type[BaseModel], max_tokens: int,
                  temperature: float = 0.2) -> ModelSettings:
    """A bounded, low-temperature call; for local backends the answer is constrained to the
    schema's grammar (`llm.constrain`: llama.cpp grammar, Ollama `format`, `response_format`)."""
    from duckflow.llm.constrain import constrained

    local = constrained(model, max_tokens=max_tokens, json_schema=schema.model_json_schema(),
                        temperature=min(temperature, 0.1))
    return local or ModelSettings(temperature=temperature, max_tokens=max_tokens)


async def ask_json(agent: Any, prompt: str, schema: type[T], *, session: str, log: AgentLog,
                   check: Check | None = None) -> T:
    """Run `agent` on `prompt` and return its answer as `schema` (one re-ask on a bad reply)."""
    from duckflow.protocols.jsonreply import read_json, reask_message, schema_hint

    errors: list[str] = []
    text = prompt
    for _attempt in range(2):
        reply, error = await _run(agent, text, session, log)
        if error:
            raise EssayError(f"{agent.name}: {error}", hint="check the model (--model) and try again")
        parsed = read_json(reply, schema)
        errors = list(parsed.errors) if not parsed.ok else (check(parsed.value) if check else [])
        if not errors:
            return parsed.value
        text = prompt + "\n\n" + reask_message(errors, schema_hint(schema))
    raise EssayError(f"{agent.name} gave no usable answer after a re-ask: {'; '.join(errors)[:300]}",
                     hint="try a larger model with --model, or run again")


async def _run(agent: Any, text: str, session: str, log: AgentLog) -> tuple[str, str | None]:
    """The agent's final text and the error that ended its run, if any (a fresh session per call)."""
    import uuid

    final = ""
    error: str | None = None
    log.calls += 1
    async for chunk in agent.stream(text, session=f"{session}:{uuid.uuid4().hex[:8]}"):
        log.on_chunk(chunk)
        if chunk.type == "done":
            final = _field(chunk.data, "text") or ""
        elif chunk.type == "error":
            error = _field(chunk.data, "message") or "the model call failed"
    return final, error


def essay_guard(key: str, *, warn_at: int, block_at: int, counter: Any = None) -> Any:
    """A TokenGuard that counts every agent call of one essay session under `key`."""
    from duckflow.core.token_guard import TokenGuard, TokenStatus

    class EssayTokenGuard(TokenGuard):
        async def add(self, session: str, n: int) -> TokenStatus:
            return await super().add(key, n)

        async def status(self, session: str) -> TokenStatus:
            return await super().status(key)

    return EssayTokenGuard(warn_at=warn_at, block_at=block_at, counter=counter)
