"""search_code: ranked file:line results from an FTS5 index kept up to date by mtime."""

from __future__ import annotations

import os
from pathlib import Path

from duckflow.workspace.search import CodeIndex, search_code


def _bump(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def test_index_updates_incrementally(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def connect_database():\n    pass\n")
    (tmp_path / "b.py").write_text("def render_page():\n    pass\n")
    index = CodeIndex(tmp_path)
    first = index.refresh()
    assert (first.added, first.updated, first.removed) == (2, 0, 0)
    assert index.refresh() == type(first)(0, 0, 0, 0)  # nothing changed: nothing re-read

    (tmp_path / "a.py").write_text("def open_socket():\n    pass\n")
    _bump(tmp_path / "a.py")
    (tmp_path / "b.py").unlink()
    (tmp_path / "c.py").write_text("x = 1\n\n\ndef render_page():\n    return x\n")
    stats = index.refresh()
    assert (stats.added, stats.updated, stats.removed) == (1, 1, 1)
    assert index.search("connect_database") == []
    hits = index.search("render_page")
    assert [h.location for h in hits] == ["c.py:4"]
    assert hits[0].snippet == "def render_page():"
    assert [h.location for h in index.search("open_socket")] == ["a.py:1"]
    index.close()


def test_results_are_ranked_and_point_at_the_line(tmp_path: Path) -> None:
    (tmp_path / "many.py").write_text("\n".join(["pass"] * 30 + [
        "token parser token parser: parse the token stream"]) + "\n")
    (tmp_path / "once.py").write_text("# a parser\n")
    result = search_code(tmp_path, "token parser")
    locations = [r["location"] for r in result["results"]]
    assert locations[0] == "many.py:31"
    assert "once.py:1" in locations


def test_gitignored_binary_and_large_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("generated/\n*.min.js\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "g.py").write_text("needle_word = 1\n")
    (tmp_path / "app.min.js").write_text("needle_word\n")
    (tmp_path / "blob.bin").write_bytes(b"needle_word\x00\x01\x02")
    (tmp_path / "huge.txt").write_text("needle_word\n" + "x" * 2_000_000)
    (tmp_path / "real.py").write_text("needle_word = 2\n")
    result = search_code(tmp_path, "needle_word")
    assert [r["location"] for r in result["results"]] == ["real.py:1"]


def test_japanese_text_is_found_by_substring(tmp_path: Path) -> None:
    (tmp_path / "db.py").write_text("# データベース接続を開く\nconn = open_db()\n")
    result = search_code(tmp_path, "データベース接続")
    assert [r["location"] for r in result["results"]] == ["db.py:1"]


def test_the_index_lives_in_duckflow_home_not_the_workspace(tmp_path: Path) -> None:
    from duckflow.paths import duckflow_home
    from duckflow.workspace.search import index_path

    (tmp_path / "a.py").write_text("alpha\n")
    search_code(tmp_path, "alpha")
    assert index_path(tmp_path).is_file()
    assert index_path(tmp_path).is_relative_to(duckflow_home())
    assert not (tmp_path / ".duckflow").exists()  # nothing written into the workspace
    assert search_code(tmp_path, "search")["results"] == []  # its own files are not indexed


def test_two_character_japanese_words_are_found_from_the_command_line(tmp_path: Path) -> None:
    # 接続 and 開く sit inside one unicode61 token and are shorter than a trigram
    import subprocess
    import sys

    (tmp_path / "db.py").write_text("# データベース接続を開く\nconn = open_db()\n")
    (tmp_path / "ui.py").write_text("# 画面を描く\n")
    src = str(Path(__file__).resolve().parents[2] / "src")
    proc = subprocess.run([sys.executable, "-m", "duckflow", "workspace", "search", "接続", "-w", str(tmp_path)],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": src})
    assert proc.returncode == 0 and proc.stdout.startswith("db.py:1: "), proc.stdout + proc.stderr
    assert [r["location"] for r in search_code(tmp_path, "開く")["results"]] == ["db.py:1"]
    assert search_code(tmp_path, "設定")["results"] == []
