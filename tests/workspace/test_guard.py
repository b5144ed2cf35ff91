"""The guard refuses every path that reaches outside the workspace, and says why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from duckflow.config import WorkspaceConfig
from duckflow.errors import DuckflowError
from duckflow.workspace.files import Workspace
from duckflow.workspace.guard import ApprovalRequired, PathRefused, WorkspaceGuard
from tests.helpers.workspace import SECRET, outside_untouched


def _inside(path: Path, root: Path) -> bool:
    real = os.path.realpath(path)
    return real == str(root) or real.startswith(str(root) + os.sep)


@pytest.mark.parametrize(("path", "code"), [
    ("../outside/secret.txt", "dotdot_escape"),
    ("src/../../outside/secret.txt", "dotdot_escape"),
    ("/etc/passwd", "outside_workspace"),
    ("/proc/self/root/etc/passwd", "outside_workspace"),
    ("~/.ssh/id_rsa", "home"),
    ("~root/.bashrc", "home"),
    ("escape/secret.txt", "symlink_outside"),
    ("rel_escape", "symlink_outside"),
    ("chain1/secret.txt", "symlink_outside"),
    ("loop_a", "symlink_loop"),
    ("pipe", "special_file"),
    ("a\x00b", "nul_byte"),
    ("a\nb", "control_char"),
    ("a\u202egnp.exe", "unicode_format"),
    ("..\\..\\outside", "backslash"),
    ("C:\\Windows\\system.ini", "backslash"),
    ("C:/Windows/system.ini", "drive_letter"),
    ("\uff0e\uff0e\uff0foutside", "unicode_lookalike"),
    ("$HOME/.ssh", "shell_expansion"),
    ("x" * 300, "name_too_long"),
    ("/".join(["d"] * 2100), "path_too_long"),
    ("", "empty"),
    ("src/app.py/", "not_a_directory"),
    ("..\u2215..\u2215outside", "unicode_lookalike"),
    ("\u2025/outside", "unicode_lookalike"),
    (".. /outside", "dotdot_escape"),
    ("src/\u200b../x", "unicode_format"),
    ("//etc/passwd", "outside_workspace"),
    ("/", "outside_workspace"),
    ("file:///etc/passwd", "url"),
])
def test_attack_paths_are_refused_for_every_operation(root: Path, path: str, code: str) -> None:
    guard = WorkspaceGuard(root)
    for op in ("read", "write", "delete", "execute"):
        verdict = guard.check(path, op)
        assert not verdict.allowed, (path, op)
        assert verdict.code == code, (path, op, verdict)


def test_absolute_path_of_the_outside_folder_is_refused(root: Path, outside: Path) -> None:
    verdict = WorkspaceGuard(root).check(str(outside / "secret.txt"), "read")
    assert (verdict.allowed, verdict.code) == (False, "outside_workspace")


@pytest.mark.parametrize("path", [".gitignore", ".github/workflows/ci.yml", "..hidden",
                                  "a..b/c", "file~", "日本語 ファイル.txt", "x/....", "a:b:c",
                                  "src/app.py", "./src//app.py", "src/../src/app.py",
                                  "inside_link/app.py", "....//x", "%2e%2e%2fetc", "new/dir/f.py"])
def test_paths_that_stay_inside_are_allowed(root: Path, path: str) -> None:
    verdict = WorkspaceGuard(root).check(path, "read")
    assert verdict.allowed and verdict.code == "ok"
    assert verdict.resolved is not None and _inside(verdict.resolved, root)


def test_absolute_path_inside_and_links_resolve_to_the_real_file(root: Path) -> None:
    guard = WorkspaceGuard(root)
    assert guard.resolve(str(root / "src" / "app.py"), "read") == root / "src" / "app.py"
    assert guard.resolve("inside_link/app.py", "write") == root / "src" / "app.py"


def test_root_itself_can_be_read_but_not_written_or_deleted(root: Path) -> None:
    guard = WorkspaceGuard(root)
    assert guard.check(".", "read").allowed
    for path in (".", "./", str(root), str(root) + "/", "src/.."):
        assert guard.check(path, "delete").code == "workspace_root"
        assert guard.check(path, "write").code == "workspace_root"


@pytest.mark.parametrize("path", [".git/config", ".git/hooks/pre-commit", ".GIT/config",
                                  ".git./config", ".duckflow/checkpoints/index.db",
                                  "sub/.git/HEAD", "GIT~1/config"])
def test_git_and_state_folders_are_read_only(root: Path, path: str) -> None:
    guard = WorkspaceGuard(root)
    assert guard.check(path, "write").code == "protected"
    assert guard.check(path, "delete").code == "protected"
    assert guard.check(".git/config", "read").allowed


def test_a_link_to_git_is_read_only_too(root: Path) -> None:
    os.symlink(".git", root / "g")
    assert WorkspaceGuard(root).check("g/config", "write").code == "protected"


@pytest.mark.parametrize("name", ["run.sh", "RUN.SH", "x.exe", "x.bat", "x.ps1", "x.sh.",
                                  "x.sh ", "x.ｓｈ", "x.exe:stream"])
def test_dangerous_extensions_are_refused_for_writing(root: Path, name: str) -> None:
    verdict = WorkspaceGuard(root).check(name, "write")
    assert (verdict.allowed, verdict.code) == (False, "dangerous_extension")
    assert WorkspaceGuard(root).check(name, "read").allowed


def test_dangerous_extensions_need_approval_in_approve_mode(root: Path) -> None:
    guard = WorkspaceGuard(root, WorkspaceConfig(dangerous_extensions_mode="approve"))
    verdict = guard.check("deploy.sh", "write")
    assert verdict.allowed and verdict.needs_approval and verdict.code == "dangerous_extension"
    with pytest.raises(ApprovalRequired):
        guard.resolve("deploy.sh", "write")
    assert guard.resolve("deploy.sh", "write", approved=True) == root / "deploy.sh"


def test_configured_extensions_replace_the_defaults(root: Path) -> None:
    guard = WorkspaceGuard(root, WorkspaceConfig(dangerous_extensions=[".py"]))
    assert guard.check("a.py", "write").code == "dangerous_extension"
    assert guard.check("a.sh", "write").allowed


def test_resolve_raises_path_refused_with_the_verdict(root: Path) -> None:
    with pytest.raises(PathRefused) as info:
        WorkspaceGuard(root).resolve("../x", "read")
    assert info.value.verdict.code == "dotdot_escape"
    assert info.value.exit_code == 3


def test_deleting_a_link_that_points_outside_is_refused(root: Path, outside: Path) -> None:
    assert WorkspaceGuard(root).check("escape", "delete").code == "symlink_outside"
    assert outside_untouched(outside)


# ------------------------------------------------------------------ property tests
_PIECES = ["..", ".", "", "~", "src", "app.py", "escape", "rel_escape", "chain1", "inside_link",
           "loop_a", "....", "%2e%2e", "\uff0e\uff0e", "\u2025", "..\\", "proc", "self", "root",
           "etc", "passwd", "secret.txt", "outside", "\x00", "\t", " ", ".git", "x.sh"]


def _hostile_paths() -> st.SearchStrategy[str]:
    parts = st.lists(st.sampled_from(_PIECES) | st.text(max_size=6), min_size=1, max_size=8)
    return st.builds(lambda lead, ps, trail: lead + "/".join(ps) + trail,
                     st.sampled_from(["", "/", "./", "../", "//", "/proc/self/root/"]),
                     parts, st.sampled_from(["", "/", "/."]))


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=_hostile_paths(), op=st.sampled_from(["read", "write", "delete", "execute"]))
def test_no_generated_path_resolves_outside_the_root(root: Path, outside: Path, path: str,
                                                     op: str) -> None:
    verdict = WorkspaceGuard(root).check(path, op)  # type: ignore[arg-type]
    if verdict.allowed:
        assert verdict.resolved is not None
        assert _inside(verdict.resolved, root), (path, verdict)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=_hostile_paths())
def test_no_generated_path_reads_or_writes_the_outside(ws: Workspace, outside: Path,
                                                       path: str) -> None:
    try:
        text = ws.read_file(path)
    except (DuckflowError, OSError):
        text = ""
    assert SECRET not in text
    try:
        ws.write_file(path.rstrip("/") + "_w", "payload")
    except (DuckflowError, OSError):
        pass
    assert outside_untouched(outside)


def test_link_chains_are_bounded_and_absolute_targets_cannot_climb(root: Path) -> None:
    for i in range(45):
        os.symlink(f"hop{i + 1}", root / f"hop{i}")
    (root / "hop45").write_text("end")
    assert WorkspaceGuard(root).check("hop0", "read").code == "symlink_loop"
    assert WorkspaceGuard(root).check("hop10", "read").allowed  # 35 hops: within the limit
    os.symlink(f"{root}/../outside/secret.txt", root / "climb")
    assert WorkspaceGuard(root).check("climb", "read").code == "symlink_outside"
    os.symlink(f"{root}/src", root / "abs_inside")
    assert WorkspaceGuard(root).resolve("abs_inside/app.py", "read") == root / "src" / "app.py"


def test_a_dangling_link_out_cannot_be_written_through(root: Path, outside: Path) -> None:
    os.symlink(outside / "created-by-attack.txt", root / "dangling")
    assert WorkspaceGuard(root).check("dangling", "write").code == "symlink_outside"
    assert outside_untouched(outside)


_TARGETS = ["..", "../..", "../outside", "a", "a/b", "../ws/a", "/", "{root}", "{root}/a",
            "{root}/..", "{outside}", "l0", "l1", "l2", "a/../..", "./a/./b", "b/../../.."]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(links=st.lists(st.tuples(st.sampled_from(["l0", "l1", "l2", "a/l3", "a/b/l4"]),
                                st.sampled_from(_TARGETS)), min_size=1, max_size=5,
                      unique_by=lambda t: t[0]),
       path=st.lists(st.sampled_from(["l0", "l1", "l2", "l3", "l4", "a", "b", "..", ".", "x"]),
                     min_size=1, max_size=6).map("/".join),
       op=st.sampled_from(["read", "write", "delete", "execute"]))
def test_random_symlink_farms_never_resolve_outside(tmp_path_factory: pytest.TempPathFactory,
                                                    links: list[tuple[str, str]], path: str,
                                                    op: str) -> None:
    base = tmp_path_factory.mktemp("farm")
    root, outside = base / "ws", base / "outside"
    (root / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    for name, target in links:
        os.symlink(target.format(root=root, outside=outside), root / name)
    verdict = WorkspaceGuard(root).check(path, op)  # type: ignore[arg-type]
    if verdict.allowed:
        assert verdict.resolved is not None and _inside(verdict.resolved, root), (links, path)


def test_a_folder_moved_out_after_it_was_opened_is_noticed(root: Path, outside: Path) -> None:
    guard = WorkspaceGuard(root)
    fd = os.open(root / "src", os.O_RDONLY | os.O_DIRECTORY)
    try:
        guard._still_inside(fd)  # still inside: no error
        os.rename(root / "src", outside / "src")
        with pytest.raises(Exception, match="moved out"):
            guard._still_inside(fd)
    finally:
        os.close(fd)
