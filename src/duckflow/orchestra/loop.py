"""The loop controller (seed 003 §3): bounded Worker loops, one reroute at most, a recorded stop reason.

`LoopController.run(route, task, ...)` calls the route's role (through core's Agent) and reads
its WorkerOutput JSON tolerantly. It stops on: `max_loops`, `max_millis`, `worker_failed`
(a reply that is not the contract, a failed call or a refused model), `need_user_confirmation`
(risk=high; questions for the person = missing information; low confidence with several next
actions = a major branch), or `done` (needs_next_loop=false). A worker's `fit=false` with a valid
`suggested_route` reroutes once per input (`allow_auto_reroute_once`); Chat's proposal (§3.4) may
use the same single reroute (`allow_chat_propose_reroute_once`) via `reroute_used`. Every loop
writes worker.success / worker.fail, a reroute writes route.override, the end writes loop.stop
and final.route with the §7.2 fields.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from duckflow.llm.types import Message
from duckflow.orchestra.contracts import WorkerInput, WorkerOutput, read_worker_output
from duckflow.orchestra.roles import (
    ROUTE_TASKS,
    Roles,
    RoleUnavailable,
    error_text,
    is_timeout,
    prompt,
    role_for_route,
)
from duckflow.orchestra.settings import CODE_ROUTES, LoopConfig

LOW_CONFIDENCE = 0.4  # below this, a reply offering several next actions is a major branch: ask first


@dataclass
class LoopResult:
    initial_route: str
    final_route: str
    stop_reason: str
    outputs: list[WorkerOutput] = field(default_factory=list)
    worker_calls: int = 0
    reroute_used: bool = False
    error_reason: str | None = None

    @property
    def last(self) -> WorkerOutput | None:
        return self.outputs[-1] if self.outputs else None

    def reply(self) -> str:
        """What the person reads: the last result, and questions or the stop reason when relevant."""
        last = self.last
        if last is None:
            return f"The {self.final_route} worker could not answer: {self.error_reason or self.stop_reason}."
        parts = [last.result.strip()]
        if last.questions_for_user:
            parts.append("Questions:\n" + "\n".join(f"- {q}" for q in last.questions_for_user))
        if last.next_actions:
            parts.append("Next:\n" + "\n".join(f"- {a}" for a in last.next_actions))
        if self.stop_reason == "need_user_confirmation" and last.risk == "high":
            parts.append("This is high risk: confirm before anything is done.")
        elif self.stop_reason not in ("done", "need_user_confirmation"):
            parts.append(f"(stopped: {self.stop_reason}{' — ' + self.error_reason if self.error_reason else ''})")
        return "\n\n".join(p for p in parts if p)


class LoopController:
    def __init__(self, roles: Roles, loop: LoopConfig, *, emit: Callable[..., Any] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.roles = roles
        self.cfg = loop
        self.emit = emit or (lambda *a, **k: None)
        self.clock = clock

    async def run(self, route: str, task: str, *, session_id: str, local_only: bool, context: str = "",
                  reroute_used: bool = False, initial_route: str | None = None,
                  reroute_source: str = "worker", images: list[Any] | None = None) -> LoopResult:
        initial = initial_route or route
        res = LoopResult(initial, route, "max_loops", reroute_used=reroute_used)
        started = self.clock()
        current = route
        for index in range(self.cfg.max_loops):
            elapsed_ms = (self.clock() - started) * 1000
            if elapsed_ms >= self.cfg.max_millis:
                res.stop_reason = "max_millis"
                break
            if current in CODE_ROUTES:  # a reroute to CODE leaves the worker loop: the Coder flow takes it
                res.stop_reason = "rerouted_to_code"
                break
            out = await self._call(current, task, session_id=session_id, local_only=local_only, context=context,
                                   index=index, previous=[o.result for o in res.outputs],
                                   budget_ms=self.cfg.max_millis - elapsed_ms, images=images or [])
            res.worker_calls += 1
            fields = {"initial_route": initial, "final_route": current, "worker_calls": res.worker_calls,
                      "needs_next_loop": out.needs_next_loop, "risk": out.risk, "fit": out.fit,
                      "reroute_used": res.reroute_used, "loop_index": index}
            if not out.ok:
                res.stop_reason = "max_millis" if out.error == "max_millis" else "worker_failed"
                res.error_reason = out.error
                self.emit("worker.fail", session_id, error_reason=out.error, **fields)
                break
            res.outputs.append(out)
            self.emit("worker.success", session_id, confidence=out.confidence, **fields)
            allowed = self.cfg.allow_auto_reroute_once if reroute_source == "worker" else \
                self.cfg.allow_chat_propose_reroute_once
            if out.fit is False and out.suggested_route and out.suggested_route != current:
                if allowed and not res.reroute_used:
                    self.emit("route.override", session_id, initial_route=initial, final_route=out.suggested_route,
                              reroute_used=True, fit=False, reason=out.why, source=reroute_source,
                              from_route=current)
                    res.reroute_used = True
                    current = res.final_route = out.suggested_route
                    continue
            if out.risk == "high":
                res.stop_reason, res.error_reason = "need_user_confirmation", "risk=high"
                break
            if out.questions_for_user:
                res.stop_reason, res.error_reason = "need_user_confirmation", "missing information"
                break
            if out.confidence < LOW_CONFIDENCE and len(out.next_actions) > 1:
                res.stop_reason, res.error_reason = "need_user_confirmation", "low confidence on a major branch"
                break
            if not out.needs_next_loop:
                res.stop_reason = "done"
                break
        res.final_route = current
        last = res.last
        summary = {"initial_route": initial, "final_route": current, "worker_calls": res.worker_calls,
                   "needs_next_loop": last.needs_next_loop if last else False, "risk": last.risk if last else None,
                   "fit": last.fit if last else None, "reroute_used": res.reroute_used,
                   "stop_reason": res.stop_reason, "error_reason": res.error_reason,
                   "elapsed_ms": int((self.clock() - started) * 1000)}
        self.emit("loop.stop", session_id, **summary)
        self.emit("final.route", session_id, **summary)
        return res

    async def _call(self, route: str, task: str, *, session_id: str, local_only: bool, context: str, index: int,
                    previous: list[str], budget_ms: float, images: list[Any]) -> WorkerOutput:
        role = role_for_route(route)
        instructions = prompt("worker", alias=self.roles.alias(role), route=route,
                              route_task=ROUTE_TASKS.get(route, ROUTE_TASKS["CHAT"]))
        try:
            agent = self.roles.agent(role, route=route, local_only=local_only, instructions=instructions)
            await self.roles.ready(role)
        except RoleUnavailable as exc:
            return WorkerOutput.failed(exc.message)
        payload = WorkerInput(route=route, task=task, session_id=session_id, loop_index=index, context=context,
                              previous_results=previous[-2:], local_only=local_only)
        text = json.dumps(payload.model_dump(), ensure_ascii=False)
        try:
            message = [Message("user", text, images=images)] if images else text
            result = await asyncio.wait_for(agent.run(message, raise_errors=False),
                                            max(budget_ms, 1) / 1000)
        except TimeoutError:
            if images:
                from duckflow.orchestra.images import audit_after_timeout

                audit_after_timeout(images)
            return WorkerOutput.failed("max_millis")
        if not result.ok:
            if images and is_timeout(result.error):
                from duckflow.orchestra.images import audit_after_timeout

                audit_after_timeout(images)
            return WorkerOutput.failed(f"worker call failed: {error_text(result.error)}")
        return read_worker_output(result.text)
