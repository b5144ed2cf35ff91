"""DMLCodec: tools as DML in the system prompt, T macros in a reply as tool calls.

A call is executable only when its macro is closed and valid (known tool, right arity, known
aliases, arguments of the declared types). Invalid but recognisable calls come back with
`executable=False` so that the caller can re-ask with `Decoded.errors`; unknown tools and
macros cut off by the end of the reply are never turned into calls that could run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from duckflow.llm.types import ToolCall, ToolResult, ToolSpec
from duckflow.protocols.codec import Decoded
from duckflow.protocols.dml.aliases import AliasTable
from duckflow.protocols.dml.parser import Macro, parse
from duckflow.protocols.dml.prompt import system_prompt


class DMLCodec:
    """Codec for DML. Keep one instance per session: its AliasTable must stay stable."""

    name = "dml"
    native = False

    def __init__(
        self,
        aliases: AliasTable | None = None,
        *,
        language: str = "en",
        state: Mapping[str, str] | None = None,
        instruction_keys: Sequence[str] | None = None,
    ) -> None:
        self.aliases = aliases if aliases is not None else AliasTable()
        self.language = language
        self.state: dict[str, str] = dict(state or {})
        self.instruction_keys = instruction_keys

    def system_prompt(self, tools: Sequence[ToolSpec]) -> str:
        return system_prompt(
            list(tools),
            self.language,
            aliases=self.aliases,
            state=self.state,
            instruction_keys=self.instruction_keys,
        )

    def _call(self, index: int, macro: Macro, spec: ToolSpec | None) -> ToolCall:
        """A ToolCall for `macro`; executable only when the macro is closed and valid."""
        arguments: dict[str, Any]
        if macro.arguments is not None:
            arguments = dict(macro.arguments)
        else:
            params = spec.param_names if spec is not None else []
            arguments = {p: v for p, v in zip(params, macro.args, strict=False)}
        return ToolCall(
            name=macro.name,
            arguments=arguments,
            id=f"dml_{index}",
            executable=macro.valid and macro.arguments is not None,
            confidence=1.0 if macro.valid else 0.3,
            source="dml",
            raw=macro.raw,
        )

    def decode(self, text: str, tools: Sequence[ToolSpec]) -> Decoded:
        result = parse(text, tools, self.aliases)
        specs = {t.name: t for t in tools}
        calls: list[ToolCall] = []
        warnings: list[str] = list(result.warnings)
        acted = {m.raw for m in result.tool_macros if not m.in_thought}
        for macro in result.tool_macros:
            if macro.name not in specs:
                continue
            if macro.in_thought:
                if macro.raw in acted:
                    continue  # the same call is in the Action section: the Thought only named it
                warnings.append(f"`{macro.name}` appears only in the Thought, not after Action: proposed, not run")
                calls.append(self._call(len(calls), macro, specs[macro.name]))
                calls[-1].executable = False
                continue
            calls.append(self._call(len(calls), macro, specs[macro.name]))
        if result.open_macro is not None and result.open_macro.name in specs:
            calls.append(self._call(len(calls), result.open_macro, specs[result.open_macro.name]))
            calls[-1].executable = False
            warnings.append(f"`{result.open_macro.name}` was cut off: proposed, not executable")
        # S/I/F references with a wrong name do not stop any call: warnings, not re-ask errors.
        soft = {
            f"macro `{m.command}:{m.name}` at offset {m.start}: {e}"
            for m in result.macros
            if m.command in ("S", "I", "F")
            for e in m.errors
        }
        errors = [e for e in result.errors if e not in soft]
        warnings.extend(e for e in result.errors if e in soft)
        confidence = 1.0 if not errors else (0.5 if any(c.executable for c in calls) else 0.0)
        return Decoded(result.text, calls, errors, warnings, [], confidence)

    def encode_calls(self, calls: Sequence[ToolCall]) -> str:
        lines = []
        for call in calls:
            args = [self._encode_value(v) for v in call.arguments.values()]
            if args and "\n" in args[-1]:
                args[-1] = "\n" + args[-1]  # multi-line content starts on its own line
            lines.append("🦆▶️[T:" + "|".join([call.name, *args]) + "]◀️🦆")
        return "Action:\n" + "\n".join(lines) if lines else ""

    def _encode_value(self, value: Any) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return self.aliases.compress(value)
        if isinstance(value, int | float):
            return str(value)
        import json

        return json.dumps(value, ensure_ascii=False)

    def encode_results(self, results: Sequence[ToolResult]) -> str:
        parts = []
        for r in results:
            status = "error" if r.is_error else "ok"
            parts.append(f"Observation ({r.name}, {status}):\n{r.content}")
        return "\n\n".join(parts)
