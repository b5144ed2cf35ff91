"""The `/v1` API (token or sign-in cookie checked by the app): sessions, messages, Stop, SSE, approvals, auto-approve, undo, traces.

A message is queued on the session (`POST /v1/sessions/{id}/messages`); with
`Accept: text/event-stream` the response streams the run as SSE until its `done` chunk,
otherwise it answers 202 with the seq to follow from. `GET /v1/sessions/{id}/events` follows a
session live; `Last-Event-ID` (or `?after=N`) resumes with exactly the missed chunks.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import BaseModel, Field

from duckflow.channels.http.sse import SSEResponse
from duckflow.channels.jsonbody import model_body, optional_body
from duckflow.channels.streamlog import kind_of
from duckflow.errors import DuckflowError


class MessageIn(BaseModel):
    text: str = Field(min_length=1, max_length=100_000)
    images: list[str] = Field(default_factory=list, max_length=4)  # ids from POST /v1/images


class DecisionIn(BaseModel):
    note: str | None = Field(default=None, max_length=2000)
    by: str | None = Field(default=None, max_length=200)


class AutoApproveIn(BaseModel):
    ttl_min: float | None = Field(default=None, gt=0, le=24 * 60)
    paths: list[str] | None = None
    tools: list[str] | None = None
    task_types: list[str] | None = None
    deny: list[str] | None = None
    max_risk: str | None = Field(default=None, pattern="^(low|medium|high)$")
    by: str | None = Field(default=None, max_length=200)


class UndoIn(BaseModel):
    checkpoint: int | None = None


def _parts(request: Request) -> tuple[Any, Any, Any]:
    st = request.app.state
    return st.runner, st.manager, st.chunks


def _last_event_id(request: Request, after: int | None) -> int:
    if after is not None:
        return max(0, after)
    raw = request.headers.get("last-event-id", "").strip()
    if not raw:
        return 0
    try:
        return max(0, int(raw))
    except ValueError:
        raise HTTPException(400, "Last-Event-ID must be a chunk seq (an integer)") from None


async def follow(request: Request, session_id: str, after: int, *, until_done: bool,
                 heartbeat_s: float) -> AsyncIterator[list[dict[str, Any]]]:
    """SSE events of a session after `after`: the missed ones first, then live; heartbeats meanwhile.

    Yields batches: every chunk that is ready goes out in one write (under load one write per
    burst instead of one per chunk). With `until_done` the batch holding the `done` chunk ends
    with an `{"end": True}` marker and the stream closes.
    """
    chunks = request.app.state.chunks
    seen = after
    pending = chunks.since(session_id, seen)
    if pending and pending[0][0] > seen + 1 and seen > 0:
        yield [{"event": "gap", "data": json.dumps({"from": seen + 1, "to": pending[0][0] - 1,
                                                    "message": "older chunks are no longer kept"})}]
    while True:
        batch: list[dict[str, Any]] = []
        for seq, body in pending:
            seen = seq
            batch.append({"id": str(seq), "event": "chunk", "data": body})
            if until_done and kind_of(body) == "done":
                batch.append({"end": True})
                yield batch
                return
        if batch:
            yield batch
        if not await chunks.wait(session_id, seen, heartbeat_s):
            if await request.is_disconnected():  # idle and the client left: stop following
                return
            yield [{"comment": "heartbeat"}]
        pending = chunks.since(session_id, seen)


def _sse(request: Request, gen: AsyncIterator[list[dict[str, Any]]]) -> SSEResponse:
    return SSEResponse(gen)


def _job_dict(job: Any) -> dict[str, Any]:
    data: dict[str, Any] = job.to_dict()
    return data


def api_router() -> APIRouter:
    r = APIRouter()

    @r.get("/sessions")
    async def sessions(request: Request, limit: int = 50) -> dict[str, Any]:
        runner, manager, chunks = _parts(request)
        idents = {i["session_id"]: i for i in manager.identities.all()}
        rows = []
        # this workspace's sessions only: another workspace's is answered by its own server (or CLI)
        for s in runner.store.list(max(1, min(limit, 500)), workspace=str(runner.workspace)):
            d = asdict(s)
            ident = idents.get(s.session_id)
            d["channel"] = ident["channel"] if ident else "http"
            d["identity"] = ident["identity"] if ident else None
            d["busy"] = manager.busy(s.session_id)
            d["title"] = session_title(s.task)
            d["state"] = plain_state(s.step, s.status, pending=s.pending, busy=d["busy"], started=bool(s.task),
                                     cancelled=s.cancelled)
            rows.append(d)
        return {"sessions": rows}

    @r.post("/sessions", status_code=201)
    async def create(request: Request) -> dict[str, Any]:
        runner, _, _ = _parts(request)
        try:
            sid = runner.new_session()
        except DuckflowError as exc:
            raise HTTPException(503, f"{exc.message} ({exc.hint})" if exc.hint else exc.message) from None
        return {"session_id": sid}

    def _known(runner: Any, sid: str) -> None:
        problem = session_problem(runner, sid)
        if problem is not None:
            raise HTTPException(404, problem)

    @r.get("/sessions/{sid}")
    async def status(request: Request, sid: str) -> dict[str, Any]:
        runner, manager, chunks = _parts(request)
        _known(runner, sid)
        state = runner.session(sid).state
        data: dict[str, Any] = state.to_dict()
        data["busy"] = manager.busy(sid)
        data["last_seq"] = chunks.last_seq(sid)
        return data

    @r.post("/sessions/{sid}/messages", response_model=None)
    async def message(request: Request, sid: str, body: MessageIn = Depends(model_body(MessageIn))) -> Any:
        runner, manager, _ = _parts(request)
        _known(runner, sid)
        from duckflow.channels.http.uploads import image_paths

        try:
            images = image_paths(body.images)
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None
        before = manager.submit(sid, body.text, "http", images=images or None)
        if "text/event-stream" in request.headers.get("accept", ""):
            hb = request.app.state.settings.heartbeat_s
            return _sse(request, follow(request, sid, before, until_done=True, heartbeat_s=hb))
        return JSONResponse202({"session_id": sid, "after": before,
                                "events": f"/v1/sessions/{sid}/events?after={before}"})

    @r.post("/sessions/{sid}/stop")
    async def stop(request: Request, sid: str) -> dict[str, Any]:
        """Cancel the session's running turn at once (the page's Stop button); state and checkpoints stay."""
        runner, manager, chunks = _parts(request)
        _known(runner, sid)
        stopped = await manager.cancel_turn(sid)  # wherever the turn runs (several processes: over Redis)
        return {"session_id": sid, "stopped": stopped, "after": chunks.last_seq(sid),
                **({} if stopped else {"detail": "nothing is running in this conversation"})}

    @r.get("/sessions/{sid}/events")
    async def events(request: Request, sid: str, after: int | None = None,
                     until_done: bool = False) -> SSEResponse:
        runner, _, _ = _parts(request)
        _known(runner, sid)
        start = _last_event_id(request, after)
        hb = request.app.state.settings.heartbeat_s
        return _sse(request, follow(request, sid, start, until_done=until_done, heartbeat_s=hb))

    @r.get("/sessions/{sid}/chunks")
    async def chunk_list(request: Request, sid: str, after: int = 0) -> dict[str, Any]:
        """The session's kept chunks as JSON (the page's trace timeline)."""
        runner, _, chunks = _parts(request)
        _known(runner, sid)
        return {"chunks": [json.loads(b) for _, b in chunks.since(sid, max(0, after))]}

    @r.get("/status")
    async def server_status(request: Request) -> dict[str, Any]:
        runner, manager, _ = _parts(request)
        gate = runner.gate
        now = gate.clock()
        active = gate.autoapprove.active(now)
        return {"workspace": str(runner.workspace), "pending_approvals": len(gate.pending()),
                "auto_approve": {"enabled": active is not None, **(active.to_dict(now) if active else {})},
                "running": sorted(s for s in manager._running), "time": time.time()}

    # -- approvals ------------------------------------------------------------------------
    @r.get("/approvals")
    async def approvals(request: Request, all: bool = False, limit: int = 20) -> dict[str, Any]:
        gate = request.app.state.runner.gate
        root = request.app.state.runner.workspace
        jobs = gate.history(limit=max(1, min(limit, 200))) if all else gate.pending()
        return {"jobs": [_job_dict(j) for j in jobs if _in_workspace(j, root)]}

    def _job(runner: Any, job_id: str) -> Any:
        """The job, only when it was asked in this server's workspace (the gate's database in
        DUCKFLOW_HOME holds every workspace's jobs: a job of another one is answered there)."""
        try:
            job = runner.gate.get(job_id)
        except DuckflowError as exc:
            raise HTTPException(404, exc.message) from None
        if not _in_workspace(job, runner.workspace):
            raise HTTPException(404, f"job {job_id[:8]} belongs to another workspace: answer it "
                                     "there (`duckflow approvals` in that folder)")
        return job

    @r.get("/approvals/{job_id}")
    async def approval(request: Request, job_id: str) -> dict[str, Any]:
        job = _job(request.app.state.runner, job_id)
        data = _job_dict(job)
        data["rendered"] = job.request.render()
        return data

    async def _decide(request: Request, job_id: str, granted: bool, body: DecisionIn) -> dict[str, Any]:
        runner, manager, _ = _parts(request)
        job = _job(runner, job_id)
        if job.status != "pending":
            raise HTTPException(409, f"job {job.job_id[:8]} is already {job.status}")
        by = f"web:{body.by}" if body.by else "web"
        sid = _session_of(runner, manager, job.job_id)
        if sid is not None:  # the session waits on this job: its task goes on, streamed to its followers
            after = manager.submit_answer(sid, job.job_id, granted, by=by, note=body.note)
            return {"job_id": job.job_id, "status": "granted" if granted else "denied",
                    "session_id": sid, "after": after}
        decision = runner.gate.decide(job.job_id, granted, by, body.note)
        return {"job_id": job.job_id, "status": decision.status, "session_id": None}

    @r.post("/approvals/{job_id}/grant")
    async def grant(request: Request, job_id: str,
                    body: DecisionIn | None = Depends(optional_body(DecisionIn))) -> dict[str, Any]:
        return await _decide(request, job_id, True, body or DecisionIn())

    @r.post("/approvals/{job_id}/deny")
    async def deny(request: Request, job_id: str,
                   body: DecisionIn | None = Depends(optional_body(DecisionIn))) -> dict[str, Any]:
        return await _decide(request, job_id, False, body or DecisionIn())

    # -- auto-approve ---------------------------------------------------------------------
    @r.get("/autoapprove")
    async def aa_status(request: Request) -> dict[str, Any]:
        gate = request.app.state.runner.gate
        now = gate.clock()
        active = gate.autoapprove.active(now)
        return {"enabled": active is not None, **(active.to_dict(now) if active else {}),
                "last": gate.autoapprove.last()}

    @r.post("/autoapprove")
    async def aa_on(request: Request, body: AutoApproveIn = Depends(model_body(AutoApproveIn))) -> dict[str, Any]:
        from dataclasses import replace

        from duckflow.gate import AutoApproveScope

        gate = request.app.state.runner.gate
        scope = AutoApproveScope.defaults(gate.policy)
        changes: dict[str, Any] = {}
        for key, field_name in (("paths", "paths"), ("tools", "tools"), ("task_types", "task_types"),
                                ("deny", "deny_operations")):
            value = getattr(body, key)
            if value is not None:
                changes[field_name] = tuple(value)
        if body.max_risk:
            changes["max_risk"] = body.max_risk
        scope = replace(scope, **changes)
        ttl = body.ttl_min if body.ttl_min is not None else gate.policy.auto_approve_ttl_min
        active = gate.autoapprove.on(scope, ttl_min=ttl, by=f"web:{body.by}" if body.by else "web")
        return {"enabled": True, **active.to_dict(gate.clock())}

    @r.delete("/autoapprove")
    async def aa_off(request: Request) -> dict[str, Any]:
        gate = request.app.state.runner.gate
        return {"enabled": False, "switched_off": gate.autoapprove.off(by="web")}

    # -- undo and traces ------------------------------------------------------------------
    @r.get("/undo")
    async def undo_list(request: Request, limit: int = 30) -> dict[str, Any]:
        cps = _checkpoints(request)
        if cps is None:
            return {"checkpoints": []}
        from duckflow.workspace.undostack import stack

        try:
            n = max(1, min(limit, 200))
            walk = {e.id: e for e in stack(cps, n)}  # what an undo back to it / a redo up to it takes along
            return {"checkpoints": [{"id": c.id, "created": c.created, "tool": c.tool, "summary": c.summary,
                                     "paths": list(c.paths), "undone": c.undone,
                                     "redoable": bool(c.id in walk and walk[c.id].redoable),
                                     "undo_with": list(walk[c.id].undo_with) if c.id in walk else [],
                                     "redo_with": list(walk[c.id].redo_with) if c.id in walk else []}
                                    for c in cps.list(n)]}
        finally:
            cps.close()

    @r.post("/undo")
    async def undo(request: Request, body: UndoIn | None = Depends(optional_body(UndoIn))) -> dict[str, Any]:
        cps = _checkpoints(request)
        if cps is None:
            raise HTTPException(404, "no checkpoints in this workspace yet")
        try:
            result = cps.undo(body.checkpoint if body else None)
        except DuckflowError as exc:
            raise HTTPException(409, exc.message) from None
        finally:
            cps.close()
        return {"undone": result.undone_id, "restored": list(result.restored), "saved_as": result.saved_as,
                "not_restored": [{"path": p, "why": w} for p, w in result.not_restored]}

    @r.get("/traces")
    async def traces(request: Request, session: str | None = None, limit: int = 200) -> dict[str, Any]:
        from duckflow.channels.http.traces import read_trace

        return {"records": read_trace(request.app.state.runner, session, max(1, min(limit, 2000)))}

    return r


def session_title(task: str, limit: int = 40) -> str:
    """A session's name for a person: the first line of its request, cut to `limit` with "…"."""
    line = " ".join(task.strip().splitlines()[0].split()) if task.strip() else ""
    if not line:
        return "New conversation"
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def plain_state(step: str, status: str, *, pending: bool, busy: bool, started: bool, cancelled: bool = False) -> str:
    """Where a session stands, in plain words (never a step name): empty for a new one."""
    if busy:
        return "working"
    if pending:
        return "needs your approval"
    if step == "DONE":
        return "done"
    if status == "ERROR":
        return "stopped on an error"
    if status == "REQUIRES_USER_INPUT":
        return "cancelled" if cancelled else "waiting for your answer"
    return "paused" if started else ""


def session_problem(runner: Any, sid: str) -> str | None:
    """Why session `sid` is not this server's (unknown, or of another workspace), or None when it is.

    The one check of every path that names a session: the `/v1` routes, the streamed message
    fast path and the chat channels' identities (the session store in DUCKFLOW_HOME holds
    every workspace's sessions; another workspace's is answered there, never run here).
    """
    if not runner.exists(sid):
        return f"no session '{sid}': create one with POST /v1/sessions"
    if not runner.belongs_here(sid):
        return (f"session {sid} belongs to another workspace ({runner.workspace_of(sid)}): open it there "
                "(duckflow serve -w or duckflow chat -w), or create one here with POST /v1/sessions")
    return None


def _in_workspace(job: Any, root: Any) -> bool:
    """True when the job is bound to `root` (or to no workspace at all)."""
    from duckflow.gate.binding import WORKSPACE_KEY

    where = job.request.operation.extra.get(WORKSPACE_KEY)
    return where is None or str(where) == str(root)


def _session_of(runner: Any, manager: Any, job_id: str) -> str | None:
    """The session that waits on this job (None when none does)."""
    found: str | None = runner.waiting_on(job_id)
    return found


def _checkpoints(request: Request) -> Any:
    """The workspace's checkpoints as Duckflow recorded them (in DUCKFLOW_HOME; a store planted
    in the workspace is never read), or None when there are none."""
    from duckflow.workspace.checkpoints import Checkpoints, has_checkpoints

    root = request.app.state.runner.workspace
    if not has_checkpoints(root):
        return None
    return Checkpoints(root)


def JSONResponse202(content: dict[str, Any]) -> Any:  # noqa: N802 - reads like the response it is
    from fastapi.responses import JSONResponse

    return JSONResponse(content, status_code=202)
