"""A real ACP client (the `agent-client-protocol` package's client side) that launches `duckflow acp` as a subprocess."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

acp = pytest.importorskip("acp", reason="the acp extra is not installed: pip install 'duckflow[acp]'")

from acp import spawn_agent_process  # noqa: E402
from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse  # noqa: E402

REPO = Path(__file__).resolve().parents[3]


class EditorClient:
    """What an editor does: records every session/update, answers permission requests from a
    list of answers (an option id, optionally with words), reads files it is asked for."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.answers: list[tuple[str, str]] = []  # (option id or "cancelled", words)
        self.asked: list[Any] = []  # the permission requests, in order
        self.reads: list[str] = []

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any,
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        option, words = self.answers.pop(0)
        if option == "cancelled":
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        meta = {"duckflow": {"note": words}} if words else None
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=option),
                                         field_meta=meta)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def read_text_file(self, path: str, session_id: str, **kwargs: Any) -> Any:
        from acp.schema import ReadTextFileResponse

        self.reads.append(path)
        return ReadTextFileResponse(content=Path(path).read_text() + "# as the editor holds it\n")

    def on_connect(self, conn: Any) -> None:
        pass

    def kinds(self) -> list[str]:
        return [u.session_update for _, u in self.updates]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for _, u in self.updates if u.session_update == kind)

    def calls(self) -> dict[str, list[Any]]:
        """Every tool call id → its tool_call and tool_call_update notifications, in order."""
        out: dict[str, list[Any]] = {}
        for _, u in self.updates:
            if u.session_update in ("tool_call", "tool_call_update"):
                out.setdefault(u.tool_call_id, []).append(u)
        return out


def write_script(path: Path, steps: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(steps))
    return path


def child_env(home: Path) -> dict[str, str]:
    return {"DUCKFLOW_HOME": str(home), "DUCKFLOW_CONFIG": os.devnull, "PYTHONPATH": f"{REPO / 'src'}:{REPO}",
            "PYDANTIC_DISABLE_PLUGINS": "__all__"}


@asynccontextmanager
async def duckflow_acp(script: Path, workspace: Path, home: Path, stderr: Path,
                       client: EditorClient) -> AsyncIterator[Any]:
    """`duckflow acp -w WORKSPACE` with the scripted model, and the client's connection to it."""
    with stderr.open("ab") as err:
        async with spawn_agent_process(
                client, sys.executable, "-m", "tests.helpers.acp_scripted", str(script),
                "acp", "-w", str(workspace), "--model", "scripted:acp",
                env=child_env(home), cwd=REPO, transport_kwargs={"stderr": err}) as (conn, process):
            yield conn
