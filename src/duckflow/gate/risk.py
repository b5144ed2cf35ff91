"""Risk per operation (low/medium/high) from a small rule table kept in a TOML data file."""

from __future__ import annotations

import fnmatch
import functools
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from duckflow.errors import ConfigError
from duckflow.gate.operation import RISK_ORDER, Operation, Risk, max_risk

DEFAULT_RULES_FILE = Path(__file__).with_name("risk_rules.toml")
_FLAGS = frozenset({"outside_workspace", "dangerous_extension", "sensitive", "over_cost_limit",
                    "destructive"})
_RULE_KEYS = frozenset({"name", "paths", "kinds", "min_size", "min_files", "flags", "risk", "reason"})


@dataclass(frozen=True)
class RiskRule:
    """One row of the table: when all given conditions hold, the operation is at least `risk`."""

    name: str
    risk: Risk
    reason: str
    paths: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    min_size: int | None = None
    min_files: int | None = None
    flags: tuple[str, ...] = ()

    def matches(self, op: Operation, op_flags: frozenset[str]) -> list[str]:
        """The paths that made it match (`[""]` when it matched without a path); [] = no match."""
        if self.kinds and op.kind not in self.kinds:
            return []
        if self.min_size is not None and (op.size is None or op.size < self.min_size):
            return []
        if self.min_files is not None and op.files < self.min_files:
            return []
        if self.flags and not all(f in op_flags for f in self.flags):
            return []
        if not self.paths:
            return [""]
        return [p for p in op.all_paths if any(path_matches(p, pat) for pat in self.paths)]


def path_matches(path: str, pattern: str) -> bool:
    """A pattern with "/" matches the whole path; without, any one segment of it."""
    match = _matcher(pattern)
    if "/" in pattern:
        return match(path)
    return any(match(seg) for seg in path.split("/") if seg not in ("", "."))


def _plain(text: str) -> bool:
    return not any(c in "*?[" for c in text)


@functools.lru_cache(maxsize=4096)
def _matcher(pattern: str) -> Callable[[str], bool]:
    """`fnmatch.fnmatchcase(s, pattern)` as a function; the table's usual shapes (`name`, `*.ext`,
    `prefix*`) as plain string tests, which give the same answers without compiling a regex
    (`*` matches any characters, "/" included, as in fnmatch)."""
    if _plain(pattern):
        return lambda s: s == pattern
    if pattern.startswith("*") and _plain(pattern[1:]):
        tail = pattern[1:]
        return lambda s: s.endswith(tail)
    if pattern.endswith("*") and _plain(pattern[:-1]):
        head = pattern[:-1]
        return lambda s: s.startswith(head)
    return lambda s: fnmatch.fnmatchcase(s, pattern)


@dataclass(frozen=True)
class Assessment:
    """The risk of one operation and the reasons, each naming the rule that raised it."""

    risk: Risk
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class RiskRules:
    """Base risk per kind plus rules; `assess(op)` takes the highest that applies."""

    kinds: Mapping[str, Risk] = field(default_factory=dict)
    rules: tuple[RiskRule, ...] = ()

    def assess(self, op: Operation, *, cost_limit: float | None = None) -> Assessment:
        base = self.kinds.get(op.kind, self.kinds.get("unknown", "high"))
        reasons: list[str] = []
        if base != "low":
            reasons.append(f"{op.kind}: {base} by kind")
        risk = base
        op_flags = operation_flags(op, cost_limit)
        for rule in self.rules:
            hits = rule.matches(op, op_flags)
            if not hits:
                continue
            where = f" ({', '.join(h for h in hits[:3] if h)})" if any(hits) else ""
            reasons.append(f"{rule.name}: {rule.reason}{where}")
            risk = max_risk(risk, rule.risk)
        return Assessment(risk=risk, reasons=tuple(reasons))


def operation_flags(op: Operation, cost_limit: float | None) -> frozenset[str]:
    flags = set()
    if op.outside_workspace:
        flags.add("outside_workspace")
    if op.dangerous_extension:
        flags.add("dangerous_extension")
    if op.sensitive:
        flags.add("sensitive")
    if op.destructive:
        flags.add("destructive")
    if cost_limit is not None and op.cost_estimate is not None and op.cost_estimate > cost_limit:
        flags.add("over_cost_limit")
    return frozenset(flags)


def _risk(value: Any, where: str) -> Risk:
    if value not in RISK_ORDER:
        raise ConfigError(f"{where}: risk must be low, medium or high, not {value!r}.",
                          hint="fix the risk rules file (see docs/gate.md)")
    return cast(Risk, value)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of strings.", hint="fix the risk rules file")
    return tuple(value)


def parse_rules(data: Mapping[str, Any], source: str) -> tuple[dict[str, Risk], list[RiskRule]]:
    """Read `[kinds]` and `[[rule]]` tables; errors name the file and the rule."""
    kinds = {str(k): _risk(v, f"{source} [kinds].{k}") for k, v in dict(data.get("kinds", {})).items()}
    rules: list[RiskRule] = []
    for i, raw in enumerate(data.get("rule", [])):
        where = f"{source} rule #{i + 1}"
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: expected a table.", hint="write rules as [[rule]] tables")
        unknown = set(raw) - _RULE_KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}.",
                              hint=f"known keys: {', '.join(sorted(_RULE_KEYS))}")
        flags = _strings(raw.get("flags"), where)
        bad = set(flags) - _FLAGS
        if bad:
            raise ConfigError(f"{where}: unknown flag(s) {', '.join(sorted(bad))}.",
                              hint=f"known flags: {', '.join(sorted(_FLAGS))}")
        rules.append(RiskRule(
            name=str(raw.get("name", f"rule{i + 1}")),
            risk=_risk(raw.get("risk"), where),
            reason=str(raw.get("reason", raw.get("name", "rule"))),
            paths=_strings(raw.get("paths"), where),
            kinds=_strings(raw.get("kinds"), where),
            min_size=int(raw["min_size"]) if "min_size" in raw else None,
            min_files=int(raw["min_files"]) if "min_files" in raw else None,
            flags=flags,
        ))
    return kinds, rules


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise ConfigError(f"risk rules file {path} does not exist.",
                          hint="fix gate.risk_rules_file in your config or remove it") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc}).", hint="fix the file") from exc


def load_rules(extra_files: Iterable[str | Path] = ()) -> RiskRules:
    """The default table, then each extra file: its `[kinds]` override, its rules are added.

    A file with `replace = true` at the top drops everything loaded before it.
    """
    kinds, rules = parse_rules(_read(DEFAULT_RULES_FILE), str(DEFAULT_RULES_FILE))
    for f in extra_files:
        data = _read(Path(f).expanduser())
        more_kinds, more_rules = parse_rules(data, str(f))
        if data.get("replace") is True:
            kinds, rules = {}, []
        kinds.update(more_kinds)
        rules.extend(more_rules)
    return RiskRules(kinds=kinds, rules=tuple(rules))
