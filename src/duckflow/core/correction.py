"""Self-correction of text-codec replies (seed 000 §4.3): at most two re-asks naming each error.

When a Sym-Ops or DML reply cannot be read as written (`Decoded.errors`), the model is asked
again with every problem listed (`kind at line N: message; expected ...` for Sym-Ops), at most
`max_rounds` times. The failed attempts stay out of the conversation that is kept: the
caller appends only the reply finally used. When no round gives a readable reply, the result
says so and nothing of it may run (`Corrected.failed`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from duckflow.llm.types import Message, ToolSpec
from duckflow.protocols.codec import Codec, Decoded

Ask = Callable[[list[Message]], Awaitable[str]]


@dataclass
class Corrected:
    """The reply used, its reading, how many re-asks it took, and the failed attempts."""

    reply: str
    decoded: Decoded
    rounds: int
    attempts: list[tuple[str, list[str]]] = field(default_factory=list)  # (reply, errors)

    @property
    def failed(self) -> bool:
        return bool(self.decoded.errors)


def needs_correction(decoded: Decoded) -> bool:
    """A reply with errors is re-asked; plain prose (no errors) is an answer."""
    return bool(decoded.errors)


def correction_prompt(codec: Codec, errors: Sequence[str]) -> str:
    """The re-ask: the codec's own wording when it has one, else a generic one."""
    own = getattr(codec, "correction_prompt", None)
    if callable(own):
        text: str = own(list(errors))
        return text
    listed = "\n".join(f"- {e}" for e in errors)
    return (f"Your previous reply could not be used as it was: {len(errors)} problem(s) in its "
            f"{codec.name} format.\n\n{listed}\n\nSend the whole reply again in the required format. "
            "Fix only the format; keep the same actions, paths and contents.")  # fmt: skip


async def self_correct(ask: Ask, codec: Codec, specs: Sequence[ToolSpec], messages: Sequence[Message],
                       reply: str, decoded: Decoded, *, max_rounds: int = 2) -> Corrected:  # fmt: skip
    """Re-ask until the reply reads without errors, at most `max_rounds` (≤ 2) times.

    Each re-ask is `messages` + the last failed reply + the list of its errors; the next
    failed reply replaces the last one (the model sees only its latest attempt).
    """
    attempts: list[tuple[str, list[str]]] = []
    rounds = 0
    while needs_correction(decoded) and rounds < min(max_rounds, 2):
        attempts.append((reply, list(decoded.errors)))
        rounds += 1
        reply = await ask([*messages, Message("assistant", reply),
                           Message("user", correction_prompt(codec, decoded.errors))])  # fmt: skip
        decoded = codec.decode(reply, specs)
    if needs_correction(decoded):
        attempts.append((reply, list(decoded.errors)))
    return Corrected(reply, decoded, rounds, attempts)
