"""`duckflow bench companion --json` runs and reports both bars."""

from __future__ import annotations

import json

import pytest
from benchmarks.companion import main


def test_bench_reports_tokens_and_overhead(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["--json", "--runs", "1"])
    data = json.loads(capsys.readouterr().out)
    assert data["turns"] == 10 and data["tokenizer"]["exact"]
    assert data["bars"]["base_main_tokens_le_1300"]["pass"]
    assert len(data["base_main_tokens"]["per_turn"]) == 8  # approvals make no model call
    assert data["specialized_call_tokens"]["max"] > 0
    assert data["overhead_ms"]["mean"] > 0
    assert rc == (0 if data["pass"] else 1)
    ttfc = data["time_to_first_char"]
    assert len(ttfc["per_turn"]) == 8  # every turn that calls a model streams its first words
    assert all(t["ttfc_ms"] >= t["model_ttft_ms"] > 0 and t["ratio"] >= 1.0 for t in ttfc["per_turn"])
    assert "ttfc_ratio_le_1_5" in data["bars"] and data["token_guard_ms_per_turn"] >= 0
    # the overhead is a ratio against an engine turn with the same model, measured in the same run
    overhead, ttfc_bar = data["ratios"]
    assert overhead["limit"] == 10.0 and overhead["engine_turn_ms"] == data["engine_turn_ms"]["median"] > 0
    assert 0 < overhead["min"] <= overhead["value"] <= overhead["max"] and overhead["overhead_ms"] > 0
    assert overhead["pass"] == (overhead["value"] <= 10.0)
    assert ttfc_bar["value"] == data["time_to_first_char"]["ratio_max"] and ttfc_bar["limit"] == 1.5
    assert data["pass"] == all(b["pass"] for b in data["ratios"]) and data["machine"]["cpus"] >= 1
