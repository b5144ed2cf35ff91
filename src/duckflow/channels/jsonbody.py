"""The one reader of JSON request bodies: invalid, too deep or too large is a one-line 400/413, never a 500.

Every body the server reads as JSON passes `parse_json` — the `/v1` routes (through `model_body`),
`/auth/exchange`, the streamed message fast path, and the Slack and LINE webhooks. Python's
`json.loads` raises `RecursionError` (not `ValueError`) on a body of a few thousand `[`, which
reached the person as a 500 and a traceback in the log; the nesting is now measured before
parsing (`llm.nesting.nests_deeper`, no parse), and what cannot be read is named in one line.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from fastapi import HTTPException, Request
from pydantic import BaseModel, ValidationError

from duckflow.llm.nesting import nests_deeper

MAX_DEPTH = 32  # no body the server takes nests deeper than a few levels

M = TypeVar("M", bound=BaseModel)


class BadBody(ValueError):
    """A body that cannot be read as JSON; `status` is the HTTP answer (400, or 413 when too large)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def parse_json(raw: bytes, expect: str, *, max_bytes: int | None = None, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of `raw`; BadBody with a one-line reason (ending with what to send: `expect`)."""
    if max_bytes is not None and len(raw) > max_bytes:
        raise BadBody(413, f"the body is larger than {max_bytes} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadBody(400, f"the body is not UTF-8 text: send {expect}") from None
    if nests_deeper(text, max_depth):
        raise BadBody(400, f"the JSON nests deeper than {max_depth} levels: send {expect}")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise BadBody(400, f"the body is not valid JSON: send {expect}") from None
    if "\\u" in text and _lone_surrogate(value):  # `"\ud800"`: valid JSON, not encodable text
        raise BadBody(422, f"the body holds a lone surrogate escape (\\ud800-\\udfff), which is not text: send {expect}")
    return value


def _lone_surrogate(value: Any) -> bool:
    """True when a string in `value` (keys included) cannot be encoded as UTF-8."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def json_or_http(raw: bytes, expect: str, *, max_bytes: int | None = None) -> Any:
    """`parse_json`, its refusal raised as an HTTPException (for a route that holds the raw body:
    a webhook reads it for its signature first)."""
    try:
        return parse_json(raw, expect, max_bytes=max_bytes)
    except BadBody as exc:
        raise HTTPException(exc.status, exc.message) from None


async def read_json(request: Request, expect: str, *, max_bytes: int | None = None) -> Any:
    """`parse_json` of a FastAPI request's body, its refusal as an HTTPException."""
    return json_or_http(await request.body(), expect, max_bytes=max_bytes)


def model_body(model: type[M]) -> Callable[[Request], Awaitable[M]]:
    """A route dependency: the body read by `parse_json` and checked by `model` (422 in one line)."""

    async def dependency(request: Request) -> M:
        return cast(M, await _model(request, model, optional=False))

    return dependency


def optional_body(model: type[M]) -> Callable[[Request], Awaitable[M | None]]:
    """`model_body`, where an empty body is None (the route uses the model's defaults)."""

    async def dependency(request: Request) -> M | None:
        return await _model(request, model, optional=True)

    return dependency


async def _model(request: Request, model: type[M], *, optional: bool) -> M | None:
    raw = await request.body()
    if optional and not raw.strip():
        return None
    fields = ", ".join(model.model_fields)
    data = json_or_http(raw, f"a JSON object ({fields})" if fields else "a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise HTTPException(422, one_line(exc)) from None


def one_line(exc: ValidationError) -> str:
    """The first problem pydantic found, as `field: what is wrong` (and how many more)."""
    errors = exc.errors()
    if not errors:
        return "the body does not have the expected fields"
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "body"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"`{where}`: {first.get('msg', 'invalid')}{more}"
