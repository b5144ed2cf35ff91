"""Entry points for channels: `route(InputMessage) -> RoutingDecision` and its async form.

Each call loads the configuration, applies the session's remembered flags (local_only, previous
route) when a `flags` object is passed, and asks the seed 003 router once. Nothing is written:
the orchestrator (`duckflow.orchestra.orchestrator`) records events and session state.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from duckflow.orchestra.contracts import InputMessage, RoutingDecision
from duckflow.orchestra.router import OnEvent, SessionFlags, build_router


async def route_async(msg: InputMessage, *, flags: SessionFlags | None = None, config: Any = None,
                      workspace: str | Path | None = None, on_event: OnEvent | None = None) -> RoutingDecision:
    """The RoutingDecision of one message (seed 003 §2)."""
    if config is None:
        from duckflow.config import load_config

        config = load_config(workspace)
    router = build_router(config, on_event=on_event)
    return await router.decide(msg, flags)


def route(msg: InputMessage, *, flags: SessionFlags | None = None, config: Any = None,
          workspace: str | Path | None = None, on_event: OnEvent | None = None) -> RoutingDecision:
    """Synchronous `route_async` (not for use inside a running event loop)."""
    return asyncio.run(route_async(msg, flags=flags, config=config, workspace=workspace, on_event=on_event))


async def handle_async(msg: InputMessage, *, workspace: str | Path, config: Any = None,
                       images: list[str | Path] | None = None, **kw: Any) -> Any:
    """The whole turn for a channel message (LINE / Slack / HTTP): route, Chat or Worker or Coder, events.

    Returns the orchestrator's `Turn` (`.action`: reply / approval / notice, `.text`, `.job_id`,
    `.declaration`). A Coder job is answered later with `answer_async(...)`.
    """
    from duckflow.orchestra.orchestrator import Orchestrator

    if config is None:
        from duckflow.config import load_config

        config = load_config()
    orch = Orchestrator(config, workspace=workspace, session_id=msg.session_id, channel=msg.channel,
                        companion=False, **kw)
    try:
        return await orch.handle(msg.user_text, msg.raw, images=images)
    finally:
        orch.close()
        orch.gate.close()


async def answer_async(job_id: str, granted: bool, *, approver: str, channel: str, session_id: str,
                       workspace: str | Path, config: Any = None) -> str:
    """A person's yes / no on a Coder job from a channel; on yes the Worker applies the patch."""
    from duckflow.orchestra.orchestrator import Orchestrator

    if config is None:
        from duckflow.config import load_config

        config = load_config()
    orch = Orchestrator(config, workspace=workspace, session_id=session_id, channel=channel, companion=False)
    try:
        return await orch.answer(job_id, granted, approver=approver)
    finally:
        orch.close()
        orch.gate.close()
