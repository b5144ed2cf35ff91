"""Errors of the agent engine: bad tool arguments, handoff loops, turn limits, guards."""

from __future__ import annotations

from duckflow.errors import DuckflowError


class CoreError(DuckflowError):
    """Base of the engine's errors. `code` is what error chunks and traces carry."""

    code = "core_error"


class ToolValidationError(CoreError):
    """A tool call's arguments do not match the tool's schema; the function was not called."""

    code = "tool_validation"

    def __init__(self, message: str, *, tool: str = "", fields: list[str] | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.tool = tool
        self.fields = fields or []


class ToolNotFoundError(CoreError):
    """The model asked for a tool the agent does not have."""

    code = "tool_not_found"


class ToolExecutionError(CoreError):
    """A tool raised while running; the message goes back to the model as an error result."""

    code = "tool_error"


class HandoffDepthExceeded(CoreError):
    """Agents handed off to each other more deeply than allowed (a routing loop, usually)."""

    code = "handoff_depth"


class MaxTurnsExceeded(CoreError):
    """The model kept asking for tools past the agent's turn limit."""

    code = "max_turns"


class GuardrailTripped(CoreError):
    """An input or output guardrail refused the text."""

    code = "guardrail"


class TokenBudgetExceeded(CoreError):
    """The session used more tokens than the TokenGuard's block threshold allows."""

    code = "token_budget"


class ModelCallError(CoreError):
    """The model call failed after the model's own retries (see llm/retry.py)."""

    code = "model_error"


class InternalError(CoreError):
    """Something in the engine or a hook failed unexpectedly (a bug): reported, never hidden."""

    code = "internal"

