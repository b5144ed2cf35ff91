"""AgentState: Step/Status, the fixed five, the extras, vitals and long-term memory (seed 001 §3-5).

Plain dataclasses. Every length limit of seed 001 §5.2 is enforced by the setters: a value
that is too long is shortened *visibly* (it ends in "…") and a note saying what was cut is
appended to `notes`, so nothing is lost silently. `to_dict`/`from_dict` give the persisted
form (see `store.py`).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

ELLIPSIS = "…"

# Limits from seed 001 §5.1/§5.2 and §3.1 (Base: five summaries of at most 100 characters).
GOAL_MAX = 200
WHY_NOW_MAX = 200
ITEM_MAX = 100
CONSTRAINTS_MAX = 2
PLAN_BRIEF_MAX = 3
OPEN_QUESTIONS_MAX = 2
LAST_DELTA_MAX = 200
SUMMARY_MAX = 100
EXCHANGES_KEPT = 5
DECISION_LOG_KEPT = 20
NOTES_KEPT = 20
EVIDENCE_KEPT = 5
LEARNED_PATTERNS_KEPT = 5
FILES_KEPT = 50
PAST_SESSIONS_KEPT = 5


class Step(str, Enum):
    """What the companion is doing (seed 001 §4.1), plus DONE from the transition table."""

    PLANNING = "PLANNING"
    EXECUTION = "EXECUTION"
    REVIEW = "REVIEW"
    AWAITING_APPROVAL = "AWAITING_APPROVAL"
    DONE = "DONE"


class Status(str, Enum):
    """How the current step stands (seed 001 §4.2); kept separate from Step."""

    IN_PROGRESS = "IN_PROGRESS"
    SUCCESS = "SUCCESS"
    ERROR = "ERROR"
    REQUIRES_USER_INPUT = "REQUIRES_USER_INPUT"


def clip(text: str, limit: int) -> tuple[str, bool]:
    """One line of at most `limit` characters; returns (value, was_shortened).

    The prompt inputs clip the same evidence lines and exchanges every turn: a short text's
    answer is remembered (the strings are the state's own, their hashes already known)."""
    if type(text) is str and len(text) <= _CLIP_CACHED_CHARS:
        return _clip_cached(text, limit)
    return _clip(str(text), limit)


_CLIP_CACHED_CHARS = 2000  # longer texts (a pasted log as the task) are not kept in the cache


def _clip(text: str, limit: int) -> tuple[str, bool]:
    line = " ".join(text.split())
    if len(line) <= limit:
        return line, False
    return line[: limit - 1].rstrip() + ELLIPSIS, True


_clip_cached = functools.lru_cache(maxsize=1024)(_clip)


def _clamp01(value: float) -> float:
    return max(0.0, min(1.0, float(value)))


@dataclass
class Vitals:
    """The D.U.C.K. vitals (0..1): from the model's Sym-Ops `#c #m #f #s` lines and from outcomes."""

    confidence: float = 0.8
    mood: float = 0.8
    focus: float = 0.8
    stamina: float = 1.0

    def update_from_symops(self, vitals: dict[str, Any] | None) -> list[str]:
        """Take the values a model reported (None entries ignored); returns the names updated."""
        changed: list[str] = []
        for name in ("confidence", "mood", "focus", "stamina"):
            value = (vitals or {}).get(name)
            if isinstance(value, int | float):
                setattr(self, name, _clamp01(value))
                changed.append(name)
        return changed

    def record_outcome(self, success: bool) -> None:
        """Outcomes move the vitals: failures cost confidence and mood, every action costs stamina."""
        if success:
            self.confidence = _clamp01(self.confidence + 0.05)
            self.mood = _clamp01(self.mood + 0.05)
        else:
            self.confidence = _clamp01(self.confidence - 0.15)
            self.mood = _clamp01(self.mood - 0.1)
            self.focus = _clamp01(self.focus - 0.05)
            self.stamina = _clamp01(self.stamina - 0.08)  # failures tire more
        self.stamina = _clamp01(self.stamina - 0.02)

    def drift(self) -> None:
        """The task drifted from the goal or the plan (a deviation, a 'no' on goal consistency)."""
        self.focus = _clamp01(self.focus - 0.3)

    def line(self) -> str:
        return (
            f"confidence {self.confidence:.2f} · mood {self.mood:.2f} · "
            f"focus {self.focus:.2f} · stamina {self.stamina:.2f}"
        )


@dataclass
class LongTermMemory:
    """Seed 001 §3.1: important experience, learned patterns, user settings."""

    files_created: list[str] = field(default_factory=list)
    successful_operations: int = 0
    failed_operations: int = 0
    learned_patterns: list[str] = field(default_factory=list)
    user_settings: dict[str, str] = field(default_factory=dict)
    past_sessions: list[str] = field(default_factory=list)  # one line per earlier session, newest last

    def note_session(self, session_id: str, line: str) -> None:
        """This session's one-line summary (replaces its earlier line); the last few are kept."""
        tag = f"[{session_id[-6:]}]"
        text, _ = clip(f"{tag} {line}", SUMMARY_MAX)
        self.past_sessions = [p for p in self.past_sessions if not p.startswith(tag)] + [text]
        del self.past_sessions[:-PAST_SESSIONS_KEPT]

    def to_dict(self) -> dict[str, Any]:
        return {"files_created": list(self.files_created), "successful_operations": self.successful_operations,
                "failed_operations": self.failed_operations, "learned_patterns": list(self.learned_patterns),
                "user_settings": dict(self.user_settings), "past_sessions": list(self.past_sessions)}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> LongTermMemory:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in (data or {}).items() if k in known})

    def note_file(self, path: str) -> None:
        if path not in self.files_created:
            self.files_created.append(path)
            del self.files_created[:-FILES_KEPT]

    def learn(self, pattern: str) -> None:
        text, _ = clip(pattern, ITEM_MAX)
        if text and text not in self.learned_patterns:
            self.learned_patterns.append(text)
            del self.learned_patterns[:-LEARNED_PATTERNS_KEPT]


@dataclass
class Exchange:
    """One exchange, summarised: what the person said and what the companion answered."""

    user: str
    reply: str
    at: float = 0.0

    def summary(self, limit: int = SUMMARY_MAX) -> str:
        return clip(f"U: {self.user} / A: {self.reply}", limit)[0]


@dataclass
class AgentState:
    """The single record of one conversation. Mutate it only through `StateOwner` (owner.py)."""

    session_id: str
    workspace: str = ""
    step: Step = Step.PLANNING
    status: Status = Status.IN_PROGRESS
    task: str = ""
    # the fixed five (seed 001 §5)
    goal: str = ""
    why_now: str = ""
    constraints: list[str] = field(default_factory=list)
    plan_brief: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    # extras (seed 001 §5.4)
    context_refs: list[str] = field(default_factory=list)
    decision_log: list[str] = field(default_factory=list)
    pending_gate: bool = False
    pending_job: dict[str, Any] | None = None
    last_delta: str = ""
    # vitals, memory, session information (seed 001 §3.1)
    vitals: Vitals = field(default_factory=Vitals)
    memory: LongTermMemory = field(default_factory=LongTermMemory)
    conversation_count: int = 0
    created_at: float = field(default_factory=time.time)
    last_updated: float = field(default_factory=time.time)
    exchanges: list[Exchange] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)  # latest tool results, newest last
    recovery_retries: int = 0
    plan_id: str | None = None
    notes: list[str] = field(default_factory=list)

    # ---- setters that enforce the limits visibly -------------------------------------

    def _note(self, text: str) -> None:
        self.notes.append(text)
        del self.notes[:-NOTES_KEPT]

    def _one(self, name: str, value: str, limit: int) -> str:
        text, cut = clip(value, limit)
        if cut:
            self._note(f"{name} shortened to {limit} characters (was {len(' '.join(value.split()))})")
        return text

    def _many(self, name: str, values: list[str], count: int, limit: int) -> list[str]:
        items = [self._one(name, v, limit) for v in values if str(v).strip()]
        if len(items) > count:
            dropped = items[:-count]
            self._note(f"{name}: kept the newest {count} of {len(items)}; dropped: " + "; ".join(dropped))
            items = items[-count:]
        return items

    def set_goal(self, value: str) -> None:
        self.goal = self._one("goal", value, GOAL_MAX)

    def set_why_now(self, value: str) -> None:
        self.why_now = self._one("why_now", value, WHY_NOW_MAX)

    def set_constraints(self, values: list[str]) -> None:
        self.constraints = self._many("constraints", values, CONSTRAINTS_MAX, ITEM_MAX)

    def add_constraint(self, value: str) -> None:
        self.set_constraints([*self.constraints, value])

    def set_plan_brief(self, values: list[str]) -> None:
        self.plan_brief = self._many("plan_brief", values, PLAN_BRIEF_MAX, ITEM_MAX)

    def set_open_questions(self, values: list[str]) -> None:
        self.open_questions = self._many("open_questions", values, OPEN_QUESTIONS_MAX, ITEM_MAX)

    def set_last_delta(self, value: str) -> None:
        self.last_delta = self._one("last_delta", value, LAST_DELTA_MAX)

    def log_decision(self, value: str) -> None:
        self.decision_log.append(self._one("decision_log", value, ITEM_MAX))
        del self.decision_log[:-DECISION_LOG_KEPT]

    def add_context_ref(self, ref: str) -> None:
        if ref not in self.context_refs:
            self.context_refs.append(ref)
            del self.context_refs[:-DECISION_LOG_KEPT]

    def add_evidence(self, line: str) -> None:
        self.evidence.append(clip(line, 300)[0])
        del self.evidence[:-EVIDENCE_KEPT]

    def add_exchange(self, user: str, reply: str) -> None:
        self.exchanges.append(
            Exchange(clip(user, SUMMARY_MAX)[0], clip(reply, SUMMARY_MAX)[0], time.time())
        )
        del self.exchanges[:-EXCHANGES_KEPT]
        self.conversation_count += 1

    # ---- views -------------------------------------------------------------------------

    def summaries(self, n: int = EXCHANGES_KEPT) -> list[str]:
        """The last `n` exchanges as one line each (≤100 characters)."""
        return [e.summary() for e in self.exchanges[-n:]]

    def to_dict(self) -> dict[str, Any]:
        # written by hand (not dataclasses.asdict): it runs after every change
        v, m = self.vitals, self.memory
        return {
            "session_id": self.session_id, "workspace": self.workspace,
            "step": self.step.value, "status": self.status.value, "task": self.task,
            "goal": self.goal, "why_now": self.why_now, "constraints": list(self.constraints),
            "plan_brief": list(self.plan_brief), "open_questions": list(self.open_questions),
            "context_refs": list(self.context_refs), "decision_log": list(self.decision_log),
            "pending_gate": self.pending_gate, "pending_job": self.pending_job,
            "last_delta": self.last_delta,
            "vitals": {"confidence": v.confidence, "mood": v.mood, "focus": v.focus, "stamina": v.stamina},
            "memory": m.to_dict(),
            "conversation_count": self.conversation_count, "created_at": self.created_at,
            "last_updated": self.last_updated,
            "exchanges": [{"user": e.user, "reply": e.reply, "at": e.at} for e in self.exchanges],
            "evidence": list(self.evidence), "recovery_retries": self.recovery_retries,
            "plan_id": self.plan_id, "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentState:
        data = dict(data)
        vitals = Vitals(**data.pop("vitals", {}) or {})
        memory = LongTermMemory.from_dict(data.pop("memory", {}))
        exchanges = [Exchange(**e) for e in data.pop("exchanges", []) or []]
        step = Step(data.pop("step", Step.PLANNING.value))
        status = Status(data.pop("status", Status.IN_PROGRESS.value))
        known = set(cls.__dataclass_fields__)
        extra = {k: v for k, v in data.items() if k in known}
        return cls(
            **extra, step=step, status=status, vitals=vitals, memory=memory, exchanges=exchanges
        )
