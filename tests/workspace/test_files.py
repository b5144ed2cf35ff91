"""The file tools: reading, writing, editing with hunks, listing with .gitignore, delete, move."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from duckflow.config import WorkspaceConfig
from duckflow.core.tools import Approval, ToolContext
from duckflow.workspace.files import Workspace, WorkspaceError
from duckflow.workspace.guard import ApprovalRequired, PathRefused
from duckflow.workspace.tools import TOOL_NAMES, workspace_tools
from tests.helpers.workspace import outside_untouched


def test_read_file_whole_and_by_line_range(ws: Workspace, root: Path) -> None:
    (root / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    assert ws.read_file("n.txt").count("\n") == 10
    assert ws.read_file("n.txt", 3, 4) == "line 3\nline 4\n"
    assert ws.read_file("n.txt", start_line=9) == "line 9\nline 10\n"
    with pytest.raises(WorkspaceError, match="11 does not exist|has 10 lines"):
        ws.read_file("n.txt", 11, 12)


def test_binary_and_oversized_files_are_not_read(root: Path) -> None:
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (root / "big.txt").write_text("x" * 5000)
    ws = Workspace.open(root, WorkspaceConfig(max_read_bytes=1000))
    with pytest.raises(WorkspaceError, match="binary"):
        ws.read_file("img.png")
    with pytest.raises(WorkspaceError, match="limit"):
        ws.read_file("big.txt")


def test_writes_over_the_size_limit_are_refused(root: Path) -> None:
    ws = Workspace.open(root, WorkspaceConfig(max_write_bytes=10))
    with pytest.raises(WorkspaceError, match="write limit"):
        ws.write_file("a.txt", "x" * 11)
    assert not (root / "a.txt").exists()


def test_edit_with_hunks_and_a_failed_hunk_shows_the_closest_lines(ws: Workspace, root: Path) -> None:
    (root / "m.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    result = ws.edit_file("m.py", "<<<<<<< SEARCH\n    return 2\n=======\n    return 3\n>>>>>>> REPLACE\n")
    assert result["mode"] == "hunks" and result["applied"] == ["exact"]
    assert (root / "m.py").read_text().endswith("return 3\n")
    before = (root / "m.py").read_text()
    with pytest.raises(WorkspaceError) as info:
        ws.edit_file("m.py", "<<<<<<< SEARCH\ndef h():\n    return 1\n=======\nx\n>>>>>>> REPLACE\n")
    assert "return 1" in info.value.message and "def f():" in info.value.message
    assert (root / "m.py").read_text() == before  # nothing half-applied


def test_edit_without_markers_replaces_the_whole_file(ws: Workspace, root: Path) -> None:
    assert ws.edit_file("src/app.py", "print('bye')\n")["mode"] == "whole_file"
    assert (root / "src" / "app.py").read_text() == "print('bye')\n"


def test_list_files_respects_gitignore_and_skips_git_and_state(ws: Workspace, root: Path) -> None:
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    (root / "src" / ".gitignore").write_text("secret_*.py\n")
    for rel in ("debug.log", "build/out.txt", "src/secret_x.py", "src/ok.py", "docs/a.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    ws.write_file("made.txt", "x")  # creates .duckflow/ (checkpoints)
    entries = ws.list_files(".", recursive=True)["entries"]
    assert "src/ok.py" in entries and "docs/a.md" in entries and "src/" in entries
    for hidden in ("debug.log", "build/", "build/out.txt", "src/secret_x.py", ".git/",
                   ".git/config", ".duckflow/"):
        assert hidden not in entries
    assert not any(e.startswith((".git/", ".duckflow/")) for e in entries)
    assert ws.list_files("src", pattern="*.py")["entries"] == ["src/app.py", "src/ok.py"]
    top = ws.list_files(".")["entries"]
    assert "src/" in top and "src/app.py" not in top


def test_delete_needs_recursive_for_a_full_folder_and_protects_nested_git(ws: Workspace,
                                                                          root: Path) -> None:
    with pytest.raises(WorkspaceError, match="recursive"):
        ws.delete_path("src")
    (root / "sub" / ".git").mkdir(parents=True)
    with pytest.raises(PathRefused, match="sub/.git"):
        ws.delete_path("sub", recursive=True)
    (root / "mod" / "deep").mkdir(parents=True)
    (root / "mod" / "deep" / ".git").write_text("gitdir: ../../.git/modules/deep\n")
    with pytest.raises(PathRefused, match="mod/deep/.git"):
        ws.delete_path("mod", recursive=True)
    assert ws.delete_path("src", recursive=True)["deleted"]
    assert not (root / "src").exists()


def test_delete_of_a_link_removes_the_link_not_its_target(ws: Workspace, root: Path) -> None:
    ws.delete_path("inside_link")
    assert not (root / "inside_link").exists() and (root / "src" / "app.py").exists()


def test_move_path_renames_and_refuses_to_overwrite(ws: Workspace, root: Path) -> None:
    (root / "b.txt").write_text("b")
    with pytest.raises(WorkspaceError, match="already exists"):
        ws.move_path("src/app.py", "b.txt")
    ws.move_path("src/app.py", "lib/main.py")
    assert (root / "lib" / "main.py").read_text() == "print('hello')\n"
    with pytest.raises(PathRefused):
        ws.move_path("lib/main.py", "../outside/moved.py")
    with pytest.raises(PathRefused):
        ws.move_path("lib/main.py", ".git/hooks/pre-commit")


def test_dangerous_extension_write_waits_for_approval_in_approve_mode(root: Path) -> None:
    ws = Workspace.open(root, WorkspaceConfig(dangerous_extensions_mode="approve"))
    with pytest.raises(ApprovalRequired):
        ws.write_file("deploy.sh", "echo hi\n")
    assert not (root / "deploy.sh").exists()
    ws.write_file("deploy.sh", "echo hi\n", approved=True)
    assert (root / "deploy.sh").exists()


def test_writes_through_a_link_out_are_refused(ws: Workspace, outside: Path) -> None:
    for path in ("escape/new.txt", "escape/secret.txt", "rel_escape", "chain1/x"):
        with pytest.raises(PathRefused):
            ws.write_file(path, "pwned")
    assert outside_untouched(outside)


async def test_tools_are_engine_tools_with_the_agreed_names(root: Path) -> None:
    tools = {t.name: t for t in workspace_tools(root, WorkspaceConfig(sandbox="none"))}
    assert tuple(tools) == TOOL_NAMES
    assert not tools["read_file"].exclusive and tools["write_file"].exclusive
    assert set(tools["move_path"].json_schema["properties"]) == {"src", "dst", "overwrite"}
    await tools["write_file"].invoke({"path": "t.txt", "content": "hi"}, ToolContext())
    assert await tools["read_file"].invoke({"path": "t.txt"}) == "hi"
    listing = await tools["list_files"].invoke({"path": ".", "pattern": "*.txt"})
    assert listing["entries"] == ["t.txt"]
    found = await tools["search_code"].invoke({"query": "hello"})
    assert found["results"][0]["location"] == "src/app.py:1"


async def test_tool_approval_comes_from_the_context(root: Path) -> None:
    tools = {t.name: t for t in workspace_tools(root, WorkspaceConfig(
        dangerous_extensions_mode="approve", sandbox="none"))}
    with pytest.raises(ApprovalRequired):
        await tools["write_file"].invoke({"path": "a.sh", "content": "x"}, ToolContext())
    ok = ToolContext(approval=Approval(granted=True, by="person:test"))
    await tools["write_file"].invoke({"path": "a.sh", "content": "x"}, ok)
    assert os.path.exists(root / "a.sh")


def test_edit_with_only_an_empty_search_creates_a_missing_file(ws: Workspace, root: Path) -> None:
    ws.edit_file("fresh.py", "<<<<<<< SEARCH\n=======\nx = 1\n>>>>>>> REPLACE\n")
    assert (root / "fresh.py").read_text() == "x = 1\n"
    with pytest.raises(WorkspaceError, match="cannot edit"):
        ws.edit_file("missing.py", "<<<<<<< SEARCH\ny\n=======\nx = 1\n>>>>>>> REPLACE\n")


def test_package_exports_are_lazy() -> None:
    import duckflow.workspace as pkg

    assert pkg.WorkspaceGuard.__name__ == "WorkspaceGuard"
    with pytest.raises(AttributeError):
        _ = pkg.NoSuchThing  # type: ignore[attr-defined]


async def test_tools_of_two_workspaces_share_their_schemas_but_each_writes_only_its_own(tmp_path: Path) -> None:
    """A server opens a session's tools per workspace many times: the arguments models and specs
    are built once and shared; each tool still runs its own workspace's function."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    ta, tb = workspace_tools(a), workspace_tools(b)
    assert [t.name for t in ta] == [t.name for t in tb] == list(TOOL_NAMES)
    for x, y in zip(ta, tb, strict=True):
        assert x.args_model is y.args_model and x.spec is y.spec and x.fn is not y.fn
        assert x.exclusive == y.exclusive and x.params == y.params and x.context_param == y.context_param
    write_b = next(t for t in tb if t.name == "write_file")
    assert write_b.exclusive and not next(t for t in tb if t.name == "read_file").exclusive
    await write_b.invoke({"path": "x.txt", "content": "only b"}, ToolContext())
    assert (b / "x.txt").read_text() == "only b" and not (a / "x.txt").exists()
    read_a = next(t for t in ta if t.name == "read_file")
    with pytest.raises(WorkspaceError):
        await read_a.invoke({"path": "x.txt"}, ToolContext())
    assert write_b.spec.parameters["required"] == ["path", "content"]
