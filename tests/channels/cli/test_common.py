"""The command line agrees with itself: -w/--workspace everywhere, one JSON style, errors on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from duckflow.channels.cli import common
from duckflow.channels.cli.main import COMMANDS, main


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_takes_dash_w(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([name, "-w", str(tmp_path), "--help"])
    assert done.value.code == 0
    assert "-w DIR, --workspace DIR" in capsys.readouterr().out


def test_undo_takes_dash_w(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["undo", "--list", "-w", str(tmp_path), "--json"]) == 0
    assert capsys.readouterr().out == "[]\n"


def test_workspace_check_defaults_to_read_and_takes_dash_w(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    assert main(["workspace", "check", "a.py", "-w", str(tmp_path), "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and json.loads(out)["op"] == "read"  # one compact line
    assert main(["workspace", "check", "a.py", "--root", str(tmp_path)]) == 0  # the old name still works


def test_json_is_one_compact_line_in_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["approvals", "list", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and json.loads(out) == {"pending": 0, "jobs": []}


def test_an_unknown_benchmark_is_said_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "nope"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "unknown benchmark 'nope'" in err


def test_a_benchmark_takes_the_shared_options_after_its_name(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    # `-w DIR` and `--debug` work on every command, also after a benchmark's name
    for tail in (["-w", str(tmp_path)], [f"--workspace={tmp_path}"], ["--debug"]):
        code = main(["bench", "protocols", "--quick", "--json", *tail])
        out, err = capsys.readouterr()
        assert code in (0, 1), err  # 2 would be the parser refusing; 1 a timing bar missed under load
        assert json.loads(out)["tokens"]["actions"] >= 1 and "unrecognized" not in err


def test_ago_and_who_have_one_format() -> None:
    assert [common.ago(1000 - s, now=1000) for s in (5, 180, 7200, 3 * 86400)] == [
        "5 s ago", "3 min ago", "2 h ago", "3 d ago"]
    assert common.who("slack:U1") == "slack:U1" and common.who().startswith("cli:")


def test_input_is_read_strict_or_keeping_every_byte(tmp_path: Path) -> None:
    f = tmp_path / "x.txt"
    f.write_bytes(b"caf\xe9\r\n")
    with pytest.raises(common.DuckflowError, match="not UTF-8"):
        common.read_input(str(f))
    kept = common.read_input(str(f), decode="surrogateescape")
    assert kept.encode("utf-8", "surrogateescape") == b"caf\xe9\r\n"
    with pytest.raises(common.DuckflowError, match="is a folder"):
        common.read_input(str(tmp_path))


def test_bench_security_json_is_one_compact_line(capsys: pytest.CaptureFixture[str]) -> None:
    main(["bench", "security", "--json", "--limit-lines", "2000", "--repeat", "1"])
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "recall" in json.loads(out)["checks"]


def test_a_damaged_state_database_is_named_with_the_next_step(capsys: pytest.CaptureFixture[str]) -> None:
    # a garbage sessions.db / gate.db in DUCKFLOW_HOME was an "internal error ... report it"
    import os

    home = Path(os.environ["DUCKFLOW_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    for name, argv in (("sessions.db", ["sessions"]), ("gate.db", ["approvals", "list"])):
        (home / name).write_bytes(b"\x00garbage, not SQLite" * 200)
        assert main(argv) == 1
        out, err = capsys.readouterr()
        assert f"{home / name} is not a usable database" in err and "mv " in err and "internal error" not in err
