"""DraftAgent: expands and deepens an essay section by section; headings never change.

The heading-preserving rule is kept by construction, not by asking nicely: the essay is cut at
its headings (`text.sections`), the model is given one section body at a time and returns the
new body as JSON, and the patch replaces bodies only. A body that comes back containing a
heading line, empty, or much shorter than before is refused for that section (reported, the
original kept). `depth` (1-3) says how far to go, and lessons learnt by `apply_reflexion` are
added to the system prompt. The model is told never to invent facts: where a concrete detail
is needed it leaves a bracketed question for the author.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from duckflow.apps.smartao.ask import AgentLog, ask_json, json_settings
from duckflow.apps.smartao.patch import Change, ChangeOp, PatchJSON, make_patch
from duckflow.apps.smartao.text import is_heading_line, language, sections
from duckflow.core.prompt_library import PromptLibrary

DEPTHS = (1, 2, 3)  # the goals are the prompt library's draft.depth_N (prompts/<lang>.toml)
PROMPTS = PromptLibrary("duckflow.apps.smartao")


class _Body(BaseModel):
    body: str = Field(min_length=1, max_length=20_000)


@dataclass
class DraftResult:
    patch: PatchJSON
    sections_changed: int
    refused: list[dict[str, str]] = field(default_factory=list)
    unchanged: list[dict[str, str]] = field(default_factory=list)  # every section kept, and why

    def report(self) -> dict[str, Any]:
        return {"sections_changed": self.sections_changed, "refused": self.refused, "unchanged": self.unchanged}


class DraftAgent:
    name = "DraftAgent"

    def __init__(self, model: Any, *, depth: int = 2, lessons: list[str] | None = None,
                 token_guard: Any = None) -> None:
        if depth not in DEPTHS:
            raise ValueError(f"depth must be 1, 2 or 3 (got {depth})")
        self.model, self.depth, self.lessons, self.token_guard = model, depth, lessons or [], token_guard

    def _agent(self, lang: str, budget: int) -> Any:
        from duckflow.core.agent import Agent

        system = PROMPTS.get("draft.system", lang) + "\n" + PROMPTS.get(
            "draft.depth", lang, goal=PROMPTS.get(f"draft.depth_{self.depth}", lang))
        if self.lessons:
            system += "\n" + PROMPTS.get("draft.lessons", lang) + "\n"
            system += "\n".join(f"- {x}" for x in self.lessons[:5])
        return Agent(self.name, system, model=self.model, settings=json_settings(self.model, _Body, budget),
                     token_guard=self.token_guard, max_turns=1)

    async def run(self, text: str, *, session: str, log: AgentLog) -> DraftResult:
        lang = language(text)
        changes: list[Change] = []
        refused: list[dict[str, str]] = []
        unchanged: list[dict[str, str]] = []
        for sec in sections(text):
            body = text[sec.b_start:sec.b_end]
            core = body.strip()
            title = sec.heading or ("(冒頭)" if lang == "ja" else "(opening)")
            if not core:
                if sec.heading:
                    unchanged.append({"heading": title, "reason": PROMPTS.get("draft.why.empty", lang)})
                continue
            lead = body[:len(body) - len(body.lstrip())]
            trail = body[len(body.rstrip()):]
            budget = min(4000, 200 + len(core) * (1 + self.depth))
            agent = self._agent(lang, budget)
            prompt = (f"Heading (do not change, do not repeat): {title}\nSection body:\n<<<\n{core}\n>>>")
            answer = await ask_json(agent, prompt, _Body, session=session, log=log)
            new = answer.body.strip()
            why = self._refuse(core, new, lang)
            if why:
                refused.append({"heading": title, "reason": why})
                unchanged.append({"heading": title, "reason": PROMPTS.get("draft.why.kept", lang, why=why)})
                continue
            if new != core:
                changes.append(Change(op=ChangeOp.replace, start=sec.b_start, end=sec.b_end,
                                      text=lead + new + trail))
            else:
                unchanged.append({"heading": title, "reason": PROMPTS.get("draft.why.same", lang)})
        return DraftResult(make_patch(text, changes), len(changes), refused, unchanged)

    @staticmethod
    def _refuse(old: str, new: str, lang: str = "en") -> str | None:
        """Why a new body is refused, in the essay's language (None: taken)."""
        if any(is_heading_line(line) for line in new.splitlines() if line.strip()):
            return PROMPTS.get("draft.why.heading", lang)
        if len(new) < 0.8 * len(old):
            return PROMPTS.get("draft.why.shorter", lang, new=len(new), old=len(old))
        return None
