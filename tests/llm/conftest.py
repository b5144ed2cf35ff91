"""Fixtures of the llm tests: a recorder of retry events (the fake server is in tests/helpers)."""

from __future__ import annotations

from typing import Any

import pytest


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.sleeps: list[float] = []

    def __call__(self, name: str, fields: dict[str, Any]) -> None:
        self.events.append((name, fields))

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    def names(self) -> list[str]:
        return [n for n, _ in self.events]


@pytest.fixture
def rec() -> Recorder:
    return Recorder()
