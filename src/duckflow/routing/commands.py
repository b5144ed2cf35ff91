"""CommandRouter: explicit `/commands` at the very start of a message pick the route (seed 003 §2.2)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from duckflow.routing.route import RouteDecision

_COMMAND = re.compile(r"^\s*/([A-Za-z][\w-]*)(?:\s+|$)(.*)\Z", re.S)


class CommandRouter:
    """`commands` maps a command word (without the slash) to a route, e.g. {"code": "CODE"}.

    Only a command at the start of the message counts; unknown commands are not routed
    (the next router sees the text as it is).
    """

    def __init__(self, commands: Mapping[str, str]) -> None:
        self.commands = {k.lstrip("/").lower(): v for k, v in commands.items()}

    def parse(self, text: str) -> tuple[str, str] | None:
        """(command word, rest of the text) when the message starts with a known command."""
        m = _COMMAND.match(text)
        if not m or m.group(1).lower() not in self.commands:
            return None
        return m.group(1).lower(), m.group(2).strip()

    async def route(self, text: str, context: Mapping[str, Any] | None = None) -> RouteDecision | None:
        found = self.parse(text)
        if found is None:
            return None
        word, rest = found
        return RouteDecision(self.commands[word], 1.0, f"explicit command /{word}", [f"command:/{word}"],
                             "command", args=rest)
