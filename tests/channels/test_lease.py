"""The shared lease's sweeper (channels/shared/lease.py) with a stand-in Redis client (the renewer
thread runs against a real redis-server in tests/channels/scale/test_lease_renewer.py)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from duckflow.channels.shared.lease import SharedManager, lock_key


def _manager(**parts: Any) -> Any:
    m = SharedManager.__new__(SharedManager)  # the parts the two tasks use, nothing else
    m.lease_s, m.lease_ms, m.me = 0.03, 30, "host:1:abc"
    m.rlog = SimpleNamespace(errors=(OSError,))
    m._owned = {}
    for k, v in parts.items():
        setattr(m, k, v)
    return m


async def test_the_sweeper_takes_a_lease_of_this_process_that_no_holder_here_reads() -> None:
    owned: list[str] = []
    locks = {lock_key("orphan"): b"host:1:abc", lock_key("elsewhere"): b"other:2:def"}

    class Aio:
        async def smembers(self, _key: str) -> set[bytes]:
            return {b"orphan", b"elsewhere"}

        async def set(self, key: str, value: str, nx: bool, px: int) -> bool:
            return False  # both leases are held

        async def get(self, key: str) -> bytes | None:
            return locks.get(key)

    m = _manager(aio=Aio())
    m._own = owned.append
    task = asyncio.create_task(m._sweep())
    await asyncio.sleep(0.35)
    task.cancel()
    assert owned and set(owned) == {"orphan"}  # another process's live lease is left alone
