"""`POST /v1/essays/{style,check,eval,draft}`: the SmartAO essay agents for the web page and clients.

Behind the same bearer token as the rest of `/v1` (the app registers this router with it).
Body: `{"text": essay, "refs": [{"name", "text"}] (check; with eval the copied sentences are
not counted), "model": "provider:model" (eval, draft; default the server's model), "depth": 1-3
(draft), "mode": "auto"|"steps"|"whole" (eval)}`. Every request runs through the Coordinator's
stream. With `Accept: text/event-stream` the chunks go out as SSE as they come, like a
conversation's: `progress` ("criterion 2 of 5 (evidence) — about 40 s left"), `warning`, then
`done` whose `data.text` is the report as JSON, or one `error` chunk; a client that goes away
stops the run. Without it the answer is the report `duckflow essay TASK --json` prints, plus
`new_text` when the task changed the essay; a step that cannot give a trustworthy result is a
422 with one line and the next step. A plagiarism `block` is an answer (200, `verdict:
"block"`), not an error. Nothing is written to disk but the SmartAO database.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field

from duckflow.errors import DuckflowError


class RefIn(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    text: str = Field(max_length=200_000)


class EssayIn(BaseModel):
    text: str = Field(min_length=1, max_length=100_000)
    refs: list[RefIn] | None = Field(default=None, max_length=200)
    model: str | None = Field(default=None, max_length=200)
    depth: Literal[1, 2, 3] = 2
    mode: Literal["auto", "steps", "whole"] = "auto"


def _model(request: Request, name: str | None) -> Any:
    from duckflow.companion.models import choose_model_name, load_model
    from duckflow.config import load_config

    cfg = load_config()
    return load_model(choose_model_name(name or request.app.state.settings.model_name, cfg), cfg)


def essays_router() -> APIRouter:
    router = APIRouter()

    @router.post("/essays/{task}", response_model=None)
    async def essay(task: Literal["style", "check", "eval", "draft"], body: EssayIn, request: Request) -> Any:
        from duckflow.apps.smartao.coordinator import Coordinator
        from duckflow.apps.smartao.refs import Reference
        from duckflow.apps.smartao.store import EssayStore

        if task == "check" and not body.refs:
            raise HTTPException(422, 'essay check needs references: send "refs": [{"name": ..., "text": ...}]')
        refs = [Reference(r.name, r.text) for r in body.refs or []]
        session = "essay:http:" + hashlib.sha256(body.text.encode()).hexdigest()[:16]
        try:
            model = _model(request, body.model) if task in ("eval", "draft") else None
        except DuckflowError as exc:
            raise HTTPException(422, _line(exc.message, exc.hint)) from None
        store = EssayStore() if task in ("eval", "draft") else None
        coordinator = Coordinator(model=model, refs=refs or None, store=store, depth=body.depth, eval_mode=body.mode)
        chunks = _closing(coordinator.stream(task, body.text, session=session), store)
        if "text/event-stream" in request.headers.get("accept", ""):
            from duckflow.channels.http.sse import SSEResponse

            return SSEResponse(_frames(chunks))
        last: Any = None
        async for chunk in chunks:
            last = chunk
        if last is None or last.type == "error":
            data = last.data if last is not None else None
            raise HTTPException(422, _line(getattr(data, "message", "the essay agents gave no answer"),
                                           getattr(data, "hint", None)))
        return json.loads(last.data.text)

    return router


def _line(message: str, hint: str | None) -> str:
    return f"{message} (next: {hint})" if hint else message


async def _closing(chunks: AsyncIterator[Any], store: Any) -> AsyncIterator[Any]:
    try:
        async for chunk in chunks:
            yield chunk
    except DuckflowError as exc:  # an error before the stream could say it
        from duckflow.core.chunks import error

        yield error("Coordinator", "essay", exc.message, hint=exc.hint)
    finally:
        await chunks.aclose()  # type: ignore[attr-defined]
        if store is not None:
            store.close()


async def _frames(chunks: AsyncIterator[Any]) -> AsyncIterator[list[dict[str, Any]]]:
    """One SSE batch per chunk (`id` its seq, `event` its type); the last batch ends the body."""
    try:
        async for chunk in chunks:
            yield [{"id": chunk.seq, "event": chunk.type, "data": chunk.model_dump_json()}]
        yield [{"end": True}]
    finally:
        await chunks.aclose()  # type: ignore[attr-defined]
