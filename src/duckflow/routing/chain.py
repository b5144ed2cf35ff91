"""RouterChain: routers asked in order (commands → rules → classifier), then a safe fallback route.

Every router is asked at most once per message, so there is at most one classifier call
(seed 003 §2.1). The decision's `notes` say what each earlier router answered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from duckflow.routing.route import RouteDecision, Router

OnEvent = Callable[[str, dict[str, Any]], None]


class RouterChain:
    """`RouterChain([CommandRouter(...), RuleRouter(...), LLMRouter(...)], fallback_route="CHAT")`."""

    def __init__(self, routers: Sequence[Router], *, fallback_route: str = "CHAT",
                 on_event: OnEvent | None = None) -> None:
        self.routers = list(routers)
        self.fallback_route = fallback_route
        self.on_event = on_event

    async def route(self, text: str, context: Mapping[str, Any] | None = None) -> RouteDecision:
        notes: list[str] = []
        for router in self.routers:
            decision = await router.route(text, context)
            label = type(router).__name__
            if decision is not None:
                decision.notes = notes + decision.notes
                self._emit(decision)
                return decision
            error = getattr(router, "last_error", None)
            notes.append(f"{label}: no decision" + (f" ({error})" if error else ""))
        decision = RouteDecision(self.fallback_route, 0.0, "no router decided; safe fallback", [],
                                 "fallback", notes=notes)
        self._emit(decision)
        return decision

    def _emit(self, decision: RouteDecision) -> None:
        if self.on_event is not None:
            self.on_event("router.decision", decision.to_dict())
