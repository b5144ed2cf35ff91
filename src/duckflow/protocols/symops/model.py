"""Sym-Ops data model: actions, questions, notes, issues, repairs and the parse result.

Plain dataclasses; `SymOpsResult.to_dict()` gives the exact shape printed by
`duckflow protocol parse --protocol symops` and `result_from_dict` reads it back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from duckflow.toolkinds import KINDS

Stage = Literal["strict", "repaired", "fuzzy", "failed"]

CANONICAL_TYPES = ("create", "edit", "delete", "run", "test")
CONTENT_OPTIONAL = frozenset({"delete", "run", "test"})

# verb (lower case) -> canonical type; the verb the model wrote is kept on the action.
SYNONYMS: dict[str, str] = {
    "create": "create", "write": "create", "add": "create", "new": "create",
    "edit": "edit", "update": "edit", "modify": "edit", "change": "edit", "patch": "edit",
    "delete": "delete", "remove": "delete", "rm": "delete",
    "run": "run", "execute": "run", "exec": "run", "shell": "run",
    "test": "test", "check": "test", "verify": "test",
    # Japanese, as small models answering in Japanese write them (an addition to the seed)
    "作成": "create", "新規作成": "create", "編集": "edit", "修正": "edit", "更新": "edit",
    "削除": "delete", "実行": "run", "テスト": "test",
}  # fmt: skip

# The workspace tools (TEAM.md) and the verbs models use for them: an action with one of these
# verbs may run even without a tool list; any other unknown verb is shown but not executable.
WORKSPACE_TOOLS = frozenset(KINDS)
TOOL_ALIASES = {"read": "read_file", "cat": "read_file", "open": "read_file", "view": "read_file",
                "list": "list_files", "ls": "list_files", "search": "search_code", "grep": "search_code",
                "find": "search_code", "mkdir": "create_directory", "move": "move_path",
                "mv": "move_path", "rename": "move_path"}  # fmt: skip

VITAL_KEYS = {"c": "confidence", "m": "mood", "f": "focus", "s": "stamina"}
VITAL_ORDER = ("confidence", "mood", "focus", "stamina")


def normalize_verb(verb: str) -> str:
    """The canonical type of `verb`, or the verb itself (lower case) for any other tool name."""
    low = verb.lower()
    return SYNONYMS.get(low, low)


@dataclass(slots=True)
class Action:
    """One declared (or guessed) action. `content` is None when there was no block."""

    type: str
    verb: str
    path: str | None
    content: str | None = None
    depends_on: str | None = None
    confidence: float = 1.0
    executable: bool = True
    hunks: list[dict[str, str]] | None = None
    line: int = 0  # 1-based line of the action in the text it was read from (0: unknown)
    guess: str | None = None  # why the action was guessed (None: declared)
    fence: int = 0  # dashes in the block's fence (0: no block, or not read from text)

    def key(self) -> tuple[Any, ...]:
        """What the action says, without how it was read (for comparisons)."""
        return (self.type, self.verb, self.path, self.content, self.depends_on)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "verb": self.verb,
            "path": self.path,
            "content": self.content,
            "depends_on": self.depends_on,
            "confidence": round(self.confidence, 4),
            "executable": self.executable,
            "hunks": self.hunks,
        }


@dataclass
class Question:
    """A question for the person, with its numbered options (may be empty)."""

    text: str
    options: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "options": list(self.options)}


@dataclass
class Note:
    """An error the model reported itself: `! Kind @ target`."""

    kind: str
    target: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"source": "model", "kind": self.kind, "target": self.target}


@dataclass(slots=True)
class Issue:
    """A problem found while reading the reply: what, where (1-based line) and what was expected."""

    kind: str
    line: int
    message: str
    expected: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": "parser",
            "kind": self.kind,
            "line": self.line,
            "message": self.message,
            "expected": self.expected,
        }

    def describe(self) -> str:
        exp = f"; expected {self.expected}" if self.expected else ""
        return f"{self.kind} at line {self.line}: {self.message}{exp}"


@dataclass(slots=True)
class Repair:
    """One named repair (or warning) and the 1-based line of the original text it concerns."""

    name: str
    line: int
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "line": self.line, "detail": self.detail}


@dataclass
class SymOpsResult:
    """Everything read from one reply. `ok` is True when nothing needed a re-ask."""

    stage: Stage = "strict"
    confidence: float = 1.0
    thoughts: list[str] = field(default_factory=list)
    vitals: dict[str, float] = field(default_factory=dict)
    actions: list[Action] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    issues: list[Issue] = field(default_factory=list)
    repairs: list[Repair] = field(default_factory=list)
    warnings: list[Repair] = field(default_factory=list)
    text: str = ""  # prose that was not protocol (for codecs' free text)

    @property
    def ok(self) -> bool:
        return self.stage != "failed" and not self.issues

    @property
    def executable_actions(self) -> list[Action]:
        return [a for a in self.actions if a.executable]

    def semantic(self) -> tuple[Any, ...]:
        """What the reply says, independent of how it was read (for round-trip checks)."""
        return (
            list(self.thoughts),
            dict(self.vitals),
            [a.key() for a in self.actions],
            [(q.text, list(q.options)) for q in self.questions],
            [(n.kind, n.target) for n in self.notes],
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "stage": self.stage,
            "confidence": round(self.confidence, 4),
            "thoughts": list(self.thoughts),
            "vitals": {k: self.vitals.get(k) for k in VITAL_ORDER},
            "actions": [a.to_dict() for a in self.actions],
            "questions": [q.to_dict() for q in self.questions],
            "errors": [n.to_dict() for n in self.notes] + [i.to_dict() for i in self.issues],
            "repairs": [r.to_dict() for r in self.repairs],
            "warnings": [w.to_dict() for w in self.warnings],
        }


def result_from_dict(data: dict[str, Any]) -> SymOpsResult:
    """Read a result of the `to_dict()` shape back (used by `duckflow protocol render`)."""
    if not isinstance(data, dict):
        raise ValueError("expected a JSON object with Sym-Ops result fields")
    vitals = {k: float(v) for k, v in (data.get("vitals") or {}).items() if v is not None}
    unknown = set(vitals) - set(VITAL_ORDER)
    if unknown:
        raise ValueError(f"unknown vitals: {', '.join(sorted(unknown))}")
    actions = []
    for i, a in enumerate(data.get("actions") or []):
        if not isinstance(a, dict) or not (a.get("type") or a.get("verb")):
            raise ValueError(f"actions[{i}] needs a 'type' or 'verb'")
        verb = str(a.get("verb") or a["type"])
        actions.append(
            Action(
                type=str(a.get("type") or normalize_verb(verb)),
                verb=verb,
                path=a.get("path"),
                content=a.get("content"),
                depends_on=a.get("depends_on"),
                confidence=float(a.get("confidence", 1.0)),
                executable=bool(a.get("executable", True)),
                hunks=a.get("hunks"),
            )
        )
    questions = []
    for q in data.get("questions") or []:
        if isinstance(q, str):
            questions.append(Question(q))
        else:
            questions.append(Question(str(q.get("text", "")), [str(o) for o in q.get("options") or []]))
    notes = [
        Note(str(e.get("kind", "")), e.get("target"))
        for e in data.get("errors") or []
        if isinstance(e, dict) and e.get("source", "model") == "model"
    ]
    return SymOpsResult(
        stage=data.get("stage", "strict"),
        confidence=float(data.get("confidence", 1.0)),
        thoughts=[str(t) for t in data.get("thoughts") or []],
        vitals=vitals,
        actions=actions,
        questions=questions,
        notes=notes,
    )
