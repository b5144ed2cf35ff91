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
