"""Risk rules: kind, path (config, CI, lockfiles, dotfiles, secrets), size, scope, custom tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from duckflow.errors import ConfigError
from duckflow.gate import Gate, GatePolicy, Operation, load_rules, operation_for_tool
from duckflow.gate.risk import path_matches

RULES = load_rules()


def risk(op: Operation, cost_limit: float | None = None) -> str:
    return RULES.assess(op, cost_limit=cost_limit).risk


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        (Operation("read", paths=("src/a.py",)), "low"),
        (Operation("write", paths=("src/a.py",), size=200), "low"),
        (Operation("execute", command="pytest -q"), "medium"),
        (Operation("rename", paths=("a.py", "b.py")), "medium"),
        (Operation("delete", paths=("src/a.py",)), "high"),
        (Operation("push_public", command="git push"), "high"),
        (Operation("brand_new_kind"), "high"),
        (Operation("edit", paths=(".github/workflows/ci.yml",)), "high"),
        (Operation("edit", paths=(".gitlab-ci.yml",)), "high"),
        (Operation("write", paths=("pyproject.toml",)), "medium"),
        (Operation("write", paths=("deploy/app.yaml",)), "medium"),
        (Operation("read", paths=("pyproject.toml",)), "low"),
        (Operation("write", paths=("poetry.lock",)), "medium"),
        (Operation("edit", paths=("package-lock.json",)), "medium"),
        (Operation("write", paths=(".editorconfig",)), "medium"),
        (Operation("mkdir", paths=("src/.cache",)), "medium"),
        (Operation("write", paths=("services/api/.env",)), "high"),
        (Operation("write", paths=("keys/server.pem",)), "high"),
        (Operation("write", paths=("src/a.py",), size=150_000), "medium"),
        (Operation("write", paths=("src/a.py",), size=2_000_000), "high"),
        (Operation("edit", paths=tuple(f"src/m{i}.py" for i in range(5))), "medium"),
        (Operation("edit", paths=tuple(f"src/m{i}.py" for i in range(20))), "high"),
        (Operation("write", paths=("a.txt",), outside_workspace=True), "high"),
        (Operation("write", paths=("run.ps1",), dangerous_extension=True), "high"),
    ],
)
def test_default_risk_table(op: Operation, expected: str) -> None:
    assert risk(op) == expected


def test_cost_over_limit_is_high_only_with_a_limit() -> None:
    op = Operation("write", paths=("a.md",), cost_estimate=3.0)
    assert risk(op) == "low"
    assert risk(op, cost_limit=5.0) == "low"
    assert risk(op, cost_limit=1.0) == "high"


def test_reasons_name_the_rule_and_path() -> None:
    a = RULES.assess(Operation("edit", paths=("src/x.py", ".github/workflows/ci.yml")))
    assert a.risk == "high"
    assert any(r.startswith("ci:") and ".github/workflows/ci.yml" in r for r in a.reasons)
    assert RULES.assess(Operation("write", paths=("src/x.py",))).reasons == ()


def test_path_patterns_match_whole_paths_or_segments() -> None:
    assert path_matches("app/.env", ".env")
    assert path_matches(".github/workflows/x.yml", ".github/workflows/*")
    assert not path_matches("docs/.github/workflows/x.yml", ".github/workflows/*")
    assert not path_matches("src/environment.py", ".env")
    assert not path_matches("./a.py", ".*")


def test_custom_rules_file_adds_rules_and_overrides_kinds(tmp_path: Path) -> None:
    f = tmp_path / "risk.toml"
    f.write_text('[kinds]\nexecute = "high"\n\n[[rule]]\nname = "migrations"\n'
                 'paths = ["migrations/*"]\nrisk = "high"\nreason = "changes the database schema"\n')
    rules = load_rules([f])
    assert rules.assess(Operation("execute", command="ls")).risk == "high"
    a = rules.assess(Operation("write", paths=("migrations/0002.sql",)))
    assert a.risk == "high" and any("database schema" in r for r in a.reasons)
    assert rules.assess(Operation("edit", paths=(".github/workflows/ci.yml",))).risk == "high"


def test_replace_drops_the_default_table(tmp_path: Path) -> None:
    f = tmp_path / "risk.toml"
    f.write_text('replace = true\n[kinds]\ndelete = "medium"\n')
    rules = load_rules([f])
    assert rules.assess(Operation("delete", paths=("a",))).risk == "medium"
    assert rules.assess(Operation("edit", paths=(".github/workflows/ci.yml",))).risk == "high"  # unknown


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[rule]]\nname = "x"\nrisk = "huge"\n', "risk must be low, medium or high"),
        ('[[rule]]\nname = "x"\nrisk = "low"\npath = ["a"]\n', "unknown key"),
        ('[[rule]]\nname = "x"\nrisk = "low"\nflags = ["shiny"]\n', "unknown flag"),
        ("[kinds\n", "not valid TOML"),
    ],
)
def test_broken_rules_file_names_the_problem(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "risk.toml"
    f.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_rules([f])


def test_missing_rules_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_rules([tmp_path / "nope.toml"])


def test_gate_uses_the_configured_rules(tmp_path: Path) -> None:
    from duckflow.config import GateConfig

    f = tmp_path / "risk.toml"
    f.write_text('[[rule]]\nname = "docs"\npaths = ["docs/*"]\nrisk = "high"\nreason = "r"\n')
    policy = GatePolicy.from_config(GateConfig(risk_rules_file=str(f)))
    with Gate(tmp_path / "g.db", policy) as gate:
        assert gate.assess(Operation("write", paths=("docs/a.md",))).risk == "high"


def test_operation_for_tool_maps_workspace_tools() -> None:
    op = operation_for_tool("write_file", {"path": "./docs//a.md", "content": "héllo"}, task_type="design")
    assert (op.kind, op.tool, op.paths, op.size, op.task_type) == (
        "write", "write_file", ("docs/a.md",), 6, "design")
    mv = operation_for_tool("move_path", {"src": "a.py", "dst": "b/a.py"})
    assert mv.kind == "rename" and mv.paths == ("a.py", "b/a.py")
    sh = operation_for_tool("execute_shell", {"command": ["pytest", "-q"]})
    assert sh.kind == "execute" and sh.command == "pytest -q"
    odd = operation_for_tool("mystery_tool", {}, outside_workspace=True)
    assert odd.kind == "execute" and odd.outside_workspace
    assert operation_for_tool("read_file", {"path": "a"}).read_only


def test_path_matching_answers_as_fnmatch_does() -> None:
    """The plain-string shortcuts (`name`, `*.ext`, `prefix*`) give fnmatchcase's answers."""
    import fnmatch
    import itertools

    from duckflow.gate.risk import _matcher

    patterns = [".env", ".env.*", "*.pem", "id_rsa*", ".*", "*", "Makefile", "docker-compose*", ".github/workflows/*",
                "*.tar.gz", "a?c", "[ab]*", "*x*", "", "**.py", "x**"]
    names = ["", ".env", ".env.local", "x.pem", "x.PEM", "id_rsa.pub", "id_rsa", ".github/workflows/ci.yml",
             ".github/workflows/", "Makefile", "makefile", "docker-compose.yml", "abc", "a.tar.gz", "bx", "*", "a*b",
             ".x", "x.py", "dir/x.pem"]
    for pattern, name in itertools.product(patterns, names):
        assert _matcher(pattern)(name) == fnmatch.fnmatchcase(name, pattern), (pattern, name)
