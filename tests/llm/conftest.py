"""Fixtures of the llm tests: a fake HTTP server on 127.0.0.1 and a recorder of retry events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.llm.fakeserver import FakeServer


@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    srv = await FakeServer().start()
    try:
        yield srv
    finally:
        await srv.close()


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
