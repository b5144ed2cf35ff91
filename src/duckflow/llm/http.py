"""Shared HTTP plumbing of the providers: one streamed POST, error mapping, SSE and NDJSON lines.

httpx is imported here and in the provider modules only (never at `import duckflow`).
Transport failures become LLMErrors: timeouts → LLMTimeoutError, refused/reset connections
→ LLMConnectionError, a body cut midway → LLMServerError (retryable; never a half answer).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from duckflow.llm.errors import (
    LLMConnectionError,
    LLMError,
    LLMResponseError,
    LLMServerError,
    LLMTimeoutError,
    error_for_status,
)

MAX_ERROR_BODY = 4000


def parse_retry_after(value: str | None, *, now: Callable[[], float] = time.time) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP-date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - now())


def make_timeout(timeout_s: float) -> httpx.Timeout:
    """Connect fast, then allow `timeout_s` between bytes of the stream."""
    return httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))


def map_transport_error(exc: Exception, provider: str, url: str) -> LLMError:
    """The LLMError for an httpx transport failure."""
    if isinstance(exc, httpx.TimeoutException):
        return LLMTimeoutError(
            f"{provider}: no answer from {url} in time ({type(exc).__name__})",
            hint="the server is slow or stuck; raise models.request_timeout_s or try another model",
            provider=provider,
        )
    if isinstance(exc, httpx.ConnectError):
        return LLMConnectionError(
            f"{provider}: cannot connect to {url} ({exc})",
            hint="check that the server runs and the base URL / host is right",
            provider=provider,
        )
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError | httpx.WriteError):
        return LLMServerError(
            f"{provider}: the connection to {url} broke before the answer was complete ({exc})",
            hint="a transient server or network failure; it is retried automatically",
            provider=provider,
        )
    return LLMConnectionError(f"{provider}: request to {url} failed ({exc})", provider=provider)


@asynccontextmanager
async def open_stream(
    url: str,
    payload: dict[str, Any],
    *,
    headers: dict[str, str],
    provider: str,
    timeout_s: float,
    method: str = "POST",
) -> AsyncIterator[AsyncIterator[str]]:
    """POST `payload` and yield the response's lines; HTTP errors raise the mapped LLMError."""
    try:
        async with httpx.AsyncClient(timeout=make_timeout(timeout_s)) as client:
            async with client.stream(method, url, json=payload, headers=headers) as resp:
                if resp.status_code >= 400:
                    body = (await resp.aread())[:MAX_ERROR_BODY].decode("utf-8", "replace")
                    raise error_for_status(
                        resp.status_code,
                        _error_text(body),
                        provider=provider,
                        retry_after=parse_retry_after(resp.headers.get("retry-after")),
                    )
                yield _guarded_lines(resp, provider, url)
    except httpx.HTTPError as exc:
        raise map_transport_error(exc, provider, url) from exc


async def _guarded_lines(resp: httpx.Response, provider: str, url: str) -> AsyncIterator[str]:
    try:
        async for line in resp.aiter_lines():
            yield line
    except httpx.HTTPError as exc:
        raise map_transport_error(exc, provider, url) from exc


async def get_json(url: str, *, headers: dict[str, str] | None = None, provider: str,
                   timeout_s: float, payload: dict[str, Any] | None = None) -> Any:
    """One small GET (or POST when `payload` is given) answered with JSON."""
    try:
        async with httpx.AsyncClient(timeout=make_timeout(timeout_s)) as client:
            if payload is None:
                resp = await client.get(url, headers=headers)
            else:
                resp = await client.post(url, json=payload, headers=headers)
    except httpx.HTTPError as exc:
        raise map_transport_error(exc, provider, url) from exc
    if resp.status_code >= 400:
        raise error_for_status(resp.status_code, _error_text(resp.text[:MAX_ERROR_BODY]), provider=provider)
    try:
        return resp.json()
    except ValueError as exc:
        raise LLMResponseError(f"{provider}: {url} answered with non-JSON: {resp.text[:200]!r}",
                               provider=provider) from exc


def _error_text(body: str) -> str:
    """The message inside an error body (`{"error": {"message": ...}}` or `{"error": "..."}`)."""
    try:
        data = json.loads(body)
    except ValueError:
        return body
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict):
            return str(err.get("message") or err)
        return str(err)
    return body


_SSE_FIELDS = {"event", "data", "id", "retry"}


async def iter_sse(lines: AsyncIterator[str], junk: list[str] | None = None) -> AsyncIterator[tuple[str, str]]:
    """Server-sent events as (event, data) pairs (WHATWG HTML §9.2 line format).

    Lines that are no SSE field at all are collected in `junk` (up to 64 KB), so a caller
    can tell a garbage body from a stream that was merely cut.
    """
    event, data = "", list[str]()
    async for line in lines:
        if (junk is not None and line and not line.startswith(":")
                and line.partition(":")[0] not in _SSE_FIELDS and sum(map(len, junk)) < 65536):
            junk.append(line)
        if not line:
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", list[str]()
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            event = value
        elif key == "data":
            data.append(value)
    if data:
        yield event or "message", "\n".join(data)


def not_a_stream(provider: str, junk: list[str]) -> LLMResponseError:
    """The error for a body that never was an event stream (an HTML page, a proxy's answer)."""
    return LLMResponseError(
        f"{provider}: the answer is not an event stream: {' '.join(junk)[:200]!r}",
        hint="the base URL probably points at something that does not speak this API",
        provider=provider,
    )


def cut_stream(provider: str, what: str) -> LLMServerError:
    """The error for a stream that ended without its final event."""
    return LLMServerError(
        f"{provider}: the stream ended before {what}; the answer is incomplete",
        hint="a transient server failure; it is retried automatically",
        provider=provider,
    )
