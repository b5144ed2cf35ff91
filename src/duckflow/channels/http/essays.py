"""`POST /v1/essays/{style,check,eval,draft}`: the SmartAO essay agents for the web page and clients.

Behind the same bearer token as the rest of `/v1` (the app registers this router with it).
Body: `{"text": essay, "refs": [{"name", "text"}] (check), "model": "provider:model" (eval, draft;
default the server's model), "depth": 1-3 (draft)}`. The answer is the report `duckflow essay
TASK --json` prints, plus `new_text` when the task changed the essay. A plagiarism `block` is an
answer (200, `verdict: "block"`), not an error; a step that cannot give a trustworthy result is a
422 with one line and the next step. Nothing is written to disk but the SmartAO database.
"""

from __future__ import annotations

import hashlib
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


def _model(request: Request, name: str | None) -> Any:
    from duckflow.companion.models import choose_model_name, load_model
    from duckflow.config import load_config

    cfg = load_config()
    return load_model(choose_model_name(name or request.app.state.settings.model_name, cfg), cfg)


def essays_router() -> APIRouter:
    router = APIRouter()

    @router.post("/essays/{task}")
    async def essay(task: Literal["style", "check", "eval", "draft"], body: EssayIn, request: Request) -> dict[str, Any]:
        from duckflow.apps.smartao.coordinator import Coordinator
        from duckflow.apps.smartao.refs import Reference
        from duckflow.apps.smartao.store import EssayStore

        if task == "check" and not body.refs:
            raise HTTPException(422, 'essay check needs references: send "refs": [{"name": ..., "text": ...}]')
        refs = [Reference(r.name, r.text) for r in body.refs or []]
        session = "essay:http:" + hashlib.sha256(body.text.encode()).hexdigest()[:16]
        store = None
        try:
            model = _model(request, body.model) if task in ("eval", "draft") else None
            store = EssayStore() if task in ("eval", "draft") else None
            report = await Coordinator(model=model, refs=refs, store=store, depth=body.depth).run(
                task, body.text, session=session)
        except DuckflowError as exc:
            hint = f" (next: {exc.hint})" if getattr(exc, "hint", None) else ""
            raise HTTPException(422, f"{exc.message}{hint}") from None
        finally:
            if store is not None:
                store.close()
        out = report.to_dict()
        if report.patch is not None and report.patch.change_map:
            out["new_text"] = report.patch.new_text
        return out

    return router
