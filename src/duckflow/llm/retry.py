"""Retry with backoff, a fallback chain of models and a circuit breaker, every attempt reported.

Policy (seed 004 §7): timeouts, connection errors, 408, 409, 429 and 5xx — every
`LLMError` with `retryable=True` — are retried on the same model `retries` times (default 3,
so at most 4 attempts) with exponential backoff and full jitter (delay = uniform(0,
min(max_delay, base_delay * 2**n))). A Retry-After from the server is honoured instead of the
jitter; when it asks for longer than `max_retry_after` the model is given up at once (waiting
less would only earn another 429). Then the next model of the chain is tried.
`LLMBadRequestError` (400/404/422 ...) is never retried and stops the chain: the request
itself is wrong. Auth errors and unreadable responses are never retried on the same model
but do move on to the next one (its provider has other credentials / another server).

Streaming: a retry or fallback happens only while nothing has reached the caller. Once text
or a tool call was passed on, a failure is raised (with `partial_output=True`), because the
caller cannot un-show text. `buffer=True` holds each attempt's events back until it
completed, so every failure can be retried, at the price of streaming.

`on_event(name, fields)` receives "llm_call" (each attempt, with result ok/error and
duration_ms), "retry", "fallback" and "circuit_open".
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from duckflow.errors import UserError
from duckflow.llm.errors import LLMBadRequestError, LLMError
from duckflow.llm.types import (
    Message,
    Model,
    ModelEvent,
    ModelSettings,
    ProgressEvent,
    ToolSpec,
    UsageEvent,
)

OnEvent = Callable[[str, dict[str, Any]], None]
Sleep = Callable[[float], Awaitable[None]]


@dataclass
class RetryPolicy:
    """How often and how long to wait before calling the same model again."""

    retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, error: LLMError, rng: random.Random) -> float | None:
        """Seconds to wait before retry number `attempt` (1-based); None: do not retry."""
        if not error.retryable or attempt > self.retries:
            return None
        if error.retry_after is not None:
            return error.retry_after if error.retry_after <= self.max_retry_after else None
        return rng.uniform(0.0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


@dataclass
class CircuitBreaker:
    """Skips a model after `threshold` failed calls in a row, for `cooldown_s`; then one trial call.

    A failed call is one whose retries are all used up (or that could not be retried), so the
    retries of one call never trip the breaker by themselves.
    """

    threshold: int = 3
    cooldown_s: float = 30.0
    clock: Callable[[], float] = time.monotonic
    _failures: dict[str, int] = field(default_factory=dict)
    _open_until: dict[str, float] = field(default_factory=dict)

    def is_open(self, key: str) -> bool:
        until = self._open_until.get(key)
        return until is not None and self.clock() < until

    def record_success(self, key: str) -> None:
        self._failures.pop(key, None)
        self._open_until.pop(key, None)

    def record_failure(self, key: str) -> bool:
        """Count one failure; True when this failure opened the circuit."""
        count = self._failures.get(key, 0) + 1
        self._failures[key] = count
        if count >= self.threshold:
            self._failures[key] = 0
            self._open_until[key] = self.clock() + self.cooldown_s
            return True
        return False


class AllModelsFailedError(LLMError):
    """Every model of the chain failed or was skipped."""


class FallbackModel:
    """A Model that tries `models` in order, each with retries, behind a circuit breaker.

    `FallbackModel([m])` is a single model with the retry policy.
    """

    def __init__(
        self,
        models: Sequence[Model],
        *,
        policy: RetryPolicy | None = None,
        breaker: CircuitBreaker | None = None,
        on_event: OnEvent | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
        buffer: bool = False,
    ) -> None:
        if not models:
            raise ValueError("FallbackModel needs at least one model")
        self.models = list(models)
        self.name = self.models[0].name
        self.supports_tools = all(m.supports_tools for m in self.models)
        self.is_local = all(m.is_local for m in self.models)
        self.policy = policy or RetryPolicy()
        self.breaker = breaker or CircuitBreaker()
        self.on_event = on_event
        self.sleep = sleep
        self.rng = rng or random.Random()
        self.buffer = buffer
        self.last_model: str | None = None

    def _emit(self, name: str, **fields: Any) -> None:
        if self.on_event is not None:
            self.on_event(name, fields)

    async def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] = (),
        settings: ModelSettings | None = None,
    ) -> AsyncIterator[ModelEvent]:
        failures: list[str] = []
        last: LLMError | None = None
        for index, model in enumerate(self.models):
            if self.breaker.is_open(model.name):
                self._emit("circuit_open", model=model.name, skipped=True)
                failures.append(f"{model.name}: skipped (circuit open after repeated failures)")
            else:
                outcome = _Outcome()
                async for ev in self._try_model(model, messages, tools, settings, outcome):
                    yield ev
                if outcome.error is None:
                    return
                last = outcome.error
                failures.append(f"{model.name}: {last.message}")
            if index + 1 < len(self.models):
                self._emit("fallback", **{"from": model.name, "to": self.models[index + 1].name,
                                          "error": failures[-1]})
        if len(self.models) == 1 and last is not None:
            raise last
        raise AllModelsFailedError(
            "no model could answer: " + "; ".join(failures),
            hint="check the providers' status, keys and network; add a local model to models.fallbacks",
            provider="fallback",
            status=last.status if last else None,
            retryable=bool(last and last.retryable),
        )

    async def _try_model(
        self,
        model: Model,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        settings: ModelSettings | None,
        outcome: _Outcome,
    ) -> AsyncIterator[ModelEvent]:
        """One model with retries. On failure `outcome.error` is set (raised when not recoverable)."""
        attempt = 0
        while True:
            attempt += 1
            committed = False
            started = time.perf_counter()
            held: list[ModelEvent] = []
            usage: tuple[int, int] = (0, 0)
            try:
                async for ev in model.stream(messages, tools=tools, settings=settings):
                    if isinstance(ev, UsageEvent):
                        usage = (ev.usage.prompt_tokens, ev.usage.completion_tokens)
                    if self.buffer:
                        held.append(ev)
                    else:
                        committed = committed or not isinstance(ev, ProgressEvent)  # no text yet
                        yield ev
            except LLMError as exc:
                if isinstance(exc, UserError):  # a mistake in the calling code: no retry, no fallback
                    raise
                err = exc
            except (asyncio.TimeoutError, OSError) as exc:  # a provider that leaked a raw error
                err = LLMError(f"{model.name}: {type(exc).__name__}: {exc}", retryable=True,
                               provider=model.name)
            else:
                self.breaker.record_success(model.name)
                self._emit("llm_call", model=model.name, attempt=attempt, result="ok",
                           duration_ms=_ms(started), tok_prompt=usage[0], tok_completion=usage[1])
                self.last_model = model.name
                for ev in held:
                    yield ev
                return
            self._emit("llm_call", model=model.name, attempt=attempt, result="error",
                       duration_ms=_ms(started), error=err.message, status=err.status,
                       error_type=type(err).__name__)
            if isinstance(err, LLMBadRequestError):
                raise err
            delay = None if committed else self.policy.delay(attempt, err, self.rng)
            if delay is None:
                if self.breaker.record_failure(model.name):
                    self._emit("circuit_open", model=model.name, skipped=False,
                               cooldown_s=self.breaker.cooldown_s)
                if committed:
                    err.partial_output = True
                    raise err
                outcome.error = err
                return
            self._emit("retry", model=model.name, attempt=attempt + 1, delay_s=round(delay, 3),
                       error=err.message, status=err.status, retry_after=err.retry_after)
            await self.sleep(delay)


@dataclass
class _Outcome:
    error: LLMError | None = None


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
