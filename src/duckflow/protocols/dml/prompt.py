"""The DML system prompt: template files (en, ja) rendered with tools, aliases, state, rules.

The templates are `templates/system_prompt.<language>.md.j2` (Jinja2 syntax, rendered by MiniJinja).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any

from duckflow.errors import DuckflowError
from duckflow.llm.types import ToolSpec
from duckflow.protocols.dml.aliases import AliasTable
from duckflow.protocols.dml.library import LANGUAGES, instruction_text, instructions, state_meaning


def _spec(name: str, description: str, *params: tuple[str, str, bool]) -> ToolSpec:
    props = {p: {"type": t} for p, t, _ in params}
    required = [p for p, _, req in params if req]
    return ToolSpec(name, description, {"type": "object", "properties": props, "required": required})


# The seed's example tools (seed 002, category A) with the parameters of the workspace tools,
# used to render the prompt and to split arguments when no tool list is given.
DEFAULT_TOOLS: tuple[ToolSpec, ...] = (
    _spec("read_file", "Read a text file, whole or a range of lines.",
          ("path", "string", True), ("start_line", "integer", False), ("end_line", "integer", False)),
    _spec("write_file", "Create or replace a file with the given content.",
          ("path", "string", True), ("content", "string", True)),
    _spec("edit_file", "Edit a file with SEARCH/REPLACE hunks (or give the whole new content).",
          ("path", "string", True), ("content", "string", True)),
    _spec("list_files", "List files under a folder matching a pattern, recursively or not.",
          ("path", "string", False), ("pattern", "string", False), ("recursive", "boolean", False)),
    _spec("create_directory", "Create a directory.", ("path", "string", True)),
    _spec("delete_path", "Delete a file or folder.", ("path", "string", True), ("recursive", "boolean", False)),
    _spec("move_path", "Move or rename a file or folder.",
          ("src", "string", True), ("dst", "string", True), ("overwrite", "boolean", False)),
    _spec("search_code", "Search the code base (RAG) for a query.", ("query", "string", True), ("limit", "integer", False)),
    _spec("run_tests", "Run the tests (the given command, or the project's test runner).", ("command", "string", False)),
    _spec("execute_shell", "Run a shell command.", ("command", "string", True), ("timeout", "number", False)),
)  # fmt: skip


class UnknownLanguage(DuckflowError):
    """A prompt was asked for in a language that has no template."""


def tool_usage(spec: ToolSpec) -> str:
    """`🦆▶️[T:name|param|param?]◀️🦆`; optional parameters end with `?`."""
    required = set(spec.required)
    params = [p if p in required else f"{p}?" for p in spec.param_names]
    return "🦆▶️[T:" + "|".join([spec.name, *params]) + "]◀️🦆"


def system_prompt(
    tools: Sequence[ToolSpec] | None = None,
    language: str = "en",
    *,
    aliases: AliasTable | None = None,
    state: Mapping[str, str] | None = None,
    instruction_keys: Sequence[str] | None = None,
) -> str:
    """The DML system prompt. `tools` None: the seed's standard tools; `instruction_keys` None: all."""
    if language not in LANGUAGES:
        raise UnknownLanguage(
            f"no DML prompt in language '{language}'", hint=f"use one of: {', '.join(LANGUAGES)}"
        )
    import minijinja

    specs = list(DEFAULT_TOOLS if tools is None else tools)
    keys = list(instructions()) if instruction_keys is None else list(instruction_keys)
    context: dict[str, Any] = {
        "tools": [{"usage": tool_usage(t), "description": t.description.strip()} for t in specs],
        "aliases": aliases.render() if aliases is not None and len(aliases) else "",
        "state": [
            {"name": k, "meaning": state_meaning(k, language), "value": v} for k, v in (state or {}).items()
        ],
        "instructions": [{"key": k, "text": instruction_text(k, language)} for k in keys],
    }
    source = resources.files(__package__).joinpath("templates").joinpath(f"system_prompt.{language}.md.j2")
    env = minijinja.Environment(keep_trailing_newline=True, undefined_behavior="strict",
                                auto_escape_callback=lambda _name: False, debug=False)
    text = env.render_str(source.read_text("utf-8"), **context)
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip() + "\n"
