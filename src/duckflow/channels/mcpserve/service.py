"""What `duckflow mcp serve` does for each call: the workspace's tools behind the guard and the gate,
and the companion on a task, for another agent (Claude Code, Codex, a second Duckflow).

Reads (read_file, list_files, search_code) run at once behind the workspace guard. Everything
else passes the same gate as in `duckflow chat` (the companion's ActionRunner: the five points,
auto-approve only where your config allows it, commands in the box with the effects check). A
change that needs a person is NOT done: the calling agent gets the job id and the words to show,
a person approves it with `duckflow approvals grant JOB`, and the agent then calls
`duckflow_approved` to run exactly what was approved. The calling agent can never approve.

`duckflow_task` runs the companion on a task through the front door (Conversation.stream) and
returns what a person would read in the terminal (channels/present.py). One call at a time:
the session is not shared between concurrent calls.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from duckflow.channels.actionwords import action_text, card, card_text
from duckflow.channels.present import Presenter, visible
from duckflow.core.chunks import AnyChunk
from duckflow.errors import DuckflowError
from duckflow.llm.types import ToolCall

READS = ("read_file", "list_files", "search_code")
CHANGES = ("write_file", "edit_file", "create_directory", "delete_path", "move_path", "execute_shell", "run_tests")
MAX_TEXT = 60_000  # what one answer carries at most (a read of a large file is cut, said)


class WorkspaceService:
    """One workspace's tools and companion session for an MCP server."""

    def __init__(self, workspace: str | Path, *, model_name: str | None = None) -> None:
        from duckflow.channels.conversation import Conversation
        from duckflow.companion.factory import open_session
        from duckflow.companion.models import NoModelError

        self.root = Path(workspace).expanduser().resolve()
        self.no_model = ""
        try:
            opened = open_session(self.root, model_name=model_name)
        except NoModelError as exc:  # the tools still work; duckflow_task says what is missing
            self.no_model = f"{exc.message} ({exc.hint})" if exc.hint else exc.message
            opened = open_session(self.root, model_name="scripted:demo")
        self.opened = opened
        self.session = opened.session
        self.session.runner.by = "mcp-client"
        self.conversation = Conversation.for_session(opened, channel="mcp")
        self.waiting: dict[str, ToolCall] = {}  # job id -> the call a person is asked about
        self.lock = asyncio.Lock()

    def close(self) -> None:
        self.conversation.close()
        self.opened.close()

    def _cut(self, text: str) -> str:
        return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + f"\n[cut at {MAX_TEXT:,} of {len(text):,} characters]"

    async def call(self, name: str, arguments: dict[str, Any]) -> str:
        """One workspace tool call; the text the calling agent reads. A refusal or an error
        raises DuckflowError (the MCP answer is then marked as an error)."""
        async with self.lock:
            runner = self.session.runner
            if name in READS:
                from duckflow.core.tools import result_to_text

                tool = {t.name: t for t in runner.tools}[name]
                try:
                    return self._cut(result_to_text(await tool.invoke(arguments)))
                except Exception as exc:  # the guard's refusal, a missing file: one line
                    raise DuckflowError(f"{name} failed: {exc}") from None
            call = ToolCall(name, dict(arguments))
            outcome = await runner.process(call, intent=action_text(name, call.arguments),
                                           rationale="asked by an agent over MCP (duckflow mcp serve)")
            return self._outcome(outcome)

    def _outcome(self, outcome: Any) -> str:
        if outcome.status == "ok":
            return self._cut(outcome.content or "done")
        if outcome.status == "pending" and outcome.job_id:
            self.waiting[outcome.job_id] = outcome.call
            parts = card(outcome.request or {}, {"name": outcome.call.name, "arguments": outcome.call.arguments},
                         outcome.job_id)
            job = outcome.job_id[:8]
            return (f"Not done yet: a person must approve this first (job {job}).\n{card_text(parts)}\n"
                    f"Ask the person to run `duckflow approvals grant {job} -w {self.root}` (or `deny`), "
                    f"then call duckflow_approved with job_id \"{job}\" to run exactly this change.")
        raise DuckflowError(f"{outcome.call.name} {outcome.status}: {outcome.content}")

    async def approved(self, job_id: str) -> str:
        """Run a change a person approved (what was approved is what runs)."""
        async with self.lock:
            found = [j for j in self.waiting if j.startswith(job_id.strip())] if len(job_id.strip()) >= 4 else []
            if len(found) != 1:
                raise DuckflowError(f"no change of this server is waiting as job '{job_id}'")
            job = self.session.runner.gate.get(found[0])
            if job.status == "pending":
                return (f"Job {found[0][:8]} still waits for a person: `duckflow approvals grant {found[0][:8]} "
                        f"-w {self.root}`.")
            call = self.waiting.pop(found[0])
            return self._outcome(await self.session.runner.run_approved(found[0], call))

    async def task(self, text: str) -> str:
        """The companion on `text`, through the front door; what a person would read."""
        if self.no_model:
            raise DuckflowError(f"duckflow_task needs a model: {self.no_model}")
        async with self.lock:
            state = self.session.state
            if state.pending_gate and state.pending_job:
                job = self.session.runner.gate.get(state.pending_job["job_id"])
                if job.status == "pending":
                    return (f"An earlier change still waits for a person (job {job.job_id[:8]}): "
                            f"`duckflow approvals grant {job.job_id[:8]} -w {self.root}` or deny it, then call "
                            "duckflow_task again.")
                stream = self.session.stream_answer(job.status in ("granted", "auto_approved"), by="elsewhere")
            else:
                stream = self.conversation.stream(text, task=True)  # another agent gives a task: coding
            return self._cut(await _said(stream, self.root))


async def _said(stream: Any, root: Path) -> str:
    """The stream's person-level lines, the approval card whole, and what to do next."""
    present = Presenter()
    lines: list[str] = []
    waiting = ""
    async for chunk in stream:
        c: AnyChunk = chunk
        if c.type in ("delta", "tool_call_delta", "progress"):  # the reply chunk carries the whole text once
            continue
        if c.type == "approval" and getattr(c.data, "phase", "") == "request":
            waiting = str(getattr(c.data, "job_id", "") or "")[:8]
        for line in present.feed(c):
            if line.kind == "approval" and line.data.get("headline"):
                lines.append(card_text(line.data))
            elif visible(line, "person") and line.kind != "status" and line.text.strip():
                lines.append(line.text)
    if waiting:
        lines.append(f"A person must approve job {waiting}: `duckflow approvals grant {waiting} -w {root}` "
                     "(or deny it); then call duckflow_task again to go on.")
    return "\n".join(lines) or json.dumps({"ended": True})
