"""The workspace tools as engine Tools: files, shell, tests and code search, behind the guard.

`workspace_tools(root)` returns the ten tools of seed 002's tool set, bound to one workspace.
Argument order follows DML's positional form (`list_files|src|*.py|true`).

Approval: the guard marks some operations as needing a person's approval (a dangerous
extension in "approve" mode, a destructive shell command). The gate asks; when a person
said yes it calls the tool with a granted `ToolContext.approval` (core's typed `Approval`).
Without it such a call is refused (file tools) or not run (shell tools). Who answered the
gate (`approval.by`: `person:...` or `auto:...`) is returned in the result's `approval`; an
`auto:` approval never counts as a person's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duckflow.core.tools import Tool, ToolContext
from duckflow.toolkinds import MUTATING, kind_of
from duckflow.workspace import shell
from duckflow.workspace.files import Workspace
from duckflow.workspace.search import search_code as _search_code

if TYPE_CHECKING:
    from duckflow.config import WorkspaceConfig

TOOL_NAMES = ("read_file", "write_file", "edit_file", "list_files", "create_directory",
              "delete_path", "move_path", "execute_shell", "run_tests", "search_code")
def _approved(ctx: ToolContext | None) -> bool:
    """True only for a person's approval: an auto-approval never unlocks what needs a person."""
    return ctx is not None and ctx.approval is not None and ctx.approval.by_person


def _readonly(ctx: ToolContext | None) -> tuple[str, ...]:
    return ctx.approval.readonly if ctx is not None and ctx.approval is not None else ()


def _staging(ctx: ToolContext | None) -> str:
    return ctx.approval.staging if ctx is not None and ctx.approval is not None else ""


def _marked(result: dict[str, Any], ctx: ToolContext | None) -> dict[str, Any]:
    """The result with `approval` (who answered the gate) when the call passed one."""
    by = ctx.approval.by if ctx is not None and ctx.approval is not None else ""
    return {**result, "approval": by} if by else result


def workspace_tools(root: str | Path | Workspace, config: WorkspaceConfig | None = None) -> list[Tool]:
    """The ten workspace tools bound to `root` (a folder or an open `Workspace`)."""
    ws = root if isinstance(root, Workspace) else Workspace.open(root, config)

    async def read_file(path: str, start_line: int | None = None,
                        end_line: int | None = None) -> str:
        """Read a text file of the workspace, whole or a range of lines.

        Args:
            path: the file, relative to the workspace root
            start_line: first line to return (1-based); omit for the start
            end_line: last line to return (inclusive); omit for the end
        """
        return await asyncio.to_thread(ws.read_file, path, start_line, end_line)

    async def write_file(path: str, content: str, ctx: ToolContext) -> dict[str, Any]:
        """Create or replace a file with the given content (parent folders are created).

        Args:
            path: the file, relative to the workspace root
            content: the complete new content of the file
        """
        return _marked(await asyncio.to_thread(ws.write_file, path, content,
                                               approved=_approved(ctx)), ctx)

    async def edit_file(path: str, content: str, ctx: ToolContext) -> dict[str, Any]:
        """Change a file: SEARCH/REPLACE blocks edit parts of it; plain text replaces it whole.

        Args:
            path: the file, relative to the workspace root
            content: one or more `<<<<<<< SEARCH` / `=======` / `>>>>>>> REPLACE` blocks, or the whole new content
        """
        return _marked(await asyncio.to_thread(ws.edit_file, path, content,
                                               approved=_approved(ctx)), ctx)

    async def list_files(path: str = ".", pattern: str | None = None,
                         recursive: bool = False) -> dict[str, Any]:
        """List files and folders (folders end with '/'); .gitignore'd paths are left out.

        Args:
            path: the folder to list, relative to the workspace root
            pattern: a glob such as '*.py' (matched on names, or on paths when it has a '/')
            recursive: also list everything below the folder
        """
        return await asyncio.to_thread(ws.list_files, path, pattern, recursive)

    async def create_directory(path: str, ctx: ToolContext | None = None) -> dict[str, Any]:
        """Create a folder (and its missing parents).

        Args:
            path: the folder, relative to the workspace root
        """
        return _marked(await asyncio.to_thread(ws.create_directory, path), ctx)

    async def delete_path(path: str, recursive: bool = False,
                          ctx: ToolContext | None = None) -> dict[str, Any]:
        """Delete a file, or a folder (a non-empty one only with recursive=true). Undoable.

        Args:
            path: what to delete, relative to the workspace root
            recursive: allow deleting a folder with everything in it
        """
        return _marked(await asyncio.to_thread(ws.delete_path, path, recursive), ctx)

    async def move_path(src: str, dst: str, overwrite: bool = False,
                        ctx: ToolContext | None = None) -> dict[str, Any]:
        """Move or rename a file or folder inside the workspace. Undoable.

        Args:
            src: what to move, relative to the workspace root
            dst: the new path, relative to the workspace root
            overwrite: replace dst when it exists
        """
        return _marked(await asyncio.to_thread(ws.move_path, src, dst, overwrite,
                                               approved=_approved(ctx)), ctx)

    async def execute_shell(command: str, timeout: float | None = None,
                            ctx: ToolContext | None = None) -> dict[str, Any]:
        """Run a shell command in the workspace (no stdin, no network when sandboxed).

        Args:
            command: the command line, run with /bin/sh -c
            timeout: seconds before the command and its children are killed (default 60, max 600)
        """
        result = await shell.execute_shell(ws.root, ws.config, command, timeout,
                                           approved=_approved(ctx), readonly=_readonly(ctx),
                                           staging=_staging(ctx))
        return _marked(result.to_dict(), ctx)

    async def run_tests(command: str | None = None, timeout: float | None = None,
                        ctx: ToolContext | None = None) -> dict[str, Any]:
        """Run the project's tests (pytest, npm, cargo, go or make are detected).

        Args:
            command: the test command to run instead of the detected one
            timeout: seconds before the tests are killed (default 60, max 600)
        """
        result = await shell.run_tests(ws.root, ws.config, command, timeout,
                                       approved=_approved(ctx), readonly=_readonly(ctx),
                                           staging=_staging(ctx))
        return _marked(result.to_dict(), ctx)

    async def search_code(query: str, limit: int = 20) -> dict[str, Any]:
        """Search the workspace's code (BM25 ranking); returns file:line locations and lines.

        Args:
            query: words, identifiers or a phrase to look for
            limit: how many results at most
        """
        return await asyncio.to_thread(_search_code, ws.root, query, max(1, min(limit, 100)),
                                       max_file_bytes=ws.config.search_max_file_bytes)

    fns: list[Callable[..., Any]] = [read_file, write_file, edit_file, list_files, create_directory, delete_path,
           move_path, execute_shell, run_tests, search_code]
    return [_bound(fn, fn.__name__ in MUTATING) for fn in fns]  # (each one's kind: toolkinds.KINDS)


# per tool name, the Tool first built from it: its arguments model, JSON schema and spec depend
# only on the function's code and defaults, which every workspace's closure shares, so a server
# with many sessions builds them once (pydantic's create_model and schema are ~1 ms a tool)
_BUILT: dict[str, Tool] = {}


def _bound(fn: Callable[..., Any], exclusive: bool) -> Tool:
    """`Tool.from_function(fn, exclusive=...)`, reusing what an earlier closure of the same code built."""
    import dataclasses

    first = _BUILT.get(fn.__name__)
    if (first is None or first.fn.__code__ is not fn.__code__ or first.exclusive != exclusive
            or first.fn.__defaults__ != fn.__defaults__ or first.fn.__kwdefaults__ != fn.__kwdefaults__):
        first = _BUILT[fn.__name__] = Tool.from_function(fn, exclusive=exclusive, kind=kind_of(fn.__name__))
        first.spec  # noqa: B018  (built once here; the copies below share it)
        return first
    tool = dataclasses.replace(first, fn=fn)
    tool.__dict__["json_schema"] = first.json_schema  # cached_property values: shared, never changed
    tool.__dict__["spec"] = first.spec
    return tool
