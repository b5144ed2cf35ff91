"""`duckflow protocol parse|render|repair|prompt` as a person calls it; replies are read exactly as written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from duckflow.channels.cli.main import main

SYMOPS_KEYS = {"ok", "stage", "confidence", "thoughts", "vitals", "actions", "questions", "errors",
               "repairs", "warnings"}  # fmt: skip
ACTION_KEYS = {"type", "verb", "path", "content", "depends_on", "confidence", "executable", "hunks"}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_parse_prints_one_json_object_with_exact_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "r.symops"
    f.write_text("~ go\n$ write @ a.py\n--\nx = 1\n--\n$ run @ pytest\n", encoding="utf-8")
    rc, out, _ = _run(capsys, "protocol", "parse", "--protocol", "symops", str(f))
    assert rc == 0
    data = json.loads(out)
    assert set(data) == SYMOPS_KEYS
    assert set(data["vitals"]) == {"confidence", "mood", "focus", "stamina"}
    assert all(set(a) == ACTION_KEYS for a in data["actions"])
    assert data["actions"][0]["type"] == "create" and data["actions"][0]["verb"] == "write"
    assert data["actions"][1]["content"] is None
    assert data["stage"] == "strict" and data["ok"] is True


def test_parse_reads_stdin_and_uses_request_only_for_guesses(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("Here you go:\n```python\nprint(1)\n```\n"))
    rc, out, _ = _run(capsys, "protocol", "parse", "--request", "fix hello.py please", "-")
    data = json.loads(out)
    assert rc == 0 and data["stage"] == "fuzzy"
    assert data["actions"][0]["path"] == "hello.py"
    assert data["actions"][0]["executable"] is False


def test_render_writes_canonical_symops_that_parses_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "r.symops"
    src.write_text("**$ create @ `a.py`**\n```python\nx = 1\n```\n#c0.9\n", encoding="utf-8")
    _, out, _ = _run(capsys, "protocol", "parse", str(src))
    j = tmp_path / "r.json"
    j.write_text(out, encoding="utf-8")
    rc, text, _ = _run(capsys, "protocol", "render", "--protocol", "symops", str(j))
    assert rc == 0
    assert text == "#c0.9\n$ create @ a.py\n--\nx = 1\n--\n"


def test_repair_prints_repaired_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "r.txt"
    src.write_text("```symops\n  $ create a.py\n--\nx\n--\n```\n", encoding="utf-8")
    rc, out, _ = _run(capsys, "protocol", "repair", str(src))
    assert rc == 0 and out == "$ create @ a.py\n--\nx\n--\n"


def test_prompt_prints_the_system_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = _run(capsys, "protocol", "prompt", "--protocol", "symops")
    assert rc == 0 and "$ create @ path" in out and "--" in out


def test_bad_input_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _run(capsys, "protocol", "parse", str(tmp_path / "missing.txt"))
    assert rc == 1 and "no such file" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    rc, _, err = _run(capsys, "protocol", "render", "--protocol", "symops", str(bad))
    assert rc == 1 and "is not JSON" in err
    bad.write_text('{"actions": [{"path": "x"}]}', encoding="utf-8")
    rc, _, err = _run(capsys, "protocol", "render", "--protocol", "symops", str(bad))
    assert rc == 1 and "not a Sym-Ops result" in err
    binf = tmp_path / "bin.txt"
    binf.write_bytes(b"\xff\xfe\x00bad")
    rc, _, err = _run(capsys, "protocol", "parse", str(binf))
    assert rc == 1 and "not UTF-8" in err


def test_parse_debug_shows_stages_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "r.txt"
    f.write_text("- $ run @ ls\n", encoding="utf-8")
    rc, out, err = _run(capsys, "protocol", "parse", "--debug", str(f))
    assert rc == 0 and json.loads(out)["stage"] == "repaired"
    assert "=== AFTER REPAIR ===" in err


def test_a_pipe_is_read_and_a_device_is_named_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `duckflow protocol parse <(cmd)` hands over a pipe (/dev/fd/N); it used to be "no such file"
    import os
    import threading

    fifo = tmp_path / "reply"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text('{"a": 1}'))
    writer.start()
    rc, out, _ = _run(capsys, "protocol", "parse", "--protocol", "json", str(fifo))
    # the writer ends once the command read the pipe; a thread that has written may still be
    # finishing, so wait for it before deciding it is stuck (reading the FIFO then, blocking,
    # would wait for a writer that never comes)
    writer.join(10)
    if writer.is_alive():  # the command did not read the pipe: release the writer without blocking
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        writer.join(10)
        os.close(fd)
    assert rc == 0 and json.loads(out)["value"] == {"a": 1}
    rc, out, err = _run(capsys, "protocol", "parse", "/dev/null")
    assert rc == 1 and out == "" and "/dev/null is not a regular file" in err


def test_parse_dml_and_json_use_their_readers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "r.dml"
    d.write_text("Thought: go\nAction: 🦆▶️[T:read_file|a.py]◀️🦆\n", encoding="utf-8")
    rc, out, _ = _run(capsys, "protocol", "parse", "--protocol", "dml", str(d))
    data = json.loads(out)
    assert rc == 0 and set(data) >= {"ok", "text", "thought", "macros", "errors"}
    assert data["macros"][0]["name"] == "read_file"
    j = tmp_path / "r.json"
    j.write_text('Sure:\n```json\n{"a": 1,}\n```\n', encoding="utf-8")
    rc, out, _ = _run(capsys, "protocol", "parse", "--protocol", "json", str(j))
    data = json.loads(out)
    assert rc == 0 and set(data) == {"ok", "value", "repairs", "errors"} and data["value"] == {"a": 1}
    rc, out, _ = _run(capsys, "protocol", "prompt", "--protocol", "dml")
    assert rc == 0 and "🦆" in out


def test_parse_dml_names_an_unknown_file_alias_and_the_closest_one(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "r.dml"
    d.write_text("🦆▶️[F:main=src/main.py]◀️🦆\nAction: 🦆▶️[T:read_file|{{F:mian}}]◀️🦆 "
                 "🦆▶️[T:read_file|{{F:main}}]◀️🦆\n", encoding="utf-8")
    rc, out, _ = _run(capsys, "protocol", "parse", "--protocol", "dml", str(d))
    data = json.loads(out)
    assert rc == 0 and data["ok"] is False and len(data["errors"]) == 1
    assert "unknown file alias `mian`" in data["errors"][0] and "did you mean `main`" in data["errors"][0]
    d.write_text("🦆▶️[T:read_file|{{F:main}}]◀️🦆\n", encoding="utf-8")  # no table: nothing to expand it to
    rc, out, _ = _run(capsys, "protocol", "parse", "--protocol", "dml", str(d))
    assert rc == 0 and "unknown file alias `main`" in json.loads(out)["errors"][0]


def test_dml_offsets_point_into_the_raw_crlf_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = "Thought: read it\r\nAction: 🦆▶️[T:read_file|src/app.py]◀️🦆\r\n"
    f = tmp_path / "reply.dml"
    f.write_bytes(raw.encode())
    rc, out, _ = _run(capsys, "protocol", "parse", "--protocol", "dml", str(f))
    macro = json.loads(out)["macros"][0]
    assert rc == 0 and raw[macro["start"]:macro["end"]] == macro["raw"]
    assert macro["raw"].startswith("🦆") and macro["args"] == ["src/app.py"]


def test_symops_crlf_reply_is_repaired_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "reply.symops"
    f.write_bytes(b"~ add it\r\n$ create @ a.py\r\n--\r\nprint(1)\r\n--\r\n")
    _, out, _ = _run(capsys, "protocol", "parse", "--protocol", "symops", str(f))
    data = json.loads(out)
    assert data["actions"][0]["content"] == "print(1)" and data["actions"][0]["executable"]
    assert data["stage"] == "repaired" and data["repairs"]


def test_stdin_is_read_as_bytes_too() -> None:
    raw = "$ run @ pytest -q\r\n".encode()
    proc = subprocess.run([sys.executable, "-m", "duckflow", "protocol", "parse", "--protocol", "symops", "-"],
                          input=raw, capture_output=True, timeout=60)
    out = json.loads(proc.stdout)
    assert out["actions"][0]["path"] == "pytest -q" and out["repairs"]
