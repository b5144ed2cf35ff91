"""The one JSONL writer: batches in one write, rotation with `keep` files, reading in order, torn lines."""

from __future__ import annotations

import json
import stat
import threading
from pathlib import Path

from duckflow.store.jsonlog import JsonlFile


def test_batches_rotate_keep_their_files_and_read_back_in_order(tmp_path: Path) -> None:
    log = JsonlFile(tmp_path / "logs" / "x.jsonl", max_bytes=300, keep=2)  # the folder is made on demand
    for i in range(40):
        log.append([json.dumps({"n": i, "pad": "." * 20})])
    names = {p.name for p in (tmp_path / "logs").iterdir()}
    # the oldest beyond keep were deleted (the current file is made again by the next write)
    assert {"x.jsonl.1", "x.jsonl.2"} <= names <= {"x.jsonl", "x.jsonl.1", "x.jsonl.2"}
    got = [r["n"] for r in log.read()]
    assert got == sorted(got) and got[-1] == 39 and len(got) < 40  # in order, newest kept, bounded
    assert stat.S_IMODE((tmp_path / "logs" / "x.jsonl.1").stat().st_mode) == 0o600


def test_a_torn_line_is_skipped_and_a_removed_folder_is_made_again(tmp_path: Path) -> None:
    log = JsonlFile(tmp_path / "d" / "x.jsonl")
    assert log.append(['{"a": 1}', '{"a": 2}']) == 2
    with (tmp_path / "d" / "x.jsonl").open("ab") as fh:
        fh.write('{"a": "caf\u00e9'.encode()[:-1])  # a crash cut the last line inside a character
    (tmp_path / "d" / "x.jsonl").rename(tmp_path / "moved.jsonl")
    (tmp_path / "d").rmdir()
    log.write({"a": 3})
    assert [r["a"] for r in log.read()] == [3]
    assert [r["a"] for r in JsonlFile(tmp_path / "moved.jsonl").read()] == [1, 2]


def test_concurrent_writers_never_interleave_lines(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    writers = [JsonlFile(path) for _ in range(4)]  # as separate logs (or processes) on one file

    def work(k: int) -> None:
        for i in range(200):
            writers[k].append([json.dumps({"k": k, "i": i, "text": "y" * 500})] * 3)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lines = path.read_text().splitlines()
    assert len(lines) == 4 * 200 * 3 and all(json.loads(x)["text"] == "y" * 500 for x in lines)


def test_keep_zero_keeps_only_the_current_file(tmp_path: Path) -> None:
    log = JsonlFile(tmp_path / "x.jsonl", max_bytes=50, keep=0)
    for i in range(5):
        log.write({"i": i, "pad": "." * 40})
    assert [p.name for p in tmp_path.iterdir()] in ([], ["x.jsonl"])
    assert log.files() in ([], [tmp_path / "x.jsonl"])
