"""The allowed-transition table, the one-transition-per-utterance limiter and error recovery (seed 001 §6).

The table is data (`data/transitions.toml`, replaceable through `companion.transitions_file`).
`TransitionController.request()` decides one move and records it — allowed or refused — with
its reason; nothing changes state here (the `StateOwner` applies what was allowed).

Which moves count against the limiter: moves chosen by the Main model's decision
(`source="decision"`). Moves that follow from an outcome the person or a tool produced —
the gate asked for approval, the person answered, the tools finished — are `source="outcome"`:
checked against the table and recorded, but not limited, because they are not the model
changing its mind. Error recovery (`source="recovery"`) is limited by its own retry count.
"""

from __future__ import annotations

import time
import tomllib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from duckflow.companion.state import Status, Step
from duckflow.errors import ConfigError

Source = Literal["decision", "outcome", "recovery", "status"]
HISTORY_KEPT = 200


@dataclass(frozen=True)
class TransitionRecord:
    """One attempted move and what became of it."""

    at: float
    from_step: Step
    to_step: Step
    allowed: bool
    reason: str
    source: Source

    def line(self) -> str:
        verdict = "ok" if self.allowed else "REFUSED"
        return f"{self.from_step.value} → {self.to_step.value} [{self.source}, {verdict}]: {self.reason}"


@dataclass
class TransitionTable:
    """Allowed moves and the recovery move per step."""

    allowed: dict[Step, dict[Step, str]]
    recovery: dict[Step, Step]
    statuses: dict[Step, tuple[Status, ...]] = field(default_factory=dict)  # Step × Status; empty: all

    def is_allowed(self, src: Step, dst: Step) -> bool:
        return dst in self.allowed.get(src, {})

    def status_allowed(self, step: Step, status: Status) -> bool:
        """Whether `step` may carry `status` (a step the [status] table does not list: any)."""
        allowed = self.statuses.get(step)
        return allowed is None or status in allowed

    def default_status(self, step: Step) -> Status:
        allowed = self.statuses.get(step)
        return allowed[0] if allowed else Status.IN_PROGRESS

    def reason(self, src: Step, dst: Step) -> str:
        return self.allowed.get(src, {}).get(dst, "")

    @classmethod
    def load(cls, path: str | Path | None = None) -> TransitionTable:
        """Read a table file; None reads the built-in table (the seed's, DONE included)."""
        if path is None:
            text = resources.files("duckflow.companion").joinpath("data/transitions.toml").read_text(
                encoding="utf-8"
            )
            where = "built-in transitions.toml"
        else:
            from duckflow.safe_read import read_regular

            try:
                text = read_regular(path).decode("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                raise ConfigError(
                    f"cannot read transitions file {path}: {why}",
                    hint="fix companion.transitions_file or remove it to use the built-in table",
                ) from None
            where = str(path)
        return cls.parse(text, where)

    @classmethod
    def parse(cls, text: str, where: str = "transitions") -> TransitionTable:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{where}: not valid TOML ({exc})", hint="fix the file") from exc

        def step(name: object, ctx: str) -> Step:
            try:
                return Step(str(name).upper())
            except ValueError:
                names = ", ".join(s.value for s in Step)
                raise ConfigError(
                    f"{where}: unknown step '{name}' in {ctx}", hint=f"use one of {names}"
                ) from None

        allowed: dict[Step, dict[Step, str]] = {}
        for i, row in enumerate(data.get("allow", [])):
            src = step(row.get("from"), f"allow #{i + 1}")
            dst = step(row.get("to"), f"allow #{i + 1}")
            allowed.setdefault(src, {})[dst] = str(row.get("reason", ""))
        recovery = {
            step(k, "recovery"): step(v, "recovery") for k, v in data.get("recovery", {}).items()
        }
        statuses: dict[Step, tuple[Status, ...]] = {}
        for k, values in data.get("status", {}).items():
            try:
                statuses[step(k, "status")] = tuple(Status(str(v).upper()) for v in values)
            except ValueError:
                names = ", ".join(s.value for s in Status)
                raise ConfigError(f"{where}: unknown status in [status] {k} = {values}",
                                  hint=f"use {names}") from None
            if not statuses[step(k, "status")]:
                raise ConfigError(f"{where}: [status] {k} lists no status", hint="list at least one")
        return cls(allowed, recovery, statuses)


@dataclass
class TransitionLimiter:
    """At most `max_per_utterance` decision moves per utterance (seed 001 §6.3).

    `new_utterance()` resets the count (each message from the person, each approval answer,
    each batch of tool results). For work with no utterance the count also resets after
    `reset_interval_s` seconds (the seed's 60-second rule). The clock is injectable.
    """

    max_per_utterance: int = 1
    reset_interval_s: float = 60.0
    clock: Callable[[], float] = time.monotonic
    count: int = 0
    last_at: float | None = None

    def new_utterance(self) -> None:
        self.count = 0

    def can_transition(self) -> bool:
        if self.last_at is not None and self.clock() - self.last_at > self.reset_interval_s:
            self.count = 0
        return self.count < self.max_per_utterance

    def record(self) -> None:
        self.count += 1
        self.last_at = self.clock()


@dataclass
class TransitionController:
    """Decides moves against the table and the limiter, and keeps the history of attempts."""

    table: TransitionTable = field(default_factory=TransitionTable.load)
    limiter: TransitionLimiter = field(default_factory=TransitionLimiter)
    max_recovery_retries: int = 2
    history: deque[TransitionRecord] = field(default_factory=lambda: deque(maxlen=HISTORY_KEPT))
    wall_clock: Callable[[], float] = time.time

    def _record(self, src: Step, dst: Step, ok: bool, reason: str, source: Source) -> TransitionRecord:
        rec = TransitionRecord(self.wall_clock(), src, dst, ok, reason, source)
        self.history.append(rec)
        return rec

    def request(self, src: Step, dst: Step, reason: str = "", source: Source = "decision") -> TransitionRecord:
        """Check one move. Refused moves are recorded with why; allowed ones with the reason given."""
        if src == dst:
            return self._record(src, dst, False, "already in this step (no transition)", source)
        if not self.table.is_allowed(src, dst):
            return self._record(
                src, dst, False, f"not in the allowed-transition table ({reason or 'no reason'})", source
            )
        if source == "decision":
            if not self.limiter.can_transition():
                return self._record(
                    src, dst, False,
                    f"limit of {self.limiter.max_per_utterance} transition per utterance reached "
                    f"({reason or 'no reason'})",
                    source,
                )
            self.limiter.record()
        return self._record(src, dst, True, reason or self.table.reason(src, dst), source)

    def recover(self, src: Step, retries_so_far: int, reason: str) -> TransitionRecord:
        """Error recovery: EXECUTION→PLANNING, REVIEW→PLANNING; refused past the retry limit."""
        dst = self.table.recovery.get(src)
        if dst is None:
            return self._record(src, src, False, f"no recovery step from {src.value}: {reason}", "recovery")
        if retries_so_far >= self.max_recovery_retries:
            return self._record(
                src, dst, False,
                f"recovery limit of {self.max_recovery_retries} retries reached: {reason}",
                "recovery",
            )
        return self._record(src, dst, True, f"error recovery: {reason}", "recovery")

    def refuse_status(self, step: Step, status: Status, kept: Status) -> TransitionRecord:
        """Record an impossible Step × Status pair that was refused."""
        return self._record(step, step, False, f"impossible pair {step.value} + {status.value}: "
                            f"status stays {kept.value}", "status")

    def refused(self) -> list[TransitionRecord]:
        return [r for r in self.history if not r.allowed]
