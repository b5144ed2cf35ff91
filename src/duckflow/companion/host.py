"""What a turn needs of its session: the `TurnHost` protocol the turn kinds are written against.

The turn kinds — single-call steps and their check-then-fix ending, the specialized grammar,
a side question, the task loop — take the session as a `TurnHost`: its parts (the state owner,
the action runner, the chunk hub, the engine, the codec, the `TurnContext`) and the few step
operations they share. `CompanionSession` is the host; typed against this protocol, the turn
kinds sit below the session in the import picture, so no module of companion/ imports one
that imports it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from duckflow.companion.actions import ActionRunner, CallOutcome
    from duckflow.companion.chunkhub import ChunkHub
    from duckflow.companion.decision import MainDecision
    from duckflow.companion.engine import EngineLoop
    from duckflow.companion.owner import StateOwner
    from duckflow.companion.plan import Plan
    from duckflow.companion.state import AgentState, Status, Step
    from duckflow.companion.transitions import TransitionRecord
    from duckflow.companion.turnctx import TurnContext, TurnResult
    from duckflow.core.chunks import AnyChunk
    from duckflow.llm.types import Model, ToolCall
    from duckflow.prompts.budget import BuiltPrompts
    from duckflow.protocols.codec import Codec


class TurnHost(Protocol):
    owner: StateOwner
    runner: ActionRunner
    chunks: ChunkHub
    engine: EngineLoop
    codec: Codec | None
    model: Model
    mode: str
    turn: TurnContext
    last_tokens: dict[str, int]
    corrections: list[str]

    @property
    def state(self) -> AgentState: ...

    def _emit(self, chunk: AnyChunk) -> None: ...

    def project_text(self) -> str: ...

    def _build(self, specialized_step: str | None = None, tools_text: str = "") -> BuiltPrompts: ...

    def _transition(self, to: Step, reason: str, source: Any, status: Status | None = None) -> TransitionRecord: ...

    def _reply(self, text: str) -> None: ...

    def _result(self, reply: str, d: MainDecision | None, outcomes: list[CallOutcome], next_step: str,
                *, stopped: str | None = None) -> TurnResult: ...

    def _plan(self, text: str, calls: list[ToolCall]) -> str: ...

    def _plan_chunk(self, plan: Plan, text: str = "") -> None: ...

    def _mark(self, plan: Plan, index: int, state: str) -> None: ...

    async def _run_calls(self, calls: list[ToolCall], d: MainDecision,
                         prior: list[CallOutcome] | None = None) -> list[CallOutcome]: ...

    async def resume_pending(self) -> TurnResult | None: ...

    async def continue_task(self, *, observed: bool) -> TurnResult: ...

    def take_corrections(self) -> str | None: ...

    def note_cancelled(self) -> None: ...
