"""`duckflow bench protocols --json --quick`: one JSON object with every figure and its bar."""

from __future__ import annotations

import json

import pytest
from benchmarks import protocols as bench

from duckflow.llm.tokens import count_tokens


def test_bench_json_quick(capsys: pytest.CaptureFixture[str]) -> None:
    code = bench.main(["--json", "--quick", "--corpus", "does/not/exist"])
    data = json.loads(capsys.readouterr().out)
    tok = data["tokens"]
    assert tok["actions"] == 3 and tok["exact"] is True and tok["tokenizer"] == "tiktoken:cl100k_base"
    per = tok["per_action"]
    assert 0 < per["symops"] < per["dml"] < per["json"]
    assert tok["bars"]["symops_le_12"]["pass"] == (per["symops"] <= 12)
    assert set(data["speed"]) and "pass" in data["corpus"]
    assert data["corpus"]["pass"] is None and "not measured" in data["corpus"]["note"]
    assert code == (0 if data["pass"] else 1)


def test_overhead_formula_counts_only_syntax() -> None:
    reply = bench.Reply("Run it.", (bench.Act("run", "make test"),))
    payload = count_tokens("Run it.").tokens + count_tokens("make test").tokens
    rendered, _ = bench.render_symops(reply)
    assert rendered == "~ Run it.\n$ run @ make test\n"
    result = bench.token_overhead([reply])
    total = result["reply_tokens"]["json"]
    assert result["per_action"]["json"] == total - payload
    text = bench.render_openai(reply, __import__("random").Random(1))
    calls = json.loads(text.split("\n", 1)[1])
    assert calls[0]["type"] == "function" and calls[0]["id"].startswith("call_")
    assert json.loads(calls[0]["function"]["arguments"]) == {"command": "make test"}


def test_dml_rendering_parses_back() -> None:
    from duckflow.protocols.dml import parse

    for reply in bench.SUITE:
        r = parse(bench.render_dml(reply))
        assert r.ok, r.errors
        assert [m.args[-1].rstrip("\n") if m.args else "" for m in r.tool_macros] == [
            (a.content if a.content is not None else a.target).rstrip("\n") for a in reply.actions
        ]


def test_issue_9_bars_are_ratios_with_their_baselines(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(["--json", "--quick"])
    speed = json.loads(capsys.readouterr().out)["speed"]
    for key in ("parse_vs_json_loads", "repair_vs_json_repair"):
        assert speed[key]["value"] > 0 and speed[key]["json_ms" if "loads" in key else "json_repair_ms"] >= 0
    for name in ("actions", "prose"):
        assert speed[f"stream_{name}_time_ratio"]["bar"] == "<= 3"
        assert speed[f"stream_{name}_time_ratio"]["pieces"] > 1000  # really fed in 16-byte pieces
        assert speed[f"stream_{name}_memory_ratio"]["bar"] == "<= 2"
    assert speed["noise_runnable_not_in_reply"]["value"] == 0
    assert speed["noise_runnable_not_in_reply"]["variants"] == 300
    table = speed["compliance"]
    assert table["value"] == 0 and table["pass"] is True  # no runnable guess in real replies
    row = table["rows"]["aider"]
    assert row["replies"] >= 6 and row["sources"] == ["https://github.com/Aider-AI/aider"]
    assert row["stages"]["strict"]["well_formed"] == 0  # aider's format is not Sym-Ops
    assert row["stages"]["fuzzy"]["exact_intended"] > 0.8  # each edit is proposed for its file


def test_compliance_row_counts_stages_and_the_recorded_reasks(tmp_path: object) -> None:
    """The table's arithmetic on a tiny folder: a strict reply, a broken one fixed by its re-ask."""
    from pathlib import Path

    from benchmarks._protocol_bars import compliance

    root = Path(str(tmp_path))
    folder = root / "model"
    folder.mkdir(parents=True)
    meta = {"source": "test", "request": "r", "intended": [{"type": "create", "path": "a.py"}]}
    (folder / "01_ok.txt").write_text("$ create @ a.py\n--\nx = 1\n--\n")
    (folder / "01_ok.json").write_text(json.dumps(meta))
    (folder / "02_fixed.txt").write_text("$ create @ a.py\n--\nx = 1\n")  # never closed: not ok
    (folder / "02_fixed.reask1.txt").write_text("$ create @ a.py\n--\nx = 1\n--\n")
    (folder / "02_fixed.json").write_text(json.dumps(meta))
    row = compliance(root)["compliance"]["rows"]["model"]
    assert row["replies"] == 2 and row["runnable_guesses"] == 0
    assert row["stages"]["strict"] == {"well_formed": 0.5, "exact_intended": 0.5}
    assert row["stages"]["self_correct"] == {"well_formed": 1.0, "exact_intended": 1.0}
