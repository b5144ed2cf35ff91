"""DML parser: finds 🦆▶️[COMMAND:ARG|...]◀️🦆 macros in free text and checks them.

Tolerates what models really write: the emoji without the variation selector (`🦆▶[`, `]◀🦆`),
spaces around `:` and `|`, a full-width `：`, lower-case commands. A macro left open at the end
of the reply is reported in `errors` and kept out of `macros` (never executed). T arguments are
split with the tool's signature: the last parameter takes the rest, pipes included.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from duckflow.llm.types import ToolSpec
from duckflow.protocols.dml.aliases import AliasTable, UnknownAlias
from duckflow.protocols.dml.arguments import convert, json_arguments, split_args
from duckflow.protocols.dml.library import instructions, state_variables

OPEN = re.compile("\U0001f986[ \t]?\u25b6[\ufe0e\ufe0f]?[ \t]?\\[")
CLOSE = re.compile("\\][ \t]?\u25c0[\ufe0e\ufe0f]?[ \t]?\U0001f986")
COMMANDS = ("T", "F", "S", "I")
_HEAD = re.compile(r"\s*([A-Za-z]\w*)\s*[:：][ \t]*(.*)\Z", re.S)
_THOUGHT = re.compile(r"(?im)^[ \t>*_#-]*(?:thought|思考|考え)[ *_]*[:：][ *_]*")
_ACTION = re.compile(r"(?im)^[ \t>*_#-]*(?:action|行動|アクション)[ *_]*[:：][ *_]*")


@dataclass
class Macro:
    """One macro. `arguments` maps parameter names to typed values (T with a known signature)."""

    command: str
    name: str
    args: list[str]
    raw: str
    start: int
    end: int
    complete: bool = True
    errors: list[str] = field(default_factory=list)
    arguments: dict[str, Any] | None = None
    in_thought: bool = False  # a T macro inside the Thought, before an `Action:` label: a mention

    @property
    def valid(self) -> bool:
        return self.complete and not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "name": self.name,
            "args": list(self.args),
            "raw": self.raw,
            "start": self.start,
            "end": self.end,
        }


@dataclass
class DmlResult:
    """`text` is the reply with T macros taken out; `thought` the ReAct Thought section, if any."""

    text: str
    thought: str | None
    macros: list[Macro]
    errors: list[str]
    open_macro: Macro | None = None
    warnings: list[str] = field(default_factory=list)  # not in to_dict(): e.g. macros in <think>

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def tool_macros(self) -> list[Macro]:
        return [m for m in self.macros if m.command == "T"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "text": self.text,
            "thought": self.thought,
            "macros": [m.to_dict() for m in self.macros],
            "errors": list(self.errors),
        }


def _scan(text: str) -> Iterator[tuple[int, int, int, int, bool]]:
    """(start, body_start, body_end, end, closed) for each macro, in order."""
    pos = 0
    while True:
        m = OPEN.search(text, pos)
        if m is None:
            return
        close = CLOSE.search(text, m.end())
        nxt = OPEN.search(text, m.end())
        if close is None or (nxt is not None and nxt.start() < close.start()):
            stop = nxt.start() if nxt is not None else len(text)
            yield m.start(), m.end(), stop, stop, False
            if nxt is None:
                return
            pos = nxt.start()
            continue
        yield m.start(), m.end(), close.start(), close.end(), True
        pos = close.end()


def _closest(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.4)
    return close[0] if close else ""


def _suggest(kind: str, word: str, choices: Sequence[str]) -> str:
    best = _closest(word, choices)
    if best:
        return f"unknown {kind} `{word}`; did you mean `{best}`?"
    listed = ", ".join(sorted(choices)[:12]) or "none"
    return f"unknown {kind} `{word}`; known: {listed}"


def _check_tool(macro: Macro, rest: str | None, specs: dict[str, ToolSpec] | None, aliases: AliasTable | None) -> None:
    name = macro.name
    if specs is not None and name not in specs:
        folded = {k.lower().replace("-", "_"): k for k in specs}
        if name.lower().replace("-", "_") in folded:
            name = macro.name = folded[name.lower().replace("-", "_")]
    spec = (specs if specs is not None else _default_specs()).get(name)
    if specs is not None and spec is None:
        macro.errors.append(_suggest("tool", name, list(specs)))
        macro.args = split_args(rest, None)
        return
    named = json_arguments(rest, spec)
    macro.args = [rest.strip()] if named is not None and rest is not None else split_args(rest, spec)
    if aliases is not None:
        for arg in macro.args:
            macro.errors.extend(str(e) for e in aliases.unknown(arg))
    if spec is None:
        return
    if named is not None:
        if not macro.errors:
            macro.arguments = {
                k: aliases.expand(v) if aliases is not None and isinstance(v, str) else v for k, v in named.items()
            }
        return
    params, required = spec.param_names, spec.required
    given = [a for a in macro.args if a != ""] if len(macro.args) == 1 else macro.args
    if not params and given:
        macro.errors.append(f"`{name}` takes no arguments, got {len(given)}")
        return
    if len(given) < len(required):
        missing = ", ".join(required[len(given) :])
        usage = "|".join(params)
        macro.errors.append(
            f"`{name}` needs {len(required)} argument(s) ({usage}), got {len(given)}: missing {missing}"
        )
        return
    arguments: dict[str, Any] = {}
    props = spec.parameters.get("properties", {})
    for pname, value in zip(params, given, strict=False):
        if aliases is not None and not macro.errors:
            value = aliases.expand(value)
        try:
            arguments[pname] = convert(value, props.get(pname, {}))
        except ValueError as err:
            macro.errors.append(f"`{name}` argument `{pname}`: {err} (got {value[:40]!r})")
    macro.arguments = arguments


def _check(macro: Macro, body: str, specs: dict[str, ToolSpec] | None, aliases: AliasTable | None) -> None:
    head = _HEAD.match(body)
    if head is None:
        macro.errors.append("expected COMMAND:ARGUMENTS (T, F, S or I, then a colon)")
        return
    command, rest = head.group(1).upper(), head.group(2)
    macro.command = command
    if command not in COMMANDS:
        macro.errors.append(_suggest("DML command", command, COMMANDS))
        macro.name, macro.args = rest.strip(), []
        return
    if command == "T":
        cut = re.search(r"[|｜]", rest)  # a full-width bar after the tool name is tolerated
        name, sep, tail = (rest[: cut.start()], "|", rest[cut.end() :]) if cut else (rest, "", "")
        macro.name = name.strip()
        _check_tool(macro, tail if sep else None, specs, aliases)
    elif command == "F":
        alias, sep, path = rest.partition("=")
        macro.name, macro.args = alias.strip(), [path.strip()] if sep else []
        if not sep or not path.strip() or not alias.strip():
            macro.errors.append("F needs alias=path")
    else:
        macro.name = rest.strip()
        table = state_variables() if command == "S" else instructions()
        if macro.name not in table:
            kind = "state variable" if command == "S" else "instruction"
            macro.errors.append(_suggest(kind, macro.name, list(table)))


def _thought(text: str) -> tuple[str | None, tuple[int, int] | None]:
    """The Thought text, and its span when an `Action:` label follows it (else None).

    With an Action label the thought runs up to it (T macros inside are mentions); without
    one it stops at the first T macro.
    """
    m = _THOUGHT.search(text)
    if m is None:
        return None, None
    action = _ACTION.search(text, m.end())
    if action is not None:
        return text[m.end() : action.start()].strip() or None, (m.end(), action.start())
    end = len(text)
    for start, b0, b1, _end, _closed in _scan(text[m.end() :]):
        head = _HEAD.match(text[m.end() + b0 : m.end() + b1])
        if head and head.group(1).upper() == "T":
            end = m.end() + start
            break
    return text[m.end() : end].strip() or None, None


_THINK = re.compile(r"(?is)<(think|thinking|reasoning)>.*?(?:</\1>|\Z)")
_THINK_CLOSE = re.compile(r"(?is)</(?:think|thinking|reasoning)>")


def _thinking_spans(text: str) -> list[tuple[int, int]]:
    """Reasoning blocks (`<think>…</think>`; all before a lone `</think>`): not actions."""
    spans = [(m.start(), m.end()) for m in _THINK.finditer(text)]
    lone = _THINK_CLOSE.search(text)
    if lone is not None and not any(a <= lone.start() < b for a, b in spans):
        spans.append((0, lone.end()))
    return spans


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def parse(
    text: str,
    tools: Sequence[ToolSpec] | None = None,
    aliases: AliasTable | None = None,
) -> DmlResult:
    """Read every macro in `text`. Never raises on malformed text.

    `tools` None: the standard tools (`DEFAULT_TOOLS`, the ones `system_prompt()` lists);
    tool names must be among the tools given.
    `aliases`: `{{F:x}}` references must name a registered alias and are expanded in
    `Macro.arguments`.
    """
    specs = {t.name: t for t in tools} if tools is not None else _default_specs()
    macros: list[Macro] = []
    errors: list[str] = []
    open_macro: Macro | None = None
    removed: list[tuple[int, int]] = []
    warnings: list[str] = []
    thinking = _thinking_spans(text)
    for start, b0, b1, end, closed in _scan(text):
        if any(a <= start < b for a, b in thinking):
            warnings.append(f"macro at offset {start} is inside a reasoning block (<think>): ignored")
            continue
        macro = Macro("", "", [], text[start:end], start, end, complete=closed)
        try:
            _check(macro, text[b0:b1], specs, aliases)
        except UnknownAlias as err:  # pragma: no cover - unknown aliases are checked first
            macro.errors.append(str(err))
        label = f"{macro.command or '?'}:{macro.name}" if macro.name else (macro.command or "macro")
        if not closed:
            open_macro = macro
            errors.append(
                f"macro `{label}` at offset {start} is not closed with ]◀️🦆 "
                "(the reply may be cut off): it was not executed"
            )
        else:
            macros.append(macro)
            errors.extend(f"macro `{label}` at offset {start}: {e}" for e in macro.errors)
        if macro.command == "T" or not closed:
            removed.append((start, end))
    prose, pos = [], 0
    for s, e in removed:
        prose.append(text[pos:s])
        pos = e
    prose.append(text[pos:])
    thought, span = _thought(text)
    if span is not None:
        for macro in macros:
            macro.in_thought = macro.command == "T" and span[0] <= macro.start < span[1]
    return DmlResult(_tidy("".join(prose)), thought, macros, errors, open_macro, warnings)


def _default_specs() -> dict[str, ToolSpec]:
    from duckflow.protocols.dml.prompt import DEFAULT_TOOLS

    return {t.name: t for t in DEFAULT_TOOLS}
