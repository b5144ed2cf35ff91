"""SelfCorrector (seed 000 §4.3, phase 4 of §3.1): re-ask the model, naming each error.

At most `max_rounds` (2) re-asks through any async `complete(messages) -> str`. Each re-ask
lists every problem with its kind, line and what was expected (templates/correction.md).
Failed attempts never enter the conversation that is kept: `history` holds the original
messages plus only the reply that was finally used; every failed reading is recorded in
`attempts` for tracing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from duckflow.llm.types import Message
from duckflow.protocols.symops.model import SymOpsResult
from duckflow.protocols.symops.processor import parse
from duckflow.protocols.symops.prompts import correction_message

Complete = Callable[[list[Message]], Awaitable[str]]


@dataclass
class Attempt:
    """One reply that could not be used as it was, and why."""

    reply: str
    result: SymOpsResult
    errors: list[str]


@dataclass
class Correction:
    """The reading finally used, how many re-asks it took, and the failed attempts."""

    result: SymOpsResult
    reply: str
    rounds: int
    history: list[Message]
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def corrected(self) -> bool:
        return self.rounds > 0 and self.result.ok


def describe_errors(result: SymOpsResult) -> list[str]:
    """Each problem as `kind at line N: message; expected ...`."""
    return [i.describe() for i in result.issues]


def _rank(result: SymOpsResult) -> tuple[bool, int, float]:
    return (result.ok, len(result.executable_actions), result.confidence)


class SelfCorrector:
    """`await SelfCorrector(complete).correct(messages, reply)` -> Correction."""

    def __init__(self, complete: Complete, *, max_rounds: int = 2, request: str | None = None) -> None:
        self.complete = complete
        self.max_rounds = max(0, min(max_rounds, 2))
        self.request = request

    async def correct(self, messages: Sequence[Message], reply: str) -> Correction:
        base = list(messages)
        result = parse(reply, request=self.request)
        attempts: list[Attempt] = []
        best_reply, best = reply, result
        rounds = 0
        while not result.ok and rounds < self.max_rounds:
            errors = describe_errors(result)
            attempts.append(Attempt(reply, result, errors))
            ask = base + [Message("assistant", reply), Message("user", correction_message(errors))]
            rounds += 1
            reply = await self.complete(ask)
            result = parse(reply, request=self.request)
            if _rank(result) > _rank(best):
                best_reply, best = reply, result
        if not result.ok:
            attempts.append(Attempt(reply, result, describe_errors(result)))
        if result.ok:
            best_reply, best = reply, result
        return Correction(best, best_reply, rounds, base + [Message("assistant", best_reply)], attempts)
