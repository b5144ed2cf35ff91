"""Renders the three prompt layers — Base, Main, Specialized — from template files (seed 001 §3).

Templates live in `prompts/templates/<lang>/` (en, ja), in Jinja2 syntax, and are rendered with
MiniJinja (imported lazily, one environment per language and process). Base is concatenated persona → policy → overlay: the fixed
text first, so it stays the same prefix across turns (a server can reuse its cache), and the
session's data last, nearest the question (seed 003's order). A workspace's `CHAT_PERSONA.md` is read first
and replaces the built-in persona. The fixed text of Base (persona + policy) is kept within
1000 characters, so the layer that repeats on every call stays cheap (seed 001 §3.1): a
longer persona file is shortened visibly ("…").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

Language = Literal["en", "ja"]
SpecializedStep = Literal["PLANNING", "EXECUTION", "REVIEW"]
BASE_FIXED_MAX = 1000
PERSONA_FILE = "CHAT_PERSONA.md"
_SPECIALIZED = {"PLANNING": "planning.j2", "EXECUTION": "execution.j2", "REVIEW": "review.j2"}


@dataclass
class PromptInputs:
    """Everything the templates may show. Filled by the companion from its AgentState."""

    session_id: str = ""
    conversation_count: int = 0
    last_updated: str = ""
    files_created: int = 0
    successful_operations: int = 0
    learned_patterns: list[str] = field(default_factory=list)
    user_settings: dict[str, str] = field(default_factory=dict)
    summaries: list[str] = field(default_factory=list)  # last five exchanges (Base)
    past_sessions: list[str] = field(default_factory=list)  # earlier sessions of the workspace (Base)
    step: str = "PLANNING"
    status: str = "IN_PROGRESS"
    task: str = ""
    vitals: str = ""
    goal: str = ""
    why_now: str = ""
    constraints: list[str] = field(default_factory=list)
    plan_brief: list[str] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)
    recent_turns: list[str] = field(default_factory=list)  # last three (Main)
    evidence: list[str] = field(default_factory=list)  # latest tool results, newest last
    context_refs: list[str] = field(default_factory=list)
    pending: str = ""
    allowed: list[str] = field(default_factory=list)
    tools: str = ""  # the codec's tool instructions for the Specialized call
    project: str = ""  # the project's AGENTS.md, framed (Base, after the policy; its own budget)

    def copy(self) -> PromptInputs:
        """A copy whose lists can be cut without touching the original (the budget cuts them).
        Made from the fields as they are (dataclasses.replace runs __init__: ~4x as long)."""
        data = dict(self.__dict__)
        for name in _CUTTABLE:
            data[name] = list(data[name])
        new = object.__new__(PromptInputs)
        new.__dict__.update(data)
        return new


_CUTTABLE = ("summaries", "plan_brief", "open_questions", "recent_turns", "evidence", "past_sessions")


@functools.lru_cache(maxsize=4)
def template_sources(language: str) -> dict[str, str]:
    """Every file of `prompts/templates/<language>/`, by name (the templates and the persona and
    policy texts), read once per process; do not change the dict."""
    root = resources.files("duckflow.prompts").joinpath("templates", language)
    return {p.name: p.read_text(encoding="utf-8") for p in root.iterdir() if p.is_file()}


@functools.lru_cache(maxsize=4)
def _environment(language: str) -> Any:
    """A MiniJinja environment holding the language's templates (Jinja2 syntax; minijinja is
    compiled Rust: its import costs ~2 ms where Jinja2's cost ~12 ms of every start, and it
    needs no compiled-template cache). Nothing is escaped: the prompts are plain text."""
    import minijinja

    return minijinja.Environment(templates=template_sources(language), keep_trailing_newline=False,
                                 trim_blocks=False, auto_escape_callback=lambda _name: False,
                                 debug=False)


def read_workspace_persona(workspace: str | Path | None) -> str | None:
    """The workspace's CHAT_PERSONA.md (read first when present), else None.

    A cloned repository ships this file, so it is read like a workspace config: a regular file
    of at most 64 KB, no link followed (a link to /dev/zero or ~/.ssh/id_rsa is ignored)."""
    if workspace is None:
        return None
    from duckflow.safe_read import read_inside

    try:
        text = read_inside(workspace, PERSONA_FILE, max_bytes=65_536).decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text or None


class PromptBuilder:
    """Builds the Base, Main and Specialized prompts for one language."""

    def __init__(self, language: Language = "en", persona: str | None = None) -> None:
        self.language: Language = language if language in ("en", "ja") else "en"
        self._env = _environment(self.language)
        self.notes: list[str] = []
        sources = template_sources(self.language)
        self.policy = sources["policy.md"].strip()
        builtin = sources["persona.md"].strip()
        text = persona.strip() if persona else builtin
        room = BASE_FIXED_MAX - len(self.policy) - 2
        if len(text) > room:
            self.notes.append(
                f"{PERSONA_FILE} shortened to {room} characters (was {len(text)}) to keep Base "
                f"within {BASE_FIXED_MAX}"
            )
            text = text[: room - 1].rstrip() + "…"
        self.persona = text

    @property
    def fixed_base(self) -> str:
        """persona → policy: the constant part of Base."""
        return f"{self.persona}\n\n{self.policy}"

    def _render(self, name: str, data: dict[str, Any]) -> str:
        return str(self._env.render_template(name, **data)).strip()

    def base(self, inp: PromptInputs) -> str:
        return self._render(
            "base.j2",
            {**inp.__dict__, "persona": self.persona, "policy": self.policy},
        )

    def main(self, inp: PromptInputs) -> str:
        data = dict(inp.__dict__)
        data["allowed"] = ", ".join(inp.allowed) or "-"
        data["steps"] = "|".join(["PLANNING", "EXECUTION", "REVIEW", "AWAITING_APPROVAL", "DONE"])
        return self._render("main.j2", data)

    def specialized(self, step: str, inp: PromptInputs) -> str:
        name = _SPECIALIZED.get(step.upper(), "planning.j2")
        return self._render(name, dict(inp.__dict__))
