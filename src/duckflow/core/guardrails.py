"""Guardrails: checks on an agent's input and output that can stop the step (seed 004 §3-4).

A `Guardrail` combines an input schema, an output schema, regex blocks and custom functions
(sync or async). Checks return plain values, `GuardrailResult(tripwire, message)`; the agent
turns a tripwire into an error chunk whose message is written for a person. Input guardrails
finish before the model is called, so nothing streams before a refusal.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

from pydantic import BaseModel, ValidationError

Stage = Literal["input", "output"]
GuardOutcome = Union["GuardrailResult", bool, str, None]
GuardFunc = Callable[[Any], Union[GuardOutcome, Awaitable[GuardOutcome]]]


@dataclass(frozen=True)
class GuardrailResult:
    """What a check found. `tripwire=True` stops the step; `message` is shown to the person."""

    tripwire: bool = False
    message: str = ""
    guardrail: str = ""

    @classmethod
    def ok(cls) -> GuardrailResult:
        return cls()

    @classmethod
    def block(cls, message: str, guardrail: str = "") -> GuardrailResult:
        return cls(True, message, guardrail)


_OK = GuardrailResult()


class Guardrail:
    """Input/output checks. Regex blocks and custom functions apply to the stages in `applies_to`.

    `regex_blocks` items are patterns or `(pattern, message)` pairs; the default message does
    not repeat the matched text (it may be a secret). A custom function receives the text (or
    the data) and returns a `GuardrailResult`, a message string (= tripwire), `True` (tripwire
    with a generic message), or `None`/`False` (passes).
    """

    def __init__(
        self,
        *,
        name: str = "guardrail",
        input_schema: type[BaseModel] | None = None,
        output_schema: type[BaseModel] | None = None,
        regex_blocks: Sequence[str | re.Pattern[str] | tuple[str | re.Pattern[str], str]] = (),
        custom_funcs: Sequence[GuardFunc] = (),
        applies_to: Literal["input", "output", "both"] = "both",
    ) -> None:
        self.name = name
        self.input_schema = input_schema
        self.output_schema = output_schema
        self.applies_to = applies_to
        self.custom_funcs = list(custom_funcs)
        self.regex_blocks: list[tuple[re.Pattern[str], str | None]] = []
        for item in regex_blocks:
            pattern, message = item if isinstance(item, tuple) else (item, None)
            self.regex_blocks.append((re.compile(pattern) if isinstance(pattern, str) else pattern, message))

    async def validate_input(self, data: Any) -> GuardrailResult:
        return await self._validate("input", data, self.input_schema)

    async def validate_output(self, data: Any) -> GuardrailResult:
        return await self._validate("output", data, self.output_schema)

    async def _validate(self, stage: Stage, data: Any, schema: type[BaseModel] | None) -> GuardrailResult:
        if schema is not None:
            result = self._check_schema(stage, data, schema)
            if result.tripwire:
                return result
        if self.applies_to not in (stage, "both"):
            return _OK
        text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
        for pattern, message in self.regex_blocks:
            if pattern.search(text):
                return GuardrailResult.block(
                    message or f"The {stage} contains text that is not allowed here "
                    f"(blocked by rule '{pattern.pattern[:40]}' of {self.name}).",
                    self.name,
                )
        for func in self.custom_funcs:
            outcome = func(data)
            if inspect.isawaitable(outcome):
                outcome = await outcome
            result = self._normalise(outcome, stage, func)
            if result.tripwire:
                return result
        return _OK

    def _check_schema(self, stage: Stage, data: Any, schema: type[BaseModel]) -> GuardrailResult:
        try:
            if isinstance(data, (str, bytes)):
                schema.model_validate_json(data)
            else:
                schema.model_validate(data)
        except ValidationError as exc:
            problems = []
            for err in exc.errors()[:3]:
                loc = ".".join(str(p) for p in err["loc"])
                problems.append(f"{loc}: {err['msg']}" if loc else err["msg"])
            return GuardrailResult.block(
                f"The {stage} does not have the expected form ({schema.__name__}): "
                + "; ".join(problems) + ".",
                self.name,
            )
        return _OK

    def _normalise(self, outcome: Any, stage: Stage, func: GuardFunc) -> GuardrailResult:
        if isinstance(outcome, GuardrailResult):
            return outcome if outcome.guardrail else GuardrailResult(
                outcome.tripwire, outcome.message, self.name)
        if isinstance(outcome, str) and outcome:
            return GuardrailResult.block(outcome, self.name)
        if outcome is True:
            fname = getattr(func, "__name__", "a check")
            return GuardrailResult.block(f"The {stage} was refused by {fname} ({self.name}).", self.name)
        return _OK


def checks_output(guard: Any) -> bool:
    """Whether `guard` can refuse an output (then an agent holds its text back until it passes)."""
    if not isinstance(guard, Guardrail):
        return True  # a guardrail of another kind: assume it checks the output
    return guard.output_schema is not None or (
        guard.applies_to in ("output", "both") and bool(guard.regex_blocks or guard.custom_funcs))
