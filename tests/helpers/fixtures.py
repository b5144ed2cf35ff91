"""Fixtures shared by every test folder (loaded from tests/conftest.py): clock, servers, workspaces, sessions."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.helpers import FakeClock
from tests.helpers.companion import env, steps_of
from tests.helpers.fakeserver import FakeServer
from tests.helpers.frontdoor import front_door, scripted
from tests.helpers.listener import listener
from tests.helpers.otlp import otlp_receiver
from tests.helpers.workspace import outside, root, ws

__all__ = ["clock", "env", "front_door", "listener", "otlp_receiver", "outside", "root", "scripted", "server",
           "steps_of", "ws"]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    """A fake provider HTTP server on 127.0.0.1."""
    srv = await FakeServer().start()
    try:
        yield srv
    finally:
        await srv.close()
