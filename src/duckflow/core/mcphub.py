"""Connections to MCP servers, held on one background event loop; their tools as engine Tools.

`McpHub(servers)` starts nothing until `tools()` (or `await start()`) is asked: then every
enabled server starts at once (stdio: its command as a subprocess; a URL: streamable HTTP), each
within its `startup_timeout_sec`. A server that does not start is one line in `problems` and
offers no tools; the others go on. Each tool call runs on the hub's loop (any caller's loop or
thread may await it), within `tool_timeout_sec`; its result is text, cut at `max_output_chars`.
A connection lives in one task from start to `close()` (the SDK's streams belong to the task that
opened them), so it can be called from any event loop of the process: `duckflow run`, the server
and an ACP agent alike. The official `mcp` SDK is imported here only, on first start: without a
server nothing of it is loaded (`pip install 'duckflow-agent[mcp]'`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import tempfile
import threading
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from duckflow.core.mcptools import McpToolError, make_tools, result_text
from duckflow.core.tools import Tool

T = TypeVar("T")
CLOSE_WAIT_S = 5.0


def one_line(exc: BaseException) -> str:
    """An exception in one line: the first leaf of an exception group, its type and message."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]


class McpHub:
    def __init__(self, servers: Mapping[str, Any], *, cwd: str | None = None) -> None:
        self.servers = {name: cfg for name, cfg in servers.items() if getattr(cfg, "enabled", True)}
        self.cwd = cwd
        self.problems: list[str] = []
        self._tools: list[Tool] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._clients: dict[str, Any] = {}
        self._stops: dict[str, asyncio.Event] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._errlogs: dict[str, Any] = {}
        self._lock = threading.Lock()

    # -- the loop -----------------------------------------------------------------------
    def _submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="duckflow-mcp", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def tools(self) -> list[Tool]:
        """Every server's tools (the servers start on the first ask; blocks until each started
        or timed out). Do not call from the hub's own loop."""
        if self._tools is None:
            self._tools = self._submit(self._start_all()).result()
        return list(self._tools)

    async def start(self) -> list[Tool]:
        """`tools()` for a caller on an event loop (its loop is not blocked)."""
        if self._tools is None:
            self._tools = await asyncio.wrap_future(self._submit(self._start_all()))
        return list(self._tools)

    def close(self) -> None:
        """Stop every server (a stdio server's process ends) and the loop."""
        loop = self._loop
        if loop is None:
            return
        try:
            self._submit(self._stop_all()).result(timeout=CLOSE_WAIT_S + 1)
        except Exception:  # a server that will not stop: the daemon thread goes with the process
            pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=2)
        for log in self._errlogs.values():
            log.close()
        self._loop = None

    # -- on the hub's loop ---------------------------------------------------------------
    async def _start_all(self) -> list[Tool]:
        found = await asyncio.gather(*(self._start(name, cfg) for name, cfg in self.servers.items()))
        return [t for tools in found for t in tools]

    async def _start(self, name: str, cfg: Any) -> list[Tool]:
        ready: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        stop = self._stops[name] = asyncio.Event()
        self._tasks[name] = asyncio.create_task(self._hold(name, cfg, ready, stop))
        try:
            listed = await asyncio.wait_for(asyncio.shield(ready), cfg.startup_timeout_sec)
        except TimeoutError:
            stop.set()
            self._tasks[name].cancel()
            self.problems.append(f"MCP server '{name}' did not start within {cfg.startup_timeout_sec:g} s; "
                                 "its tools are not available")
            return []
        except FileNotFoundError:
            self.problems.append(f"MCP server '{name}' did not start: there is no command {cfg.command!r} "
                                 "(install it, or fix `command` in its [mcp_servers] entry)")
            return []
        except Exception as exc:
            said = self._stderr_tail(name)
            self.problems.append(f"MCP server '{name}' did not start: {one_line(exc)}"
                                 + (f" ({said})" if said else ""))
            return []

        async def call(remote: str, args: dict[str, Any]) -> str:
            return await self.call(name, remote, args)

        return make_tools(name, cfg, listed, self.problems, call)

    async def _hold(self, name: str, cfg: Any, ready: asyncio.Future[list[Any]], stop: asyncio.Event) -> None:
        try:
            from mcp import Client
        except ImportError:
            ready.set_exception(RuntimeError("the MCP SDK is not installed: pip install 'duckflow-agent[mcp]'"))
            return
        try:
            async with Client(self._target(name, cfg), read_timeout_seconds=cfg.tool_timeout_sec) as client:
                listed: list[Any] = []
                cursor = None
                while True:  # every page, within the startup timeout
                    page = await client.list_tools(cursor=cursor)
                    listed.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor or len(listed) > 1000:
                        break
                self._clients[name] = client
                ready.set_result(listed)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(one_line(exc)))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._clients.pop(name, None)

    def _target(self, name: str, cfg: Any) -> Any:
        if cfg.url:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            headers = dict(cfg.headers)
            if cfg.bearer_token_env_var and os.environ.get(cfg.bearer_token_env_var):
                headers["Authorization"] = f"Bearer {os.environ[cfg.bearer_token_env_var]}"
            return streamable_http_client(cfg.url, http_client=create_mcp_http_client(headers=headers))
        from mcp.client.stdio import StdioServerParameters, stdio_client

        log = self._errlogs[name] = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
        params = StdioServerParameters(command=cfg.command, args=list(cfg.args), env=dict(cfg.env) or None,
                                       cwd=cfg.cwd or self.cwd)
        return stdio_client(params, errlog=log)

    def _stderr_tail(self, name: str) -> str:
        """The last line the server wrote to stderr (why it failed, usually)."""
        log = self._errlogs.get(name)
        if log is None:
            return ""
        try:
            log.seek(0)
            lines = [line.strip() for line in log.read()[-4000:].splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        return lines[-1][:200] if lines else ""

    async def call(self, server: str, tool: str, args: dict[str, Any]) -> str:
        """Call `tool` on `server` from any loop; the text result, or McpToolError in one line."""
        if asyncio.get_running_loop() is not self._loop:
            return await asyncio.wrap_future(self._submit(self.call(server, tool, args)))
        cfg = self.servers[server]
        client = self._clients.get(server)
        if client is None:
            said = self._stderr_tail(server)
            raise McpToolError(f"MCP server '{server}' is not running" + (f" ({said})" if said else ""))
        try:
            result = await asyncio.wait_for(client.call_tool(tool, args), cfg.tool_timeout_sec)
        except TimeoutError:
            raise McpToolError(f"MCP tool {tool} (server {server}) did not answer within "
                               f"{cfg.tool_timeout_sec:g} s") from None
        except McpToolError:
            raise
        except Exception as exc:
            raise McpToolError(f"MCP tool {tool} (server {server}) failed or sent a malformed "
                               f"answer: {one_line(exc)}") from None
        return result_text(server, tool, result, cfg.max_output_chars)

    async def _stop_all(self) -> None:
        for stop in self._stops.values():
            stop.set()
        tasks = [t for t in self._tasks.values() if not t.done()]
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=CLOSE_WAIT_S)
            for task in late:
                task.cancel()
