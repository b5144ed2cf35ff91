"""The Main model's decision JSON (seed 001 §7.1): model, tolerant reading, one re-ask, safe default.

Fields of the seed: rationale, goal_consistency, constraint_check, next_step, step,
prompt_pattern, state_delta. Added because people need them (optional, documented in
docs/companion.md): `reply` (what to say to the person), `question`, `options`,
`confidence`. `state_delta` may be a sentence or an object updating the fixed five.

Reading: `protocols.jsonreply.read_json` (fences, prose around, broken JSON repaired); a reply
that still does not validate is re-asked once naming the errors; a second failure gives the
safe default — wait for the person — and a message saying so.
"""

# no `from __future__ import annotations` here: pydantic would compile every field's annotation
# string to evaluate it (a ForwardRef each; ~15% of this module's import)

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from duckflow.llm.nesting import nests_deeper
from duckflow.protocols.jsonreply import MAX_NESTING, JsonReply, read_json, reask_message

STEPS = ("PLANNING", "EXECUTION", "REVIEW", "AWAITING_APPROVAL", "DONE")

SCHEMA_HINT = (  # `reply` first: it streams to the person while the rest is written
    '{"reply": "...", "rationale": "...", "goal_consistency": "yes|no: why", "constraint_check": "yes|no: why", '
    '"next_step": "done|pending_user|defer|continue", '
    '"step": "PLANNING|EXECUTION|REVIEW|AWAITING_APPROVAL|DONE", '
    '"prompt_pattern": "base_main|base_main_specialized", "state_delta": {}}'
)


class MainDecision(BaseModel):
    """The Main model's decision for one turn."""

    model_config = ConfigDict(extra="ignore")

    rationale: str = Field(min_length=1)
    goal_consistency: str
    constraint_check: str
    next_step: Literal["done", "pending_user", "defer", "continue"]
    step: Literal["PLANNING", "EXECUTION", "REVIEW", "AWAITING_APPROVAL", "DONE"]
    prompt_pattern: Literal["base_main", "base_main_specialized"] = "base_main"
    state_delta: str | dict[str, Any] | None = None
    reply: str = ""
    question: str | None = None
    options: list[str] = []  # copied per instance; a literal, not default_factory=list/dict (see core/chunks.py)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)

    @field_validator("next_step", "prompt_pattern", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("step", mode="before")
    @classmethod
    def _upper(cls, v: Any) -> Any:
        return v.strip().upper() if isinstance(v, str) else v

    @field_validator("goal_consistency", "constraint_check", "rationale", mode="before")
    @classmethod
    def _text(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return "yes" if v else "no"
        return v

    @field_validator("goal_consistency", "constraint_check", "rationale", "reply")
    @classmethod
    def _not_copied(cls, v: str) -> str:
        if is_placeholder(v):
            raise ValueError(f"{v!r} is the prompt's example text, not an answer")
        return v

    @field_validator("state_delta")
    @classmethod
    def _delta_not_copied(cls, v: Any) -> Any:
        if isinstance(v, dict):
            for key in ("goal", "why_now", "add_constraint"):
                if isinstance(v.get(key), str) and is_placeholder(v[key]):
                    raise ValueError(f"state_delta.{key} {v[key]!r} is the prompt's example text")
        return v


# the example values of the Main prompt (prompts/templates/*/main.j2) and the schema hint: a model
# that copies them has not answered (a constrained small model was seen doing exactly that)
PLACEHOLDERS = frozenset({
    "why, one line", "what to tell the person", "yes|no: why", "...", "…", "why", "string",
    "hello, one line,", "one line", "done|pending_user|defer|continue", "base_main|base_main_specialized",
})
_ENUM_LIST = re.compile(r"^\s*[A-Za-z_]+(\s*\|\s*[A-Za-z_]+)+\s*(:.*)?$")


def is_placeholder(text: str) -> bool:
    """Copied example text: a known placeholder, an `a|b|c` choice list, or `<describe it>`."""
    t = text.strip()
    low = t.lower()
    return (low in PLACEHOLDERS or bool(_ENUM_LIST.match(t))
            or (t.startswith("<") and t.endswith(">") and " " in t))


def decision_schema(steps: tuple[str, ...] = STEPS) -> dict[str, Any]:
    """The JSON schema a constrained model's decision must match (llama.cpp's converter, Ollama's
    `format`, `response_format`): bounded strings, the enums as enums, no free-form extras."""
    def text(n: int) -> dict[str, Any]:
        return {"type": "string", "minLength": 1, "maxLength": n}

    return {
        "type": "object",
        "properties": {
            "rationale": text(200), "goal_consistency": text(120), "constraint_check": text(120),
            "next_step": {"enum": ["done", "pending_user", "defer", "continue"]},
            "step": {"enum": list(steps)},
            "prompt_pattern": {"enum": ["base_main", "base_main_specialized"]},
            "reply": {"type": "string", "maxLength": 400},
        },
        "required": ["rationale", "goal_consistency", "constraint_check", "next_step", "step",
                     "prompt_pattern", "reply"],
        "additionalProperties": False,
    }


def safe_default(current_step: str, why: str) -> "MainDecision":
    """Wait for the person: no transition, no tool call."""
    return MainDecision(
        rationale=f"could not read the model's decision ({why}); waiting for you",
        goal_consistency="unknown",
        constraint_check="unknown",
        next_step="pending_user",
        step=current_step if current_step in STEPS else "PLANNING",  # type: ignore[arg-type]
        prompt_pattern="base_main",
        reply="",
    )


@dataclass
class DecisionResult:
    decision: MainDecision
    raw: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    reasked: bool = False
    safe_default: bool = False
    message: str = ""


def _read(text: str) -> JsonReply:
    """`read_json(text, MainDecision)`, the usual reply first: exactly one JSON object with no
    fence and no reasoning tags, which read_json would take as it is. It is parsed and validated
    at once, without read_json's bracket scan (~40 us of a turn); anything else, or an object that
    does not validate, goes to read_json."""
    stripped = text.strip()
    if (stripped[:1] == "{" and "<" not in stripped and "```" not in stripped
            and not nests_deeper(stripped, MAX_NESTING)):
        try:
            value = json.loads(stripped)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            try:
                return JsonReply(True, MainDecision.model_validate(value))
            except ValidationError:
                pass
    return read_json(text, MainDecision)


def reask_text(errors: list[str]) -> str:
    return reask_message(errors, SCHEMA_HINT)


Ask = Callable[[str | None], Awaitable[str]]


CUT_OFF = "the reply was cut off at its length limit before it ended"
CUT_REASK = ("Your reply was cut off at its length limit before it ended, so none of it was used. "
             "Answer again, shorter: the JSON object only, with a reply of a few sentences.")


async def read_decision(ask: Ask, current_step: str, cut: Callable[[], bool] | None = None) -> "DecisionResult":
    """`ask(None)` makes the Main call; `ask(text)` re-asks with `text` added. One re-ask at most.
    `cut()` says whether the last reply was cut off at its token bound: such a reply is asked
    again, never repaired into a decision the model did not finish (the second one is read)."""
    raw: list[str] = []
    repairs: list[str] = []
    all_errors: list[str] = []
    reask: str | None = None
    errors: list[str] = []
    for attempt in range(2):
        text = await ask(reask)
        raw.append(text)
        if attempt == 0 and cut is not None and cut():
            errors = [CUT_OFF]
            all_errors += errors
            reask = CUT_REASK
            continue
        r = _read(text)
        repairs += r.repairs
        if r.ok and isinstance(r.value, MainDecision):
            return DecisionResult(r.value, raw, repairs, all_errors, reasked=attempt > 0)
        errors = list(r.errors)
        all_errors += errors
        if attempt == 0:
            reask = reask_text(errors)
    why = "; ".join(errors[:3]) or "unreadable"
    return DecisionResult(safe_default(current_step, why), raw, repairs, all_errors, reasked=True,
                          safe_default=True, message=(
        "The model's decision could not be read twice in a row, so nothing was done and no "
        f"step changed ({why}). Say what you want next, or try another model with --model."))


_REPLY_KEY = re.compile(r'"reply"\s*:\s*"')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class ReplyStreamer:
    """Streams the `reply` field of the decision JSON while the model writes it.

    The decision is JSON a person should not read; its `reply` string is what they should.
    `feed(text)` takes the model's text as it arrives and calls `emit` with each newly
    decoded part of the reply value (JSON escapes decoded; an escape cut by the chunk
    boundary waits for the next piece). Everything outside the value is swallowed.
    """

    def __init__(self, emit: Callable[[str], None]) -> None:
        self.emit = emit
        self.buf = ""
        self.pos = -1  # index in buf of the next undecoded character of the value
        self.closed = False
        self.streamed = ""

    def feed(self, text: str) -> None:
        if self.closed:
            return
        self.buf += text
        if self.pos < 0:
            m = _REPLY_KEY.search(self.buf)
            if m is None:
                return
            self.pos = m.end()
        out: list[str] = []
        buf, i = self.buf, self.pos
        while i < len(buf):
            ch = buf[i]
            if ch == '"':
                self.closed = True
                i += 1
                break
            if ch != "\\":
                out.append(ch)
                i += 1
                continue
            if i + 1 >= len(buf):
                break  # the escape continues in the next piece
            code = buf[i + 1]
            if code == "u":
                if i + 6 > len(buf):
                    break
                try:
                    out.append(chr(int(buf[i + 2:i + 6], 16)))
                except ValueError:
                    out.append(buf[i:i + 6])
                i += 6
                continue
            out.append(_ESCAPES.get(code, code))
            i += 2
        self.pos = i
        if out:
            piece = "".join(out)
            self.streamed += piece
            self.emit(piece)


class Silent:
    """A streamer that shows nothing (output guardrails hold the text back until they pass)."""

    holds = True  # nor a native call's arguments as they form (core.model_call)

    def feed(self, text: str) -> None:
        return None


class LineFeed:
    """Streams the reply to the person line by line as it is written (the actions as they come)."""

    def __init__(self, emit: Any) -> None:
        self.emit = emit
        self.pending = ""

    def feed(self, text: str) -> None:
        self.pending += text
        if "\n" in self.pending:
            done, _, self.pending = self.pending.rpartition("\n")
            self.emit(done + "\n")
