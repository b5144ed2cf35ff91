"""The shared lease's renewal and sweeper (channels/shared/lease.py) against a Redis client that
misbehaves the way redis-py can: a cancel that comes out of a call as a timeout."""

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


async def test_a_renewal_cancelled_inside_a_redis_call_stops_even_when_the_call_swallows_the_cancel() -> None:
    calls = 0

    async def renew_script(**_kw: Any) -> int:
        nonlocal calls
        calls += 1
        try:
            await asyncio.sleep(0.02)
        except asyncio.CancelledError:
            raise TimeoutError("Timeout reading from socket") from None  # the cancel, as a timeout
        return 1

    m = _manager(_renew_script=renew_script)
    task = asyncio.create_task(m._renew("s1"))
    while calls == 0:
        await asyncio.sleep(0.005)
    task.cancel()  # (its holder ended) while it waits on Redis
    await asyncio.wait({task}, timeout=1.0)
    assert task.done(), "a renewal outlived its holder: it would keep a released lease alive"
    seen = calls
    await asyncio.sleep(0.1)
    assert calls == seen


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
