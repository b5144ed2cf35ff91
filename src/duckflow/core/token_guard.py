"""TokenGuard: cumulative tokens per session, with a warn and a block threshold (seed 004 §3-4).

The engine adds the tokens of every model call (prompt + completion) and of every tool call
(arguments + result, counted with `duckflow.llm.tokens.count_tokens`). Past `warn_at` the
agent streams one `warning` chunk; past `block_at` it stops before the next model or tool call
with an error chunk. Counters sit behind one small interface with three backends:
in-memory, SQLite (default, survives restarts) and Redis (the `[redis]` extra, for several
server processes; atomic INCRBY).
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from duckflow.core.errors import TokenBudgetExceeded
from duckflow.errors import ConfigError

if TYPE_CHECKING:
    from duckflow.config import TokenGuardConfig

Level = Literal["ok", "warn", "block"]


class TokenCounter(Protocol):
    """Per-session running totals. `add` is atomic and returns the new total."""

    async def add(self, session: str, n: int) -> int: ...

    async def get(self, session: str) -> int: ...

    async def reset(self, session: str) -> None: ...


class MemoryCounter:
    """Totals in this process only (tests, scripts)."""

    def __init__(self) -> None:
        self._totals: dict[str, int] = {}

    async def add(self, session: str, n: int) -> int:
        total = self._totals.get(session, 0) + n
        self._totals[session] = total
        return total

    async def get(self, session: str) -> int:
        return self._totals.get(session, 0)

    async def reset(self, session: str) -> None:
        self._totals.pop(session, None)


class SQLiteCounter:
    """Totals in a SQLite file (WAL); an upsert `n = n + ?` keeps concurrent writers exact.

    A call runs at once when the database answers at once: a second connection with no busy
    timeout tries it in the caller's thread (a WAL read or a small upsert, well under a
    millisecond). When that connection would have to wait (another writer holds the lock, or
    another thread uses it), the call runs in a worker thread on the first connection (5 s
    busy timeout), so a busy database never stalls the event loop. A run no longer hands
    every model call's two counter calls to a thread and back (18 hand-offs in the demo run,
    each a wake-up that costs most on a loaded machine).
    """

    def __init__(self, path: str | Path) -> None:
        import sqlite3

        from duckflow.store.sqlite import connect

        self.path = str(path)
        self._conn = connect(self.path, check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock, self._conn:
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS token_usage ("
                " session TEXT PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0,"
                " updated TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))"
            )
        # never waits: busy means "use the worker thread" (WAL and the table exist by now)
        self._quick = sqlite3.connect(self.path, timeout=0, check_same_thread=False)
        self._quick.execute("PRAGMA synchronous=NORMAL")
        self._quick.execute("PRAGMA busy_timeout=0")
        self._quick_lock = threading.Lock()

    @staticmethod
    def _add_on(conn: Any, session: str, n: int) -> int:
        with conn:
            row = conn.execute(
                "INSERT INTO token_usage(session, n) VALUES (?, ?) "
                "ON CONFLICT(session) DO UPDATE SET n = n + excluded.n, "
                "updated = strftime('%Y-%m-%dT%H:%M:%fZ','now') RETURNING n",
                (session, n),
            ).fetchone()
        return int(row[0])

    @staticmethod
    def _get_on(conn: Any, session: str) -> int:
        row = conn.execute("SELECT n FROM token_usage WHERE session = ?", (session,)).fetchone()
        return int(row[0]) if row else 0

    def _add(self, session: str, n: int) -> int:
        with self._lock:
            return self._add_on(self._conn, session, n)

    def _get(self, session: str) -> int:
        with self._lock:
            return self._get_on(self._conn, session)

    def _reset(self, session: str) -> None:
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM token_usage WHERE session = ?", (session,))

    def _now(self, op: Any, *args: Any) -> int | None:
        """`op(quick_connection, *args)` if it needs no waiting, else None (nothing was changed:
        a refused upsert is rolled back by its transaction)."""
        import sqlite3

        if not self._quick_lock.acquire(blocking=False):
            return None
        try:
            return int(op(self._quick, *args))
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                return None
            raise
        finally:
            self._quick_lock.release()

    async def add(self, session: str, n: int) -> int:
        total = self._now(self._add_on, session, n)
        return total if total is not None else await asyncio.to_thread(self._add, session, n)

    async def get(self, session: str) -> int:
        total = self._now(self._get_on, session)
        return total if total is not None else await asyncio.to_thread(self._get, session)

    async def reset(self, session: str) -> None:
        await asyncio.to_thread(self._reset, session)

    def close(self) -> None:
        from duckflow.store.sqlite import release

        with self._quick_lock:
            release(self._quick)
        release(self._conn)


class RedisCounter:
    """Totals in Redis (`INCRBY`, atomic across processes). Needs `pip install 'duckflow-agent[redis]'`."""

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", *, prefix: str = "duckflow:tokens:") -> None:
        try:
            import redis.asyncio as aioredis
        except ImportError as exc:
            raise ConfigError(
                "the Redis token counter needs the redis package",
                hint="install it with: .venv/bin/pip install 'duckflow-agent[redis]'",
            ) from exc
        self.url = url
        self.prefix = prefix
        self._client: Any = aioredis.Redis.from_url(url)

    async def add(self, session: str, n: int) -> int:
        return int(await self._client.incrby(self.prefix + session, n))

    async def get(self, session: str) -> int:
        value = await self._client.get(self.prefix + session)
        return int(value) if value is not None else 0

    async def reset(self, session: str) -> None:
        await self._client.delete(self.prefix + session)

    async def aclose(self) -> None:
        await self._client.aclose()


@dataclass(frozen=True)
class TokenStatus:
    total: int
    level: Level
    warn_at: int
    block_at: int

    @property
    def message(self) -> str:
        if self.level == "block":
            return (f"This session has used {self.total:,} tokens, over its limit of "
                    f"{self.block_at:,}; the agent stopped before the next call.")
        if self.level == "warn":
            return (f"This session has used {self.total:,} tokens; it will be stopped at "
                    f"{self.block_at:,}.")
        return f"{self.total:,} tokens used."


class TokenGuard:
    """Counts a session's tokens and says when to warn and when to stop.

    It is not a `Guardrail` subclass (the seed has it as one): a guardrail judges one text,
    while the token guard keeps a running total across model and tool calls and is asked
    before each of them, so the engine calls it at those points instead.
    """

    def __init__(self, *, warn_at: int = 200_000, block_at: int = 400_000,
                 counter: TokenCounter | None = None) -> None:
        if warn_at > block_at:
            raise ConfigError(f"token_guard: warn_at ({warn_at}) is above block_at ({block_at})",
                              hint="set warn_at below block_at")
        self.warn_at = warn_at
        self.block_at = block_at
        self.counter: TokenCounter = counter if counter is not None else MemoryCounter()

    @classmethod
    def from_config(cls, config: TokenGuardConfig | None = None) -> TokenGuard:
        """Build from the `[token_guard]` section: backend memory | sqlite (default) | redis."""
        if config is None:
            from duckflow.config import load_config

            config = load_config().token_guard
        counter: TokenCounter
        if config.backend == "memory":
            counter = MemoryCounter()
        elif config.backend == "redis":
            counter = RedisCounter(config.redis_url or "redis://127.0.0.1:6379/0")
        else:
            from duckflow.paths import duckflow_home

            counter = SQLiteCounter(config.db_path or duckflow_home() / "token_guard.db")
        return cls(warn_at=config.warn_at, block_at=config.block_at, counter=counter)

    def _status(self, total: int) -> TokenStatus:
        level: Level = "block" if total >= self.block_at else "warn" if total >= self.warn_at else "ok"
        return TokenStatus(total, level, self.warn_at, self.block_at)

    async def add(self, session: str, n: int) -> TokenStatus:
        """Add `n` tokens to the session's total and return where it stands."""
        total = await self.counter.add(session, max(0, int(n))) if n > 0 else await self.counter.get(session)
        return self._status(total)

    async def status(self, session: str) -> TokenStatus:
        return self._status(await self.counter.get(session))

    async def check(self, session: str) -> TokenStatus:
        """Raise `TokenBudgetExceeded` when the session is at or over `block_at`."""
        status = await self.status(session)
        if status.level == "block":
            raise TokenBudgetExceeded(
                status.message,
                hint="start a new session, or raise token_guard.block_at in the config",
            )
        return status
