"""Orchestration across roles (Chat, Worker, Coder1-3): routing policy, loop control and jobs (seed 003).

Entry points for channels (imported lazily so `duckflow.config` can import the settings cheaply):

    from duckflow.orchestra import InputMessage, route
    decision = route(InputMessage(channel="slack", session_id="T1", user_text="/plan the release"))
    decision.public()  # {primary_route, source, confidence, reason, evidence, flags: {local_only}}
    turn = await handle_async(InputMessage(channel="line", session_id="U1", user_text="..."), workspace=DIR)
    turn.action, turn.text, turn.job_id  # reply / approval / notice; answer_async(job_id, True, ...)
"""

from __future__ import annotations

from typing import Any

_LAZY = {
    "InputMessage": "duckflow.orchestra.contracts",
    "RoutingDecision": "duckflow.orchestra.contracts",
    "WorkerInput": "duckflow.orchestra.contracts",
    "WorkerOutput": "duckflow.orchestra.contracts",
    "CoderOutput": "duckflow.orchestra.contracts",
    "MessageRouter": "duckflow.orchestra.router",
    "SessionFlags": "duckflow.orchestra.router",
    "route": "duckflow.orchestra.entry",
    "route_async": "duckflow.orchestra.entry",
    "handle_async": "duckflow.orchestra.entry",
    "answer_async": "duckflow.orchestra.entry",
    "Orchestrator": "duckflow.orchestra.orchestrator",
    "Turn": "duckflow.orchestra.orchestrator",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'duckflow.orchestra' has no attribute {name!r}")
