"""The dialog policy of seed 001 §9: five small rules, each a function with one job.

- Clarify: at most one question, and only when confidence is low or the impact is high.
  Low vitals confidence raises the bar a reply's confidence must clear (so the companion asks
  sooner when it has been failing).
- Propose: an A/B choice only when there are two real (distinct, non-empty) options.
- Gate: write, delete and execute always go through the gate.
- Summarize → Next: a short summary and the next move, only for long replies.
- Nudge: one first step at the end, only when the person says they are stuck.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from duckflow.companion.state import clip

Impact = Literal["low", "medium", "high"]

GATED_OPS = frozenset({"write", "delete", "execute"})
STUCK_PATTERNS = re.compile(
    r"\b(i'?m stuck|stuck|no idea|don'?t know (how|what|where)|do not know (how|what|where)|"
    r"i'?m lost|confused|can'?t figure|cannot figure|where do i start|help me)\b"
    r"|困って|詰まって|行き詰|わから|分から|どうすれば|どうしたら",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class PolicyConfig:
    clarify_confidence: float = 0.5  # ask when the reply's confidence is below this
    low_vitals: float = 0.4  # vitals confidence below this ...
    low_vitals_raise: float = 0.2  # ... raises the clarify bar by this much
    long_reply_chars: int = 800
    long_reply_lines: int = 15


@dataclass
class Situation:
    """What the policy looks at for one reply."""

    user_text: str
    reply: str
    confidence: float = 1.0
    vitals_confidence: float = 0.8
    impact: Impact = "low"
    questions: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    summary: str = ""
    next_step: str = ""
    first_step: str = ""


@dataclass
class PolicyOutcome:
    text: str
    question: str | None = None
    applied: list[str] = field(default_factory=list)


class DialogPolicy:
    def __init__(self, config: PolicyConfig | None = None) -> None:
        self.config = config or PolicyConfig()

    # -- Clarify --------------------------------------------------------------------------
    def clarify_threshold(self, vitals_confidence: float) -> float:
        c = self.config
        return c.clarify_confidence + (c.low_vitals_raise if vitals_confidence < c.low_vitals else 0.0)

    def clarify(self, sit: Situation) -> str | None:
        """The one question to ask, or None when confidence is fine and impact is not high."""
        questions = [q.strip() for q in sit.questions if q.strip()]
        if not questions:
            return None
        low = sit.confidence < self.clarify_threshold(sit.vitals_confidence)
        if not (low or sit.impact == "high"):
            return None
        return questions[0]

    # -- Propose --------------------------------------------------------------------------
    @staticmethod
    def real_options(options: list[str]) -> list[str]:
        seen: dict[str, str] = {}
        for o in options:
            key = " ".join(o.lower().split()).strip(" .。")
            if key and key not in seen:
                seen[key] = o.strip()
        return list(seen.values())

    def propose(self, options: list[str]) -> str | None:
        """An 'A / B' block when two or more real options exist; else None."""
        real = self.real_options(options)
        if len(real) < 2:
            return None
        return f"Option A: {real[0]}\nOption B: {real[1]}"

    # -- Gate -----------------------------------------------------------------------------
    @staticmethod
    def needs_gate(op: str) -> bool:
        """Write, delete and execute always pass the gate (reads are checked by the guard only)."""
        return op in GATED_OPS

    # -- Summarize -> Next -----------------------------------------------------------------
    def is_long(self, reply: str) -> bool:
        c = self.config
        return len(reply) > c.long_reply_chars or reply.count("\n") + 1 > c.long_reply_lines

    def summarize_next(self, reply: str, summary: str, next_step: str) -> str | None:
        if not self.is_long(reply) or not (summary or next_step):
            return None
        head = clip(summary or reply, 120)[0]
        tail = f"\nNext: {clip(next_step, 120)[0]}" if next_step else ""
        return f"Summary: {head}{tail}"

    # -- Nudge ----------------------------------------------------------------------------
    @staticmethod
    def is_stuck(user_text: str) -> bool:
        return bool(STUCK_PATTERNS.search(user_text))

    def nudge(self, user_text: str, first_step: str) -> str | None:
        if not first_step or not self.is_stuck(user_text):
            return None
        return f"First step: {clip(first_step, 100)[0]}"

    # -- all together ---------------------------------------------------------------------
    def apply(self, sit: Situation) -> PolicyOutcome:
        out = PolicyOutcome(sit.reply.rstrip())
        question = self.clarify(sit)
        if question:
            out.question = question
            out.text += f"\n\nQuestion: {question}"
            out.applied.append("clarify")
        ab = self.propose(sit.options)
        if ab:
            out.text += f"\n\n{ab}"
            out.applied.append("propose")
        summary = self.summarize_next(sit.reply, sit.summary, sit.next_step)
        if summary:
            out.text += f"\n\n{summary}"
            out.applied.append("summarize_next")
        nudge = self.nudge(sit.user_text, sit.first_step)
        if nudge:
            out.text += f"\n{nudge}"
            out.applied.append("nudge")
        out.text = out.text.strip()
        return out
