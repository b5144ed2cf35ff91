"""Ollama's native /api/chat, streamed as NDJSON, with a health check and a bounded restart.

Wire format (Ollama docs, docs/api.md): POST /api/chat with `stream: true`; each line is a JSON
object with `message.content` / `message.tool_calls`, the last one has `done: true` and the
counts `prompt_eval_count` / `eval_count`. Requests carry `keep_alive: -1` (keep the model
loaded: a reload costs seconds on every call) and `options.num_ctx` (8192 by default: Ollama's
own default context is smaller than our prompts; seed 003 §10).

Health: the server answers `/api/version`, the model is listed by `/api/tags`,
and its context length from `/api/show` (`model_info["<arch>.context_length"]`) lies within
[min_context, max_context]. When a call fails and the health check finds the server down or
the model missing, the configured restart command runs, we wait (bounded) until healthy and
retry the call once. A call that succeeds never triggers a check or a restart.
"""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from duckflow.llm.errors import LLMBadRequestError, LLMConnectionError, LLMError, LLMServerError
from duckflow.llm.http import cut_stream, get_json, open_stream
from duckflow.llm.payloads import (
    OllamaFunction,
    OllamaLine,
    OllamaMessage,
    checked_call,
    load_event,
    validate,
)
from duckflow.llm.provider import HTTPModel
from duckflow.llm.types import (
    FinishEvent,
    Message,
    ModelEvent,
    ModelSettings,
    TextDelta,
    ToolCallEvent,
    ToolSpec,
    Usage,
    UsageEvent,
)
from duckflow.llm.wire import openai_tools, parse_arguments

OnEvent = Callable[[str, dict[str, Any]], None]


@dataclass
class OllamaHealth:
    """What the health check found. `needs_restart`: the server is down or the model is missing."""

    server_up: bool = False
    model_listed: bool = False
    context_length: int | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def needs_restart(self) -> bool:
        return not self.server_up or not self.model_listed


def to_ollama_messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.images:  # Ollama's native form: base64 strings beside the text
            item["images"] = [img.base64() for img in m.images]
        if m.tool_calls:
            item["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments}} for c in m.tool_calls]
        if m.role == "tool" and m.name:
            item["tool_name"] = m.name
        out.append(item)
    return out


def _listed(model: str, names: list[str]) -> bool:
    wanted = {model, f"{model}:latest"} if ":" not in model else {model}
    return any(n in wanted for n in names)


class OllamaModel(HTTPModel):
    """A model served by Ollama (native API). See the module docstring for health and restart."""

    provider = "ollama"
    accept = None  # /api/chat streams NDJSON
    default_base_url = "http://127.0.0.1:11434"

    def __init__(
        self,
        model: str,
        *,
        num_ctx: int = 8192,
        keep_alive: int | str = -1,
        restart_command: str | list[str] | None = None,
        min_context: int | None = None,
        max_context: int | None = None,
        check_context: bool = True,
        restart_wait_s: float = 60.0,
        health_timeout_s: float = 5.0,
        on_event: OnEvent | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        **kw: Any,
    ) -> None:
        super().__init__(model, **kw)
        self.num_ctx = num_ctx
        self.keep_alive = keep_alive
        self.restart_command = restart_command
        self.min_context = min_context
        self.max_context = max_context
        self.check_context = check_context and (min_context is not None or max_context is not None)
        self.restart_wait_s = restart_wait_s
        self.health_timeout_s = health_timeout_s
        self.on_event = on_event
        self._sleep = sleep
        self._context_ok = False
        self._shown: tuple[int | None] | None = None  # /api/show's context length, once read
        self._recovering = asyncio.Lock()
        self.restarts = 0

    # ---- health -------------------------------------------------------------------------
    async def health(self) -> OllamaHealth:
        """Ask the server: up? model listed? context length within bounds?"""
        h = OllamaHealth()
        t = self.health_timeout_s
        try:
            await get_json(f"{self.base_url}/api/version", provider=self.name, timeout_s=t)
            h.server_up = True
            tags = await get_json(f"{self.base_url}/api/tags", provider=self.name, timeout_s=t)
        except LLMError as exc:
            h.problems.append(f"Ollama server at {self.base_url} is not answering ({exc.message})")
            return h
        names = [str(m.get("name") or m.get("model")) for m in (tags or {}).get("models", [])]
        h.model_listed = _listed(self.model, names)
        if not h.model_listed:
            h.problems.append(f"model {self.model!r} is not in /api/tags (have: {', '.join(names) or 'none'})")
            return h
        try:
            h.context_length = await self.context_length()
        except LLMError as exc:
            h.problems.append(f"/api/show failed for {self.model!r} ({exc.message})")
            return h
        problem = self._context_problem(h.context_length)
        if problem:
            h.problems.append(problem)
        return h

    def _context_problem(self, length: int | None) -> str | None:
        if length is None:
            return None
        if self.max_context is not None and length > self.max_context:
            return f"context_length {length} of {self.model!r} is above max_context {self.max_context}"
        if self.min_context is not None and length < self.min_context:
            return f"context_length {length} of {self.model!r} is below min_context {self.min_context}"
        return None

    async def context_length(self) -> int | None:
        """The model's context length from /api/show, read once per model object.

        The rule: `model_info["<general.architecture>.context_length"]`, else the first
        `*.context_length` integer (Ollama API docs, "Show model information").
        """
        if self._shown is None:
            show = await get_json(f"{self.base_url}/api/show", provider=self.name,
                                  timeout_s=self.health_timeout_s, payload={"model": self.model})
            info = (show or {}).get("model_info") or {}
            arch = info.get("general.architecture")
            lengths = [v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)]
            exact = info.get(f"{arch}.context_length") if isinstance(arch, str) else None
            self._shown = (exact if isinstance(exact, int) else lengths[0] if lengths else None,)
        return self._shown[0]

    async def _verify_context(self) -> None:
        problem = self._context_problem(await self.context_length())
        if problem:
            raise LLMBadRequestError(
                f"{self.name}: {problem}",
                hint="pick a model whose context fits, or change models.min_context / models.max_context",
                provider=self.name,
            )
        self._context_ok = True

    async def restart(self) -> None:
        """Run the restart command (not awaited to exit: it may be the server itself) and wait
        until the server is healthy, at most `restart_wait_s` seconds. A restart that does not
        heal raises a non-retryable error, so a retry policy above does not restart again."""
        if not self.restart_command:
            raise LLMConnectionError(
                f"{self.name}: Ollama is down or the model is missing, and no restart command is set",
                hint=f"start it (`ollama serve`, `ollama pull {self.model}`) or set "
                     "models.ollama.restart_command",
                provider=self.name,
            )
        argv = (shlex.split(self.restart_command) if isinstance(self.restart_command, str)
                else list(self.restart_command))
        self._emit("ollama_restart", command=argv)
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            raise LLMConnectionError(f"{self.name}: restart command failed to start: {exc}",
                                     hint="check models.ollama.restart_command", provider=self.name,
                                     retryable=False) from exc
        self.restarts += 1
        deadline = time.monotonic() + self.restart_wait_s
        last = OllamaHealth()
        while time.monotonic() < deadline:
            last = await self.health()
            if not last.needs_restart:
                return
            code = proc.poll()
            if code not in (None, 0):
                raise LLMConnectionError(f"{self.name}: restart command exited with status {code}",
                                         hint="run it by hand to see why", provider=self.name,
                                         retryable=False)
            await self._sleep(0.2)
        raise LLMConnectionError(
            f"{self.name}: still unhealthy {self.restart_wait_s:.0f}s after restart: {'; '.join(last.problems)}",
            hint="check the Ollama logs", provider=self.name, retryable=False,
        )

    def _emit(self, name: str, **fields: Any) -> None:
        if self.on_event is not None:
            self.on_event(name, {"model": self.name, **fields})

    # ---- calls --------------------------------------------------------------------------
    async def _stream(
        self, messages: list[Message], tools: list[ToolSpec], settings: ModelSettings
    ) -> AsyncIterator[ModelEvent]:
        emitted = False
        restarts_before = self.restarts
        try:
            async for ev in self._chat(messages, tools, settings):
                emitted = True
                yield ev
            return
        except LLMError as exc:
            if emitted or not (exc.retryable or exc.status == 404):
                raise
            failure = exc
        async with self._recovering:  # concurrent failures share one restart
            if self.restarts == restarts_before:
                health = await self.health()
                self._emit("ollama_health", ok=health.ok, problems=health.problems)
                if not health.needs_restart:
                    raise failure
                await self.restart()
        async for ev in self._chat(messages, tools, settings):
            yield ev

    def payload(self, messages: list[Message], tools: list[ToolSpec], settings: ModelSettings) -> dict[str, Any]:
        options: dict[str, Any] = {"num_ctx": self.num_ctx}
        if settings.temperature is not None:
            options["temperature"] = settings.temperature
        if settings.max_tokens is not None:
            options["num_predict"] = settings.max_tokens
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_ollama_messages(messages),
            "stream": True,
            "keep_alive": self.keep_alive,
            "options": options,
        }
        if tools and self.supports_tools:
            body["tools"] = openai_tools(tools)  # /api/chat takes the Chat Completions shape
        body.update(settings.extra)
        return body

    async def _chat(
        self, messages: list[Message], tools: list[ToolSpec], settings: ModelSettings
    ) -> AsyncIterator[ModelEvent]:
        if self.check_context and not self._context_ok:
            await self._verify_context()
        url = f"{self.base_url}/api/chat"
        calls = 0
        async with open_stream(url, self.payload(messages, tools, settings), headers=self._headers(),
                               provider=self.name, timeout_s=self._timeout(settings)) as lines:
            async for line in lines:
                if not line.strip():
                    continue
                obj = load_event(line, self.name)
                if isinstance(obj, dict) and obj.get("error"):
                    raise LLMServerError(f"{self.name}: {obj['error']}", provider=self.name)
                valid = validate(OllamaLine, obj, self.name, "line")
                msg = valid.message or OllamaMessage()
                if msg.content:
                    yield TextDelta(msg.content)
                for call in msg.tool_calls or []:
                    fn = call.function or OllamaFunction()
                    args = fn.arguments or {}
                    calls += 1
                    call_id = call.id or f"call_{calls}"
                    made = partial(parse_arguments, fn.name, args, call_id)
                    yield ToolCallEvent(checked_call(made, self.name))
                if valid.done:
                    yield UsageEvent(Usage(valid.prompt_eval_count or 0, valid.eval_count or 0))
                    reason = valid.done_reason or "stop"
                    yield FinishEvent("tool_calls" if calls else ("length" if reason == "length" else "stop"))
                    return
        raise cut_stream(self.name, '"done": true')
