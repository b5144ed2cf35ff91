"""The MCP server itself: the workspace tools and `duckflow_task` registered with the official SDK's
MCPServer, over stdio (the default: what Claude Code and Codex start) or streamable HTTP bound to
127.0.0.1 only. Each tool says its kind in its annotations (readOnlyHint / destructiveHint), so
a client that asks before changing tools (Duckflow itself, Claude Code) asks for the right ones.
Standard output carries protocol messages only; logs go to stderr."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Any

from duckflow.channels.mcpserve.service import WorkspaceService
from duckflow.errors import DuckflowError

INSTRUCTIONS = ("Duckflow's workspace tools for one folder. Reads run at once; a change or a command passes "
                "Duckflow's approval gate: when a person must approve it, the answer names a job; after "
                "they approve it (duckflow approvals grant JOB), call duckflow_approved to run it. "
                "duckflow_task hands a whole task to Duckflow's own coding companion.")


def build(service: WorkspaceService) -> Any:
    """The MCPServer with every tool bound to `service`."""
    from mcp.server import MCPServer
    from mcp_types import ToolAnnotations

    server = MCPServer("duckflow", instructions=INSTRUCTIONS, log_level="WARNING")  # no access log lines
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    undoable = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    destructive = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

    async def read_file(path: str, start_line: int | None = None, end_line: int | None = None) -> str:
        """Read a text file of the workspace, whole or a range of lines (1-based, inclusive)."""
        return await service.call("read_file", _given(path=path, start_line=start_line, end_line=end_line))

    async def list_files(path: str = ".", pattern: str | None = None, recursive: bool = False) -> str:
        """List files and folders (folders end with '/'); .gitignore'd paths are left out."""
        return await service.call("list_files", _given(path=path, pattern=pattern, recursive=recursive))

    async def search_code(query: str, limit: int = 20) -> str:
        """Search the workspace's code for a word or a phrase."""
        return await service.call("search_code", _given(query=query, limit=limit))

    async def write_file(path: str, content: str) -> str:
        """Create or replace a file (after Duckflow's approval gate; undoable with `duckflow undo`)."""
        return await service.call("write_file", _given(path=path, content=content))

    async def edit_file(path: str, content: str) -> str:
        """Change a file with SEARCH/REPLACE blocks, or replace it whole (after the approval gate)."""
        return await service.call("edit_file", _given(path=path, content=content))

    async def delete_path(path: str, recursive: bool = False) -> str:
        """Delete a file or a folder (after the approval gate; a person decides; undoable)."""
        return await service.call("delete_path", _given(path=path, recursive=recursive))

    async def execute_shell(command: str) -> str:
        """Run a command in the workspace, in Duckflow's sandbox, after the approval gate."""
        return await service.call("execute_shell", _given(command=command))

    async def run_tests(command: str | None = None) -> str:
        """Run the tests (the workspace's test command, or `command`), in the sandbox, after the gate."""
        return await service.call("run_tests", _given(command=command))

    async def duckflow_approved(job_id: str) -> str:
        """Run a change that a person approved with `duckflow approvals grant JOB` (exactly that change)."""
        return await service.approved(job_id)

    async def duckflow_task(task: str) -> str:
        """Hand a coding task to Duckflow's companion; it works in the workspace, asks a person before
        changing files, and answers with what it did. Call again with "continue" after an approval."""
        return await service.task(task)

    for fn, hints in ((read_file, reads), (list_files, reads), (search_code, reads), (write_file, undoable),
                      (edit_file, undoable), (delete_path, destructive), (execute_shell, destructive),
                      (run_tests, destructive), (duckflow_approved, destructive), (duckflow_task, destructive)):
        server.add_tool(_answer(fn), annotations=hints, structured_output=False)
    return server


def _answer(fn: Any) -> Any:
    """The tool with a DuckflowError said to the calling agent as the tool's error, in one line
    (the SDK's ToolError: is_error with the message, no traceback in the log)."""
    import functools

    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(fn)
    async def run(*args: Any, **kwargs: Any) -> str:
        try:
            return str(await fn(*args, **kwargs))
        except DuckflowError as exc:
            raise ToolError(exc.message + (f" (next: {exc.hint})" if exc.hint else "")) from None

    return run


def _given(**arguments: Any) -> dict[str, Any]:
    return {k: v for k, v in arguments.items() if v is not None}


def serve(workspace: Path, *, http_port: int | None = None, model: str | None = None) -> int:
    """Run until the client goes (stdio) or Ctrl-C (HTTP)."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise DuckflowError("`duckflow mcp serve` needs the MCP SDK",
                            hint="pip install 'duckflow-agent[mcp]'") from None
    root = Path(workspace).expanduser().resolve()
    if not root.is_dir():
        raise DuckflowError(f"workspace {root} is not a folder", hint="pass an existing folder with -w DIR")
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    service = WorkspaceService(root, model_name=model)
    try:
        server = build(service)
        if http_port is None:
            asyncio.run(server.run_stdio_async())
        else:
            print(f"duckflow mcp serve: {root} on http://127.0.0.1:{http_port}/mcp", file=sys.stderr, flush=True)
            asyncio.run(server.run_streamable_http_async(host="127.0.0.1", port=http_port))
    except KeyboardInterrupt:
        pass
    finally:
        service.close()
    return 0
