"""The lease renewer thread against a real redis-server: a lease held here outlives an event loop
that is busy for longer than the lease, and one given back is not taken again."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

import redis

from duckflow.channels.shared.lease import SharedManager, lock_key


def _manager(url: str) -> Any:
    m = SharedManager.__new__(SharedManager)  # the parts the renewer uses, nothing else
    m.lease_s, m.lease_ms, m.me = 0.3, 300, "host:1:abc"
    m.sync = redis.Redis.from_url(url)
    m.rlog = SimpleNamespace(errors=(redis.ConnectionError, redis.TimeoutError, OSError))
    import threading

    m._holding, m._holding_lock, m._stop_renewing = set(), threading.Lock(), threading.Event()
    return m


async def test_a_lease_held_here_outlives_a_busy_event_loop_and_one_given_back_expires(
        redis_server: Any) -> None:
    import threading

    m = _manager(redis_server.url)
    r = redis.Redis.from_url(redis_server.url)
    r.set(lock_key("busy"), m.me, px=m.lease_ms)
    m._keep("busy", True)
    thread = threading.Thread(target=m._renew_all, daemon=True)
    thread.start()
    try:
        time.sleep(1.2)  # the event loop blocked for 4 leases (a burst of 2,000 turns did this)
        await asyncio.sleep(0)
        assert r.get(lock_key("busy")) == m.me.encode()
        m._keep("busy", False)  # given back
        r.delete(lock_key("busy"))
        time.sleep(0.5)
        assert r.get(lock_key("busy")) is None  # not taken again by a late renewal
    finally:
        m._stop_renewing.set()
        thread.join(2)
