"""LLMRouter: one classifier call whose JSON answer {route, confidence, reason, evidence} picks the route.

The prompt is a template file (`prompts/classifier.md`, `$routes` / `$names` / `$fallback`
are filled in). The answer is read with the tolerant JSON reader; an answer that is not JSON,
misses a field, names an unknown route, has a confidence outside [0, 1], is below the route's
minimum, or lacks evidence a route requires, is refused: `route()` returns None (with the
reason in `last_error`) and, when given, the `fallback` rule router answers instead (seed 004 §3-5).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from string import Template
from typing import TYPE_CHECKING, Any

from duckflow.llm.errors import LLMError
from duckflow.llm.types import Model, ModelSettings
from duckflow.routing.route import Route, RouteDecision
from duckflow.routing.rules import RuleRouter

if TYPE_CHECKING:
    from pydantic import BaseModel

OnEvent = Callable[[str, dict[str, Any]], None]


def default_template() -> str:
    """The classifier system prompt shipped in `routing/prompts/classifier.md`."""
    from importlib import resources

    return resources.files("duckflow.routing").joinpath("prompts/classifier.md").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _answer_schema() -> type[BaseModel]:
    from pydantic import BaseModel, Field, field_validator

    class ClassifierAnswer(BaseModel):
        route: str
        confidence: float = Field(ge=0.0, le=1.0)
        reason: str
        evidence: list[str] = []  # copied per instance; a literal, not default_factory=list/dict (see core/chunks.py)

        @field_validator("evidence", mode="before")
        @classmethod
        def _one_or_many(cls, value: Any) -> Any:
            return [value] if isinstance(value, str) else value

    return ClassifierAnswer


@dataclass
class Classification:
    """What one classifier call produced: a decision, or the reason there is none."""

    decision: RouteDecision | None
    error: str | None = None
    raw: str = ""


class LLMRouter:
    """Asks `model` to classify the message among `routes` (see the module docstring)."""

    def __init__(
        self,
        model: Model,
        routes: Sequence[Route],
        *,
        min_confidence: float = 0.6,
        template: str | None = None,
        fallback: RuleRouter | None = None,
        fallback_route: str | None = None,
        settings: ModelSettings | None = None,
        on_event: OnEvent | None = None,
    ) -> None:
        if not routes:
            raise ValueError("LLMRouter needs at least one route")
        self.model = model
        self.routes = {r.name: r for r in routes}
        self.min_confidence = min_confidence
        self.template = template if template is not None else default_template()
        self.fallback = fallback
        self.fallback_route = fallback_route or routes[0].name
        self.settings = settings or ModelSettings(temperature=0.0, max_tokens=300)
        self.on_event = on_event
        self.last_error: str | None = None
        self.calls = 0

    def system_prompt(self) -> str:
        lines = []
        for r in self.routes.values():
            line = f"- {r.name}: {r.description}".rstrip(": ")
            if r.examples:
                line += " (e.g. " + "; ".join(f'"{e}"' for e in r.examples) + ")"
            lines.append(line)
        return Template(self.template).safe_substitute(
            routes="\n".join(lines), names=", ".join(self.routes), fallback=self.fallback_route)

    async def classify(self, text: str) -> Classification:
        """One model call; never raises for a bad answer or a failed call."""
        from duckflow.core.agent import Agent
        from duckflow.protocols.jsonreply import read_json

        self.calls += 1
        # one turn of core's agent loop (no tools, no memory): the same path as every model call
        agent = Agent("classifier", self.system_prompt(), model=self.model, settings=self.settings, max_turns=1,
                      codec="native")  # no tools: the reply text as it is
        try:
            result = await agent.run(text, raise_errors=False)
        except LLMError as exc:
            return self._refuse(f"classifier call failed: {exc.message}", "")
        if result.error is not None:
            why = getattr(result.error, "message", None) or str(result.error)
            return self._refuse(f"classifier call failed: {why}", "")
        resp = result
        reply = read_json(resp.text, _answer_schema())
        if not reply.ok:
            return self._refuse("classifier answer is not valid: " + "; ".join(reply.errors or ["no JSON"]),
                                resp.text)
        answer = reply.value
        route = self.routes.get(answer.route) or self.routes.get(str(answer.route).upper())
        if route is None:
            return self._refuse(f"classifier chose unknown route {answer.route!r}", resp.text)
        floor = route.min_confidence if route.min_confidence is not None else self.min_confidence
        if answer.confidence < floor:
            return self._refuse(f"classifier confidence {answer.confidence} for {route.name} is below {floor}",
                                resp.text)
        evidence = [e for e in answer.evidence if e.strip()]
        if route.needs_evidence and not evidence:
            return self._refuse(f"classifier chose {route.name} without evidence", resp.text)
        if route.evidence_check is not None and not route.evidence_check(text, evidence):
            return self._refuse(f"classifier chose {route.name} without strong evidence in the message",
                                resp.text)
        decision = RouteDecision(route.name, answer.confidence, answer.reason, evidence, "classifier")
        return Classification(decision, None, resp.text)

    def _refuse(self, error: str, raw: str) -> Classification:
        self.last_error = error
        if self.on_event is not None:
            self.on_event("classifier.error", {"error": error, "raw": raw[:500]})
        return Classification(None, error, raw)

    async def route(self, text: str, context: Mapping[str, Any] | None = None) -> RouteDecision | None:
        result = await self.classify(text)
        if result.decision is not None:
            return result.decision
        if self.fallback is not None:
            decision = self.fallback.match(text, context)
            if decision is not None:
                decision.notes.append(result.error or "")
                return decision
        return None
