"""`essay style` names line, column, sentence and rule; `essay check` shows which passages matched."""

from __future__ import annotations

import json
from pathlib import Path

from tests.apps.smartao import texts
from tests.apps.smartao.test_essay_cli import duckflow

POLITE_ESSAY = ("【志望動機】\n私は都市計画を学びたいです。。幼い頃から街の変化に興味がありました。\n"
                "私は毎週末に街を歩く。\n\n【活動】\n高校では地域の団体に参加しました,住民の話を聞きました。\n")
PLAIN_ESSAY = "私は都市計画を学びたい。街の変化は面白い。\n地域の団体に参加しました。\n住民の話を聞いた。\n"


def _style(tmp_path: Path, text: str) -> list[dict[str, object]]:
    path = tmp_path / "essay.md"
    path.write_text(text, encoding="utf-8")
    proc = duckflow("essay", "style", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    issues: list[dict[str, object]] = json.loads(proc.stdout)["style"]["issues"]
    return issues


def test_style_issues_carry_line_col_sentence_and_rule(tmp_path: Path) -> None:
    got = {(i["rule"], i["line"], i["col"], i["sentence"]) for i in _style(tmp_path, POLITE_ESSAY)}
    assert ("ja-double-punct", 2, 14, "私は都市計画を学びたいです。。") in {(r, ln, c, s[:15]) for r, ln, c, s in got}  # type: ignore[index]
    assert ("ja-mixed-style", 3, 1, "私は毎週末に街を歩く。") in got
    assert ("ja-half-comma", 6, 17, "高校では地域の団体に参加しました,住民の話を聞きました。") in got


def test_a_polite_sentence_in_a_plain_essay_is_reported_too(tmp_path: Path) -> None:
    mixed = [(i["line"], i["sentence"]) for i in _style(tmp_path, PLAIN_ESSAY) if i["rule"] == "ja-mixed-style"]
    assert mixed == [(2, "地域の団体に参加しました。")]


def test_style_text_output_names_the_line_and_quotes_the_sentence(tmp_path: Path) -> None:
    path = tmp_path / "essay.md"
    path.write_text(POLITE_ESSAY, encoding="utf-8")
    out = duckflow("essay", "style", str(path)).stdout
    assert "line 3, col 1: 文体が混在しています（この文はだ・である調）   [ja-mixed-style]" in out
    assert "私は毎週末に街を歩く。" in out and "@" not in out


def test_check_json_lists_the_matching_passages_as_they_stand_in_the_essay(tmp_path: Path) -> None:
    refs = tmp_path / "refs"
    refs.mkdir()
    (refs / "urban.txt").write_text("Notes from a visit.\n" + texts.EN_REF, encoding="utf-8")
    essay = "My essay.\n\n" + texts.EN_PARTIAL.replace("Osaka, and", "Osaka,\nand")
    path = tmp_path / "essay.txt"
    path.write_text(essay, encoding="utf-8")
    proc = duckflow("essay", "check", str(path), "--refs", str(refs), "--json")
    (match,) = json.loads(proc.stdout)["plagiarism"]["matches"]
    (passage,) = match["passages"]
    assert passage["text"] in essay and passage["text"].startswith("I have always been fascinated by the way cities")
    assert "Osaka,\nand I spent weekends" in passage["text"] and "medicine" not in passage["text"]
    assert (passage["line"], passage["ref_line"]) == (3, 2)
    text = duckflow("essay", "check", str(path), "--refs", str(refs)).stdout
    assert "line 3 (ref line 2): >>I have always been fascinated" in text
