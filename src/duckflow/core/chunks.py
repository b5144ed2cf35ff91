"""Chunks: the typed events an agent streams, `{time, agent, type, data, seq}` (seed 004 §5-1).

A pydantic discriminated union on `type`: delta, tool_call (and tool_call_delta: a native call's
arguments as they stream), tool_response, usage, error,
handoff, warning, done — and the conversation's own kinds that an application on the loop
(the companion) adds: state (a step move or a refused one), decision, plan, approval (request
and answer), notice, progress (what runs now, for a spinner) and reply (the text for the
person at the end of a turn). `seq` is stamped by the session's `SessionSequence` when a chunk is
handed to the consumer, so it grows by exactly one per chunk within a session, across
handoffs and parallel tool calls; a gap means a chunk was lost (clients can resume).
"""

# no `from __future__ import annotations` here: pydantic would compile every field's annotation
# string to evaluate it (a ForwardRef each; ~15% of this module's import)

import time as _time
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from duckflow.core.sequence import SessionSequence as SessionSequence  # re-exported here

_last_stamp: tuple[int, str] = (-1, "")


def now_iso() -> str:
    """The current time, ISO-8601 in UTC with milliseconds: `2025-05-23T04:14:33.892Z`.

    The text of the last millisecond is kept: the chunks of one turn mostly share one, and
    formatting a time was the largest cost of making a chunk."""
    global _last_stamp
    ms = _time.time_ns() // 1_000_000
    last = _last_stamp
    if last[0] == ms:
        return last[1]
    seconds, milli = divmod(ms, 1000)
    text = f"{_time.strftime('%Y-%m-%dT%H:%M:%S', _time.gmtime(seconds))}.{milli:03d}Z"
    _last_stamp = (ms, text)
    return text


class _Data(BaseModel):
    """A chunk's payload. Empty list and dict defaults are written as literals (pydantic copies
    them for each instance), not `Field(default_factory=list)`: to build a schema pydantic asks
    every factory for its signature, and `list`'s comes from parsing its text signature with
    `tokenize` (~1.3 ms to compile its pattern once, then ~0.1 ms a field)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class DeltaData(_Data):
    text: str


class ToolCallData(_Data):
    id: str
    name: str
    arguments: dict[str, Any]


class ToolCallDeltaData(_Data):
    """A native tool call as it forms: a string argument (`key`) grew by `text` (decoded), or is
    complete (`done`). Only to show what is being written; the `tool_call` chunk is what runs."""

    id: str
    name: str = ""
    key: str
    text: str = ""
    done: bool = False


class ToolResponseData(_Data):
    id: str
    name: str
    content: str
    is_error: bool = False


class UsageData(_Data):
    prompt_tokens: int
    completion_tokens: int
    model: str = ""
    session_total: int | None = None


class ErrorData(_Data):
    code: str
    message: str
    hint: str | None = None
    tool: str | None = None


class HandoffData(_Data):
    phase: Literal["start", "return"]
    source: str
    target: str
    depth: int
    input: str | None = None
    result: str | None = None


class WarningData(_Data):
    code: str
    message: str
    details: dict[str, Any] = {}  # a literal: see _Data


class DoneData(_Data):
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    turns: int = 0
    ending: str | None = None  # a companion task: done | approval | input | no_progress | ...
    # a companion task's result: kind (done | not_done | not_verified), said, check, expected, seen
    result: dict[str, str] | None = None


class StateData(_Data):
    """A step move (or a refused one): from, to, the status after it, who asked and why."""

    from_step: str
    to_step: str
    status: str
    source: str
    allowed: bool = True
    reason: str = ""


class DecisionData(_Data):
    rationale: str
    step: str
    pattern: str
    next_step: str
    goal_consistency: str = ""
    constraint_check: str = ""
    safe_default: bool = False
    alternatives: list[str] = []


class PlanData(_Data):
    """A plan and its actions; `states` says per action: pending | running | done | failed | skipped."""

    plan_id: str
    status: str
    text: str = ""
    actions: list[str] = []
    states: list[str] = []


class ApprovalData(_Data):
    phase: Literal["request", "answer"]
    job_id: str
    request: dict[str, Any] = {}
    call: dict[str, Any] = {}
    granted: bool | None = None
    by: str | None = None


class NoticeData(_Data):
    code: str
    message: str
    details: dict[str, Any] = {}


class ProgressData(_Data):
    """What runs now (a model call, a tool) for a spinner: `start` then `end` with its time."""

    phase: Literal["start", "end"]
    what: str
    elapsed_ms: float = 0.0
    stage: str = ""  # a model's own wait: loading | prompt | writing (llm.types.ProgressEvent)
    tokens: int = 0  # for `prompt`: the prompt tokens to evaluate (not reused from the KV cache)


class ReplyData(_Data):
    """The text for the person at the end of a turn (parts of it may have streamed as deltas)."""

    text: str
    step: str = ""
    status: str = ""


class _ChunkBase(BaseModel):
    """Fields in the order every channel prints them: time, agent, type, data, seq (seed 004 §5-1)."""

    # schemas are built on first use: a run emits a few of the kinds, and building all of them
    # at import cost ~60 ms of every start
    model_config = ConfigDict(defer_build=True)

    time: str = Field(default_factory=now_iso)
    agent: str
    type: str  # each kind narrows it to its Literal (the union's discriminator)
    data: _Data  # each kind narrows it to its own data model
    seq: int = 0  # stamped by the session's SessionSequence when the consumer receives it

    def to_json(self) -> str:
        return self.model_dump_json()

    def to_sse(self) -> str:
        """One Server-Sent Events frame: `id:` is the seq, `event:` the type."""
        return f"id: {self.seq}\nevent: {self.type}\ndata: {self.model_dump_json()}\n\n"


class DeltaChunk(_ChunkBase):
    type: Literal["delta"] = "delta"
    data: DeltaData


class ToolCallChunk(_ChunkBase):
    type: Literal["tool_call"] = "tool_call"
    data: ToolCallData


class ToolCallDeltaChunk(_ChunkBase):
    type: Literal["tool_call_delta"] = "tool_call_delta"
    data: ToolCallDeltaData


class ToolResponseChunk(_ChunkBase):
    type: Literal["tool_response"] = "tool_response"
    data: ToolResponseData


class UsageChunk(_ChunkBase):
    type: Literal["usage"] = "usage"
    data: UsageData


class ErrorChunk(_ChunkBase):
    type: Literal["error"] = "error"
    data: ErrorData


class HandoffChunk(_ChunkBase):
    type: Literal["handoff"] = "handoff"
    data: HandoffData


class WarningChunk(_ChunkBase):
    type: Literal["warning"] = "warning"
    data: WarningData


class DoneChunk(_ChunkBase):
    """The end of one agent's run (a handoff target's too): its final text and usage."""

    type: Literal["done"] = "done"
    data: DoneData


class StateChunk(_ChunkBase):
    type: Literal["state"] = "state"
    data: StateData


class DecisionChunk(_ChunkBase):
    type: Literal["decision"] = "decision"
    data: DecisionData


class PlanChunk(_ChunkBase):
    type: Literal["plan"] = "plan"
    data: PlanData


class ApprovalChunk(_ChunkBase):
    type: Literal["approval"] = "approval"
    data: ApprovalData


class NoticeChunk(_ChunkBase):
    type: Literal["notice"] = "notice"
    data: NoticeData


class ProgressChunk(_ChunkBase):
    type: Literal["progress"] = "progress"
    data: ProgressData


class ReplyChunk(_ChunkBase):
    type: Literal["reply"] = "reply"
    data: ReplyData


# a new kind of chunk: a `_Data` model, a `_ChunkBase` subclass with its `type` Literal, and
# one entry here (the only place the kinds are listed)
AnyChunk = Union[DeltaChunk, ToolCallChunk, ToolCallDeltaChunk, ToolResponseChunk, UsageChunk,
                 ErrorChunk, HandoffChunk, WarningChunk, DoneChunk, StateChunk, DecisionChunk, PlanChunk,
                 ApprovalChunk, NoticeChunk, ProgressChunk, ReplyChunk]
Chunk = Annotated[AnyChunk, Field(discriminator="type")]

_adapter: TypeAdapter[Any] | None = None


def parse_chunk(value: dict[str, Any] | str | bytes) -> AnyChunk:
    """Read a chunk back from a dict or JSON text (e.g. on the client side of SSE)."""
    global _adapter
    if _adapter is None:
        _adapter = TypeAdapter(Chunk)
    if isinstance(value, (str, bytes)):
        return _adapter.validate_json(value)
    return _adapter.validate_python(value)


def delta(agent: str, text: str) -> "DeltaChunk":
    return DeltaChunk(agent=agent, data=DeltaData(text=text))


def error(agent: str, code: str, message: str, *, hint: str | None = None,
          tool: str | None = None) -> "ErrorChunk":
    return ErrorChunk(agent=agent, data=ErrorData(code=code, message=message, hint=hint, tool=tool))


def warning(agent: str, code: str, message: str, **details: Any) -> "WarningChunk":
    return WarningChunk(agent=agent, data=WarningData(code=code, message=message, details=details))


def notice(agent: str, code: str, message: str, **details: Any) -> "NoticeChunk":
    return NoticeChunk(agent=agent, data=NoticeData(code=code, message=message, details=details))
