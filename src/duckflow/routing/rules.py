"""RuleRouter: an ordered rule dictionary (priority descending, then definition order), first match wins.

A rule matches on keywords (case-insensitive substrings, so it works for Japanese text too),
regular expressions (ASCII word boundaries, so `\bcsv\b` matches inside Japanese text), or a
predicate over (text, context). What matched is the evidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from duckflow._lazyre import LazyPattern, Regex
from duckflow.errors import ConfigError
from duckflow.routing.route import RouteDecision

Predicate = Callable[[str, Mapping[str, Any]], bool]


@dataclass
class Rule:
    """One entry of the dictionary. A rule with several kinds of tests matches when any does."""

    route: str
    keywords: Sequence[str] = ()
    patterns: Sequence[str] = ()
    predicate: Predicate | None = None
    priority: int = 0
    name: str = ""
    confidence: float = 1.0
    # compile the patterns when the rule is first tried, not now: for the shipped dictionary
    # (a test compiles all of it); a person's own rules file is compiled at once, so a bad
    # pattern is reported when it is loaded
    lazy: bool = field(default=False, repr=False)
    _compiled: list[Regex] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if not (self.keywords or self.patterns or self.predicate):
            raise ConfigError(f"rule {self.label!r} has no keywords, patterns or predicate",
                              hint="give the rule at least one way to match")
        if self.lazy:
            self._compiled = [LazyPattern(p, re.I | re.A) for p in self.patterns]
            return
        try:
            # ASCII word boundaries: `\bcsv\b` must match in 'CSVを集計して' (kana are \w in Unicode mode)
            self._compiled = [re.compile(p, re.I | re.A) for p in self.patterns]
        except re.error as exc:
            raise ConfigError(f"rule {self.label!r}: invalid regular expression ({exc})") from exc

    @property
    def label(self) -> str:
        return self.name or f"{self.route}-rule"

    def match(self, text: str, context: Mapping[str, Any]) -> list[str] | None:
        """The evidence when the rule matches, else None."""
        lowered = text.lower()
        evidence = [f"keyword:{k}" for k in self.keywords if k.lower() in lowered]
        for rx in self._compiled:
            m = rx.search(text)
            if m:
                evidence.append(f"regex:{m.group(0)}")
        if self.predicate is not None and self.predicate(text, context):
            evidence.append(f"predicate:{getattr(self.predicate, '__name__', 'predicate')}")
        return list(dict.fromkeys(evidence)) or None


class RuleRouter:
    """Rules evaluated by priority (highest first), ties in definition order; first match wins."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        indexed = list(enumerate(rules))
        self.rules = [r for _, r in sorted(indexed, key=lambda ir: (-ir[1].priority, ir[0]))]

    @classmethod
    def from_dicts(cls, items: Iterable[Mapping[str, Any]], *, lazy: bool = False) -> RuleRouter:
        """Rules from plain data (e.g. a TOML table list): route, keywords, patterns, priority, name;
        `lazy`: compile each rule's patterns when it is first tried (see `Rule.lazy`)."""
        rules = []
        for item in items:
            unknown = set(item) - {"route", "keywords", "patterns", "priority", "name", "confidence"}
            if unknown or "route" not in item:
                raise ConfigError(f"routing rule {dict(item)!r}: needs 'route', unknown keys {sorted(unknown)}",
                                  hint="allowed: route, keywords, patterns, priority, name, confidence")
            rules.append(Rule(route=str(item["route"]), keywords=tuple(item.get("keywords", ())),
                              patterns=tuple(item.get("patterns", ())), priority=int(item.get("priority", 0)),
                              name=str(item.get("name", "")), confidence=float(item.get("confidence", 1.0)),
                              lazy=lazy))
        return cls(rules)

    def match(self, text: str, context: Mapping[str, Any] | None = None) -> RouteDecision | None:
        ctx = context or {}
        for rule in self.rules:
            evidence = rule.match(text, ctx)
            if evidence:
                return RouteDecision(rule.route, rule.confidence, f"rule {rule.label} matched", evidence, "rules")
        return None

    async def route(self, text: str, context: Mapping[str, Any] | None = None) -> RouteDecision | None:
        return self.match(text, context)
