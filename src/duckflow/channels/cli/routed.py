"""The terminal's side of the one front door: `duckflow chat` and `duckflow run` talk through a `Conversation`.

`CliConversation(opened)` builds the session's `Conversation` (channels/conversation.py) on the
`cli` channel: the orchestra's router, flags and event log, the companion's gate. Its chunks
reach the terminal through the session's ChunkHub, where the renderer listens (one
presentation layer, channels/present.py). This module only hands the streams to the command,
which drains each into how it ended (`companion.task.outcome_of`, for the exit code): a
message, a yes / no on a Coder job, a Coder job of an earlier run (`duckflow run --resume`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from duckflow.channels.conversation import Conversation
from duckflow.core.chunks import AnyChunk

if TYPE_CHECKING:
    from duckflow.companion.factory import OpenedSession
    from duckflow.config import Config


class CliConversation:
    """A terminal's conversation: the front door, plus the Coder job a person answers with yes / no."""

    def __init__(self, opened: OpenedSession, *, config: Config | None = None, max_turns: int = 12) -> None:
        self.conv = Conversation.for_session(opened, channel="cli", config=config, max_turns=max_turns)
        self.notes = list(self.conv.orch.config.routing.llm.deprecations)  # said once by the command
        self.images: list[str] = []  # `duckflow chat --image FILE`: sent with the next message
        self.last_job: str | None = None  # the last Coder job asked about (the exit hint names it)

    def speakers(self) -> str:
        """Who answers, when the Chat role has a model of its own or the companion's is a cloud
        model (one line for the banner)."""
        from duckflow.config import resolve_role

        roles = self.conv.orch.roles
        if not roles.explicit("chat"):
            return self.conv.seats.plan()
        name = resolve_role("chat", self.conv.orch.config) or "its model"
        return (f"{roles.alias('chat')} ({name}) talks with you and hands coding to the companion "
                f"({getattr(self.conv.session.model, 'name', '?')})")

    @property
    def coder_job(self) -> str | None:
        return self.conv.coder_job

    def stream(self, text: str, images: Sequence[str] | None = None, *,
               auto_approve_workspace: bool = False, task: bool = False) -> AsyncIterator[AnyChunk]:
        """The message through the front door (with the images given, or those of `--image`);
        `task`: `duckflow run`'s task (coding unless something says otherwise, no route line)."""
        images = list(images or self.images)
        self.images = []
        return self._noting(self.conv.stream(text, images, auto_approve_workspace=auto_approve_workspace,
                                             task=task))

    async def _noting(self, stream: AsyncIterator[AnyChunk]) -> AsyncIterator[AnyChunk]:
        async for c in stream:
            yield c
        if self.conv.coder_job:
            self.last_job = self.conv.coder_job

    def answer_coder(self, granted: bool, *, by: str, note: str | None = None) -> AsyncIterator[AnyChunk]:
        """A yes / no on the Coder job that waits; on yes the Worker applies it, after a no with
        words (`note`) the Coder is asked again with them."""
        return self.conv.stream_answer(self.conv.coder_job or "", granted, by=by, note=note)

    def waiting_coder_job(self) -> str | None:
        """This session's newest Coder job not applied yet (it waits, or was answered elsewhere)."""
        row = self.conv.orch.state.conn.execute(
            "SELECT job_id FROM coder_jobs WHERE session_id=? AND status='pending' ORDER BY created_at DESC LIMIT 1",
            (self.conv.session.state.session_id,)).fetchone()
        return str(row[0]) if row else None

    def resume_coder_job(self, job_id: str, *, auto_approve_workspace: bool = False) -> AsyncIterator[AnyChunk]:
        """`duckflow run --resume`: a Coder job granted with `duckflow approvals grant` is applied now;
        a denied one is closed; a pending one waits again."""
        self.last_job = job_id
        return self.conv.resume_coder_job(job_id, auto_approve_workspace=auto_approve_workspace)

    def close(self) -> None:
        self.conv.close()
