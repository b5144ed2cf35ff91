"""Routes and routing decisions: what a router may answer, and what it answered and why."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Source = Literal["command", "rules", "classifier", "fallback"]


@dataclass(frozen=True)
class Route:
    """A destination (e.g. CHAT, CODE). `min_confidence`, `needs_evidence` and `evidence_check` bound
    the classifier; `evidence_check(text, evidence)` says whether the evidence is strong enough."""

    name: str
    description: str = ""
    examples: tuple[str, ...] = ()
    min_confidence: float | None = None
    needs_evidence: bool = False
    evidence_check: Callable[[str, list[str]], bool] | None = None


@dataclass
class RouteDecision:
    """Where a message goes, how sure the router is, why, and which router decided."""

    route: str
    confidence: float
    reason: str
    evidence: list[str] = field(default_factory=list)
    source: Source = "rules"
    args: str = ""  # the text after an explicit command
    notes: list[str] = field(default_factory=list)  # what the chain tried before deciding

    def to_dict(self) -> dict[str, Any]:
        return {"route": self.route, "confidence": self.confidence, "reason": self.reason,
                "evidence": list(self.evidence), "source": self.source, "args": self.args,
                "notes": list(self.notes)}


class Router(Protocol):
    """Anything that may decide a route; None means "not mine, ask the next router"."""

    async def route(self, text: str, context: Mapping[str, Any] | None = None) -> RouteDecision | None: ...
