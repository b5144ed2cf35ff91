"""Run the ACP agent on this process's stdio until the editor closes the stream."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import run_agent

from duckflow.channels.acp.agent import DuckflowAgent
from duckflow.channels.acp.wire import StdioWire


async def serve(*, workspace: Path | None = None, model_name: str | None = None, codec: str | None = None,
                mode: str | None = None, max_turns: int = 12) -> None:
    """`duckflow acp`: frames on the real stdout only (wire.py), the sessions closed at the end."""
    agent = DuckflowAgent(workspace=workspace, model_name=model_name, codec=codec, mode=mode, max_turns=max_turns)
    wire = StdioWire.from_stdio()
    try:
        await run_agent(agent, wire)  # type: ignore[arg-type]
    finally:
        agent.close()
        await asyncio.sleep(0)
