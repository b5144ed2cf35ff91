"""SymOpsCodec: tools through Sym-Ops — prompt text in, ToolCalls out (implements Codec).

Mapping (the workspace tools' names):
    $ create @ path + block   -> write_file(path, content)
    $ edit @ path + block     -> edit_file(path, content)       (whole file or SEARCH/REPLACE)
    $ delete @ path           -> delete_path(path)
    $ run @ command           -> execute_shell(command)         (a block alone is the script)
    $ test [@ target]         -> run_tests(...)                 (see _test_args; a .py file runs
                                                                 that file with pytest)
    $ TOOL @ value [+ block]  -> TOOL(first parameter=value, ...) for any other tool by name;
                                 a block holding a JSON object gives the other arguments,
                                 any other block goes to the second parameter.
A verb that is the name of a tool passed to `decode` means that tool, before any synonym:
with a tool named `add`, `$ add @ x` calls `add`, not write_file.
Guessed actions become ToolCall(executable=False); they are proposed, never run.
"""

from __future__ import annotations

import difflib
import json
import shlex
from collections.abc import Callable, Sequence
from typing import Any

from duckflow.llm.types import ToolCall, ToolResult, ToolSpec
from duckflow.protocols.codec import Decoded
from duckflow.protocols.symops.model import TOOL_ALIASES, Action, SymOpsResult
from duckflow.protocols.symops.processor import parse
from duckflow.protocols.symops.prompts import correction_message, system_prompt
from duckflow.protocols.symops.serializer import action_lines, action_text, safe_fence

TYPE_TO_TOOL = {"create": "write_file", "edit": "edit_file", "delete": "delete_path",
                "run": "execute_shell", "test": "run_tests"}  # fmt: skip
TOOL_TO_VERB = {v: k for k, v in TYPE_TO_TOOL.items()}
SHELLS = frozenset({"", "bash", "sh", "shell", "zsh"})

NOT_ERRORS = frozenset({"no_protocol", "empty_reply"})  # plain prose is an answer, not a failure
# what the parser asks of create/edit/delete/...; void when the verb names a declared tool instead
TYPE_ISSUES = frozenset({"missing_content", "missing_target", "unsupported_diff"})
# `$ test @ WORD`: these words are a test command, any other single word is a test target
TEST_COMMANDS = frozenset({"pytest", "tox", "nox", "npm", "pnpm", "yarn", "cargo", "go", "make",
                           "jest", "vitest", "unittest"})  # fmt: skip
WHOLE_SUITE = frozenset({"", ".", "./"})


def _file_text(content: str) -> str:
    """Block content as file text: a final newline is added unless it has one."""
    return content if not content or content.endswith("\n") else content + "\n"


def _is_test_command(target: str) -> bool:
    return any(c.isspace() for c in target) or target in TEST_COMMANDS


def _is_python_test_file(target: str) -> bool:
    """A Python file path (`tests/test_a.py`): pytest runs exactly it, whatever its name."""
    return target.endswith(".py") and not any(c.isspace() for c in target) and ".." not in target.split("/")


def _params(spec: ToolSpec | None, default: list[str]) -> list[str]:
    return spec.param_names if spec is not None and spec.param_names else default


class SymOpsCodec:
    """Codec for models without native tool calling (and for any model, by choice)."""

    name = "symops"
    native = False

    def __init__(self, *, request: str | None = None) -> None:
        self.request = request

    # -- prompt ------------------------------------------------------------------------------
    def system_prompt(self, tools: Sequence[ToolSpec]) -> str:
        return system_prompt(tools)

    def correction_prompt(self, errors: list[str]) -> str:
        """The SelfCorrector's re-ask (templates/correction.md), used by `core.Agent`."""
        return correction_message(errors)

    # -- decode ------------------------------------------------------------------------------
    def decode(self, text: str, tools: Sequence[ToolSpec]) -> Decoded:
        return self.decode_result(text, parse(text, request=self.request), tools)

    def stream_reader(self, tools: Sequence[ToolSpec]) -> SymOpsStreamReader:
        """The linear reader `core` feeds while the model writes (see core/text_stream.py)."""
        return SymOpsStreamReader(self, tools)

    def decode_result(self, text: str, result: SymOpsResult, tools: Sequence[ToolSpec]) -> Decoded:
        """A reply already parsed (`parse(text)` or a stream's `finish()`) as calls."""
        specs = {t.name: t for t in tools}
        calls: list[ToolCall] = []
        problems: list[str] = []
        notes: list[str] = []
        retyped = set()  # lines of actions whose verb names a declared tool
        for action in result.actions:
            if self.declared_tool(action, specs) is not None:
                retyped.add(action.line)
            call, problem = self.to_call(action, specs, notes)
            if problem:
                problems.append(problem)
            calls.append(call)
        errors = [i.describe() for i in result.issues
                  if i.kind not in NOT_ERRORS and not (i.kind in TYPE_ISSUES and i.line in retyped)]  # fmt: skip
        warnings = [f"{w.name} at line {w.line}" + (f": {w.detail}" if w.detail else "") for w in result.warnings]
        return Decoded(
            text=self.visible_text(text, result),
            calls=calls,
            errors=errors + problems,
            warnings=warnings + notes,
            repairs=[r.name for r in result.repairs],
            confidence=result.confidence,
            questions=[(q.text, list(q.options)) for q in result.questions if q.text.strip()],
        )

    @staticmethod
    def visible_text(text: str, result: SymOpsResult) -> str:
        """What a person reads: the thoughts (and prose), then the questions with options."""
        if result.stage == "failed" and not result.actions:
            return text.strip()
        lines = list(result.thoughts)
        for q in result.questions:
            lines.append(q.text)
            lines += [f"  {i}. {o}" for i, o in enumerate(q.options, 1)]
        return "\n".join(lines)

    @staticmethod
    def declared_tool(action: Action, specs: dict[str, ToolSpec]) -> str | None:
        """The declared tool that the action's verb names (it wins over a verb synonym), or None."""
        for name in (action.verb, action.verb.lower()):
            if name in specs and TYPE_TO_TOOL.get(action.type) != name:
                return name
        return None

    def to_call(self, action: Action, specs: dict[str, ToolSpec],
                warnings: list[str] | None = None) -> tuple[ToolCall, str]:  # fmt: skip
        """One action as a ToolCall, and a problem ('' when none); notes go to `warnings`."""
        declared = self.declared_tool(action, specs)
        if declared is not None:
            args, problem = self._tool_args(action, specs[declared])
            raw = action_text(action)
            # read as this tool, not as create/edit/...: only a guess keeps it from running
            executable = action.guess is None and not problem
            return ToolCall(declared, args, "", executable, action.confidence, "symops", raw), problem
        name = TYPE_TO_TOOL.get(action.type, action.verb)
        if name not in specs and action.type in TOOL_ALIASES and TOOL_ALIASES[action.type] in specs:
            name = TOOL_ALIASES[action.type]
        spec = specs.get(name)
        problem = ""
        if action.type not in TYPE_TO_TOOL and specs and spec is None:
            close = difflib.get_close_matches(name, list(specs), n=1)
            problem = f"unknown tool '{name}' at line {action.line}" + (f" (did you mean '{close[0]}'?)" if close else "")
        elif specs and spec is None:
            problem = f"the tool {name} is not available here (line {action.line})"
        args, note = self._arguments(action, spec)
        problem = problem or note
        if action.type == "test" and warnings is not None:
            warning = self.test_warning(action, spec)
            if warning:
                warnings.append(warning)
        raw = action_text(action)
        executable = action.executable
        if action.type not in TYPE_TO_TOOL and spec is not None and action.guess is None:
            executable = True  # a tool the parser did not know, but this agent has
        call = ToolCall(name, args, "", executable and not problem, action.confidence, "symops", raw)
        return call, problem

    def _arguments(self, a: Action, spec: ToolSpec | None) -> tuple[dict[str, Any], str]:
        t = a.type
        if t in ("create", "edit"):
            p = _params(spec, ["path", "content"])
            content = a.content or ""
            return {p[0]: a.path, p[1 if len(p) > 1 else 0]: content if a.hunks else _file_text(content)}, ""
        if t == "delete":
            return {_params(spec, ["path"])[0]: a.path}, ""
        if t == "run":
            command = a.path or ""
            if a.content is not None and command.strip() in SHELLS:
                command = a.content
            return {_params(spec, ["command"])[0]: command}, ""
        if t == "test":
            return self._test_args(a, spec), ""
        return self._tool_args(a, spec)

    @staticmethod
    def _test_args(a: Action, spec: ToolSpec | None) -> dict[str, Any]:
        """`$ test [@ X]` for a tool with a `target`/`path` parameter, or one with `command`.

        The workspace's run_tests(command=None) runs the detected suite and has no target:
        X goes to `command` when it is a command (it has a space, or is a runner's name such as
        `pytest`); a bare path cannot be expressed, so the whole suite runs and `test_warning`
        says so. No command is made up from a path (the runner is not known here).
        """
        params = _params(spec, ["command", "timeout"])  # the workspace tool's, by default
        target = (a.path or "").strip()
        for key in ("target", "path"):
            if key in params:
                return {key: target} if target else {}
        if "command" in params:
            if _is_test_command(target):
                return {"command": target}
            if _is_python_test_file(target):  # `$ test @ test_config.py`: that file, with pytest
                return {"command": f"python3 -m pytest -q {shlex.quote(target)}"}
            return {}
        return {params[0]: target} if target else {}

    @staticmethod
    def test_warning(a: Action, spec: ToolSpec | None) -> str:
        """Why a `$ test` target was not passed on ('' when it was, or there was none)."""
        params = _params(spec, ["command", "timeout"])
        target = (a.path or "").strip()
        if "target" in params or "path" in params or "command" not in params:
            return ""
        if target in WHOLE_SUITE or _is_test_command(target) or _is_python_test_file(target):
            return ""
        return (f"test_target_dropped at line {a.line}: run_tests takes no target, so `{target}` is not "
                "passed on and the whole detected test suite runs; write the command to narrow it "
                f"(`$ test @ pytest -q {target}`)")

    @staticmethod
    def _tool_args(a: Action, spec: ToolSpec | None) -> tuple[dict[str, Any], str]:
        params = _params(spec, ["target"])
        args: dict[str, Any] = {}
        if a.path is not None:
            args[params[0]] = a.path
        if a.depends_on is not None and len(params) > 1:  # `$ move_path @ a.py > b.py`
            args[params[1]] = a.depends_on
        if a.content:
            try:
                extra = json.loads(a.content)
            except ValueError:
                extra = None
            if isinstance(extra, dict):
                args.update(extra)
            elif len(params) > 1:
                args[params[1]] = a.content
            else:
                return args, f"`{a.verb}` takes no block (line {a.line})"
        return args, ""

    # -- encode ------------------------------------------------------------------------------
    def encode_calls(self, calls: Sequence[ToolCall]) -> str:
        out: list[str] = []
        for c in calls:
            out.extend(action_lines(self.from_call(c)))
        return "\n".join(out) + ("\n" if out else "")

    @staticmethod
    def from_call(call: ToolCall) -> Action:
        """The Sym-Ops action that `call` would have been written as."""
        args = dict(call.arguments)
        verb = TOOL_TO_VERB.get(call.name)

        def take(*keys: str) -> Any:
            for k in keys:
                if k in args:
                    return args.pop(k)
            return None

        if verb in ("create", "edit"):
            path, content = take("path"), take("content")
            text = str(content or "")
            return Action(verb, verb, path, text[:-1] if text.endswith("\n") else text)
        if verb == "delete":
            return Action(verb, verb, take("path"))
        if verb == "run":
            command = str(take("command") or "")
            if "\n" in command:
                return Action("run", "run", None, command)
            return Action("run", "run", command)
        if verb == "test":
            return Action("test", "test", take("target", "path", "command") or ".")
        first = next(iter(args), None)
        value = args.pop(first) if first is not None else None
        block = json.dumps(args, ensure_ascii=False) if args else None
        return Action(call.name, call.name, None if value is None else str(value), block)

    def encode_results(self, results: Sequence[ToolResult]) -> str:
        parts: list[str] = []
        for r in results:
            status = "error" if r.is_error else "ok"
            body = r.content.split("\n")
            fence = safe_fence(body)
            parts.append(f"= {r.name} {r.call_id} {status}".replace("  ", " "))
            parts += [fence, *body, fence]
        return "\n".join(parts) + ("\n" if parts else "")


class SymOpsStreamReader:
    """A StreamingProcessor behind core's FreeTextStreamer: one reading, shown and decoded."""

    def __init__(self, codec: SymOpsCodec, tools: Sequence[ToolSpec]) -> None:
        from duckflow.protocols.symops.streaming import StreamingProcessor

        self.codec = codec
        self.tools = list(tools)
        self.sp = StreamingProcessor(request=codec.request, prose=True)

    def bind(self, show: Callable[[str], None], action: Callable[[Any], None]) -> Callable[[str], Any]:
        """Thought and prose lines go to `show`, actions to `action`, as each completes; the
        returned feed is the processor's own (one call per piece)."""

        def route(ev: Any) -> None:
            kind = ev[0]
            if kind == "thought" or kind == "prose":
                show(ev[1] + "\n")
            elif kind == "action":
                action(ev[1])

        self.sp.on_event = route
        return self.sp.feed

    def decoded(self, text: str) -> Decoded:
        return self.codec.decode_result(text, self.sp.finish(), self.tools)
