"""`duckflow protocol parse` reads a reply exactly as written: CRLF kept, offsets into the raw text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main


def test_dml_offsets_point_into_the_raw_crlf_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = "Thought: read it\r\nAction: 🦆▶️[T:read_file|src/app.py]◀️🦆\r\n"
    f = tmp_path / "reply.dml"
    f.write_bytes(raw.encode())
    assert main(["protocol", "parse", "--protocol", "dml", str(f)]) == 0
    macro = json.loads(capsys.readouterr().out)["macros"][0]
    assert raw[macro["start"]:macro["end"]] == macro["raw"]
    assert macro["raw"].startswith("🦆") and macro["args"] == ["src/app.py"]


def test_symops_crlf_reply_is_repaired_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "reply.symops"
    f.write_bytes(b"~ add it\r\n$ create @ a.py\r\n--\r\nprint(1)\r\n--\r\n")
    main(["protocol", "parse", "--protocol", "symops", str(f)])
    out = json.loads(capsys.readouterr().out)
    assert out["actions"][0]["content"] == "print(1)" and out["actions"][0]["executable"]
    assert out["stage"] == "repaired" and out["repairs"]


def test_stdin_is_read_as_bytes_too() -> None:
    raw = "$ run @ pytest -q\r\n".encode()
    proc = subprocess.run([sys.executable, "-m", "duckflow", "protocol", "parse", "--protocol", "symops", "-"],
                          input=raw, capture_output=True, timeout=60)
    out = json.loads(proc.stdout)
    assert out["actions"][0]["path"] == "pytest -q" and out["repairs"]


def test_a_file_that_is_not_utf8_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "reply.symops"
    f.write_bytes(b"$ create @ a.py\n--\n\xff\xfe\n--\n")
    assert main(["protocol", "parse", "--protocol", "symops", str(f)]) != 0
    assert "not UTF-8" in capsys.readouterr().err
