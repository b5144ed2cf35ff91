"""Every provider stream under an overall deadline, and nothing but LLMErrors coming out of it.

The per-read timeout (`models.request_timeout_s`) stops a server that goes silent; it cannot
stop one that answers 200 and then sends `: keep-alive` every few seconds forever. `guarded()`
puts a deadline on the whole call (`models.request_deadline_s`, default 600 s): past it the
stream is closed and `LLMTimeoutError` raised (retryable, like any timeout). Anything else a
provider's parser raises on a hostile or broken answer (KeyError, TypeError, RecursionError,
...) becomes a one-line `LLMProviderError` (`provider_error`), retried like other provider
errors, so no traceback reaches a person and the caller can save its state.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable

from duckflow.llm.errors import LLMError, LLMProviderError, LLMTimeoutError
from duckflow.llm.types import ModelEvent


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:120]}" if text else type(exc).__name__


async def guarded(events: AsyncIterator[ModelEvent], *, provider: str, deadline_s: float | None,
                  clock: Callable[[], float] = time.monotonic) -> AsyncIterator[ModelEvent]:
    """`events` with the overall deadline applied and every failure an LLMError."""
    end = clock() + deadline_s if deadline_s and deadline_s > 0 else None
    it = events.__aiter__()
    try:
        while True:
            try:
                if end is None:
                    ev = await it.__anext__()
                else:
                    # asyncio.timeout, not wait_for: on Python 3.11 wait_for runs each read in a
                    # task of its own, and a cancel (Ctrl-C) landing as a read completes was
                    # swallowed, so `duckflow run` went on after the person stopped it
                    async with asyncio.timeout(max(0.0, end - clock())):
                        ev = await it.__anext__()
            except StopAsyncIteration:
                return
            except (TimeoutError, asyncio.TimeoutError):
                raise LLMTimeoutError(
                    f"{provider}: no complete answer within {deadline_s:g} s",
                    hint="the server keeps the stream open without finishing; raise "
                    "models.request_deadline_s or try another model",
                    provider=provider) from None
            except LLMError:
                raise
            except RecursionError:
                raise LLMProviderError(f"{provider}: provider_error: the answer nests too deeply "
                                       "to read", provider=provider) from None
            except Exception as exc:  # a parser met a payload it did not expect
                raise LLMProviderError(f"{provider}: provider_error: unreadable answer "
                                       f"({_short(exc)})", provider=provider) from exc
            yield ev
    finally:
        aclose = getattr(it, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()
