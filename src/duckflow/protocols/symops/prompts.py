"""Sym-Ops prompts (seed 000 §6): system prompt, few-shot examples, re-ask, PromptBuilder.

The texts are data files in `templates/` (read with importlib.resources) with `{{name}}`
placeholders, filled by plain substitution: the templates contain `$`, braces and code, so
no template language with its own syntax is needed or wanted here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from duckflow.llm.types import ToolSpec
from duckflow.toolkinds import KINDS

# the tools the Sym-Ops verbs stand for (create, edit, delete, run, test)
BUILTIN_TOOLS = frozenset(n for n, k in KINDS.items() if k in ("write", "edit", "delete", "execute", "test"))


@lru_cache(maxsize=None)
def template(name: str) -> str:
    """The text of `templates/<name>`."""
    return resources.files("duckflow.protocols.symops").joinpath("templates", name).read_text("utf-8")


def fill(text: str, values: Mapping[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text


def tool_lines(tools: Sequence[ToolSpec]) -> str:
    """Extra `$ tool @ arg` lines for tools other than the five built-in actions."""
    lines = []
    for spec in tools:
        if spec.name in BUILTIN_TOOLS:
            continue
        params = spec.param_names
        arg = params[0] if params else "-"
        rest = f" (block: JSON object with {', '.join(params[1:])})" if len(params) > 1 else ""
        desc = spec.description.strip().splitlines()[0] if spec.description.strip() else ""
        head = f"$ {spec.name} @ {arg}"
        lines.append(head.ljust(21) + (" " if len(head) >= 21 else "") + f"{desc}{rest}")  # long names keep a space
    if not lines:
        return ""
    return "Other tools (same form, the target is the tool's first argument):\n" + "\n".join(lines) + "\n"


def system_prompt(tools: Sequence[ToolSpec] = (), examples: bool = True) -> str:
    """The Sym-Ops system prompt, with any extra tools listed and the few-shot examples
    (`templates/few_shot.md`, rendered by PromptBuilder) — what every live prompt uses."""
    shots = PromptBuilder().examples_block() if examples else ""
    return fill(template("system_prompt.md"), {"tools": tool_lines(tools), "examples": shots})


@dataclass(frozen=True)
class Example:
    user: str
    assistant: str


@lru_cache(maxsize=1)
def few_shot_examples() -> tuple[Example, ...]:
    """The few-shot examples of `templates/few_shot.md` (blocks `=== user` / `=== assistant`)."""
    out: list[Example] = []
    role, user = "", ""
    buf: list[str] = []
    for line in template("few_shot.md").split("\n") + ["=== user"]:
        if line in ("=== user", "=== assistant"):
            text = "\n".join(buf).strip("\n")
            if role == "user":
                user = text
            elif role == "assistant":
                out.append(Example(user, text))
            role, buf = line[4:], []
        else:
            buf.append(line)
    return tuple(out)


def correction_message(errors: Sequence[str]) -> str:
    """The re-ask text naming each problem (kind, line, what was expected)."""
    listed = "\n".join(f"{i}. {e}" for i, e in enumerate(errors, 1)) or "1. the reply had no Sym-Ops actions"
    return fill(template("correction.md"), {"count": str(max(1, len(errors))), "errors": listed})


class PromptBuilder:
    """Builds the user turn: context (existing files), few-shot examples, then the task."""

    def __init__(self, examples: Sequence[Example] | None = None) -> None:
        self.examples = tuple(examples) if examples is not None else few_shot_examples()

    def examples_block(self) -> str:
        """The few-shot examples as `## Examples` with `User:` / `Assistant:` turns ('' if none)."""
        if not self.examples:
            return ""
        parts = ["## Examples"]
        for e in self.examples:
            parts += [f"User: {e.user}", "Assistant:", e.assistant, ""]
        return "\n".join(parts) + "\n"

    def build_prompt(self, user_request: str, context: Mapping[str, Any] | None = None,
                     include_examples: bool = True) -> str:  # fmt: skip
        ctx = ""
        if context:
            parts = ["## Current context"]
            files = context.get("files") or []
            if files:
                parts.append("Existing files:")
                parts += [f"- {f}" for f in files]
            for key, value in context.items():
                if key != "files":
                    parts.append(f"{key}: {value}")
            ctx = "\n".join(parts) + "\n\n"
        ex = self.examples_block() if include_examples else ""
        return fill(template("task.md"), {"context": ctx, "examples": ex, "request": user_request})
