"""The base error every user-facing Duckflow failure derives from."""

from __future__ import annotations


class DuckflowError(Exception):
    """An error a person can meet: says what happened and, in `hint`, what to do next."""

    exit_code = 1
    #: what error chunks and traces carry (subclasses name themselves)
    code = "error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  next: {self.hint}"


class ConfigError(DuckflowError):
    """The configuration file or an environment variable is invalid."""

    code = "config"


class UserError(DuckflowError):
    """The code calling Duckflow is wrong (two tools with one name, an agent without a model...).

    Kept apart from failures while running (a model that times out, a tool that raises) so a
    developer can tell "fix my code" from "try again": these are raised as they are, never
    wrapped, and a run never retries them.
    """

    code = "user_error"
