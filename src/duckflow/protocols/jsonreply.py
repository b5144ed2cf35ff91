"""One reader for every JSON a model returns: unwrap, repair (json_repair), validate, report.

`read_json(text, schema)` finds the JSON in a reply (a ```json fence, an object inside prose,
or the bare text), parses it strictly, and only if that fails repairs it with the json_repair
library (trailing commas, single quotes, comments, truncation...). Every step taken is named
in `repairs`. With a pydantic model the value is validated and the errors are phrased for a
re-ask (`reask_message`). Nothing is invented: empty or non-JSON text, or a repair that
changes the kind of value (an object turning into a list) or recovers nothing, is `ok=False`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from duckflow.llm.types import Message

if TYPE_CHECKING:
    from pydantic import BaseModel

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)(?:\r?\n[ \t]*```|\Z)", re.S)


@dataclass
class JsonReply:
    """`value` is the validated model instance when a schema was given, else the parsed JSON."""

    ok: bool
    value: Any = None
    repairs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)  # failed replies (re-ask loop)

    def to_dict(self) -> dict[str, Any]:
        value = self.value
        if hasattr(value, "model_dump"):
            value = value.model_dump(mode="json")
        return {"ok": self.ok, "value": value, "repairs": self.repairs, "errors": self.errors}


_THINK = re.compile(r"(?is)<(think|thinking|reasoning)>.*?(?:</\1>|\Z)")
_THINK_CLOSE = re.compile(r"(?is)\A.*?</(?:think|thinking|reasoning)>")


def strip_thinking(text: str) -> str:
    """`text` without reasoning blocks (`<think>…</think>`, or all before a lone `</think>`)."""
    out = _THINK.sub("", text)
    return _THINK_CLOSE.sub("", out, count=1)


def _balanced_end(text: str, start: int) -> int | None:
    """Index after the bracket closing the one at `start` (strings respected), else None."""
    stack: list[str] = []
    in_str: str | None = None
    escaped = False
    pairs = {"{": "}", "[": "]"}
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == in_str:
                in_str = None
            continue
        if ch == '"':
            in_str = ch
        elif ch in pairs:
            stack.append(pairs[ch])
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return i + 1
    return None


def _candidates(text: str) -> Iterator[tuple[str, list[str], bool]]:
    """(candidate JSON text, repairs so far, cut off?) in the order they should be tried."""
    stripped = text.strip()
    if stripped[:1] == '"':
        try:
            inner = json.loads(stripped)
        except ValueError:
            inner = None
        if isinstance(inner, str) and inner.strip()[:1] in ("{", "["):
            yield inner.strip(), ["decoded_json_string"], False
    fences = [m for m in _FENCE.finditer(text) if m.group(1).lower() in ("", "json", "jsonc", "json5")]
    for m in fences:
        body = m.group(2).strip()
        if body:
            yield body, ["stripped_code_fence"], not m.group(0).rstrip().endswith("```")
    if stripped[:1] in "{[":
        end = _balanced_end(stripped, 0)
        if end is None or end == len(stripped):
            yield stripped, [], end is None
            return
    for m in re.finditer(r"[{\[]", text):
        start = m.start()
        if text[start] == "[" and not re.match(r"\[\s*[\"'{\[\d\-tfn\]]", text[start:]):
            continue  # "[see below]" in prose is not JSON
        end = _balanced_end(text, start)
        if end is None:
            yield text[start:].strip(), ["extracted_from_prose"], True
            return
        yield text[start:end], ["extracted_from_prose"], False


def _loads(candidate: str, cut: bool) -> tuple[Any, list[str]] | None:
    """Strict json.loads, then json_repair; None when nothing trustworthy comes out."""
    try:
        return json.loads(candidate), []
    except ValueError:
        pass
    except RecursionError:
        return None  # nested too deeply to be a reply anyone meant (100,000 brackets, say)
    import json_repair

    try:
        result = json_repair.repair_json(candidate, return_objects=True, logging=True)
    except Exception:  # json_repair is defensive, but a reader must never raise
        return None
    value = result[0] if isinstance(result, tuple) else result
    first = candidate.lstrip()[:1]
    if first == "{" and not isinstance(value, dict):
        return None
    if first == "[" and not isinstance(value, list):
        return None
    if first not in "{[" and value == "":
        return None
    if isinstance(value, dict | list) and not value and re.sub(r"[\s{}\[\]]", "", candidate):
        return None  # text was there but nothing came out of it
    if isinstance(value, dict | list) and not value and cut:
        return None  # "{" alone: cut off before any field
    repairs = ["json_repair"]
    if cut:
        repairs.append("closed_truncated_json")
    return value, repairs


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def validation_errors(err: Any) -> list[str]:
    """pydantic ValidationError -> one re-ask line per error: field path, what was expected, got."""
    lines: list[str] = []
    for e in err.errors(include_url=False):
        where = _path(tuple(e.get("loc", ())))
        if e.get("type") == "missing":
            lines.append(f"field `{where}` is missing (required)")
            continue
        got = json.dumps(e.get("input"), ensure_ascii=False, default=str)
        if len(got) > 60:
            got = got[:57] + "..."
        lines.append(f"field `{where}`: {e.get('msg', 'invalid')} (got {got})")
    return lines


def _validate(value: Any, schema: type[BaseModel]) -> tuple[Any, list[str]]:
    from pydantic import ValidationError

    try:
        return schema.model_validate(value), []
    except ValidationError as err:
        return None, validation_errors(err)


def read_json(text: str, schema: type[BaseModel] | None = None) -> JsonReply:
    """Read the JSON in a model's reply; see the module docstring. Never raises on bad text."""
    if not text or not text.strip():
        return JsonReply(False, errors=["the reply is empty: expected one JSON value"])
    thinking: list[str] = []
    without = strip_thinking(text)
    if without != text:
        text, thinking = without, ["removed_thinking"]
        if not text.strip():
            return JsonReply(False, repairs=thinking, errors=["the reply has only reasoning (<think>), no JSON"])
    if _nests_deeper(text, MAX_NESTING):
        return JsonReply(False, repairs=thinking,
                         errors=[f"the reply nests deeper than {MAX_NESTING} levels: refused"])
    reply = _read(text, schema)
    reply.repairs = thinking + reply.repairs
    return reply


MAX_NESTING = 200  # far beyond any real reply; 100,000 brackets would overflow the parser


def _nests_deeper(text: str, limit: int) -> bool:
    """Brackets nested deeper than `limit` outside JSON strings (the providers' own scan)."""
    from duckflow.llm.nesting import nests_deeper

    return nests_deeper(text, limit)


def _read(text: str, schema: type[BaseModel] | None) -> JsonReply:
    first_errors: list[str] | None = None
    first_repairs: list[str] = []
    seen = False
    for candidate, repairs, cut in _candidates(text):
        loaded = _loads(candidate, cut)
        if loaded is None:
            continue
        value, more = loaded
        steps = repairs + more
        if schema is not None and isinstance(value, str) and value.strip()[:1] in "{[":
            inner = _loads(value.strip(), False)
            if inner is not None:
                value, steps = inner[0], steps + ["decoded_json_string"] + inner[1]
        seen = True
        if schema is None:
            return JsonReply(True, value, steps, [])
        model, errors = _validate(value, schema)
        if not errors:
            return JsonReply(True, model, steps, [])
        if first_errors is None:
            first_errors, first_repairs = errors, steps
    if seen and first_errors is not None:
        return JsonReply(False, None, first_repairs, first_errors)
    try:  # a bare scalar reply such as `true` or `42`
        value = json.loads(text.strip())
    except (ValueError, RecursionError):
        return JsonReply(False, errors=["no JSON object or array found in the reply (it is prose only)"])
    if schema is None:
        return JsonReply(True, value, [], [])
    model, errors = _validate(value, schema)
    return JsonReply(not errors, model, [], errors)


def schema_hint(schema: type[BaseModel]) -> str:
    """A compact JSON schema of `schema`, to quote in prompts and re-asks."""
    return json.dumps(schema.model_json_schema(), ensure_ascii=False, separators=(",", ":"))


def reask_message(errors: list[str], schema_hint: str) -> str:
    """The user message asking the model to answer again, naming each problem."""
    problems = "\n".join(f"- {e}" for e in errors) or "- the reply could not be read as JSON"
    return (
        "Your previous reply could not be used:\n"
        f"{problems}\n"
        "Reply again with exactly one JSON value and nothing else (no prose, no code fence), "
        f"matching this schema:\n{schema_hint}"
    )


async def read_json_reasking(
    complete: Callable[[list[Message]], Awaitable[str]],
    messages: Sequence[Message],
    schema: type[BaseModel] | None = None,
    *,
    max_rounds: int = 2,
    hint: str | None = None,
) -> JsonReply:
    """Ask, read, and re-ask (at most `max_rounds` times) naming each error, like Sym-Ops' SelfCorrector.

    `complete(messages) -> str` is any async model call. Failed replies and their re-asks are
    sent only with the re-ask itself, never added to `messages`; they are recorded in
    `JsonReply.attempts` ({reply, errors}) for tracing.
    """
    history = list(messages)
    schema_text = hint if hint is not None else (schema_hint(schema) if schema is not None else "any JSON value")
    attempts: list[dict[str, Any]] = []
    reply_text = await complete(history)
    result = read_json(reply_text, schema)
    for _ in range(max_rounds):
        if result.ok:
            break
        attempts.append({"reply": reply_text, "errors": list(result.errors)})
        retry = history + [
            Message("assistant", reply_text),
            Message("user", reask_message(result.errors, schema_text)),
        ]
        reply_text = await complete(retry)
        result = read_json(reply_text, schema)
    if not result.ok:
        attempts.append({"reply": reply_text, "errors": list(result.errors)})
    result.attempts = attempts
    return result
