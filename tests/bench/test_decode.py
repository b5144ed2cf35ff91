"""`duckflow bench decode`: only in-process models (one clear line otherwise); the figures with a real one."""

from __future__ import annotations

import importlib.util
import json

import pytest
from benchmarks import decode


def test_a_model_that_is_not_in_process_gets_one_line() -> None:
    with pytest.raises(SystemExit) as exc:
        decode.main(["--model", "scripted:demo"])
    assert "not an in-process model" in str(exc.value)


def test_the_busy_process_is_started_and_stopped() -> None:
    with decode.busy_process() as proc:
        assert proc.poll() is None  # running beside the measurement
    assert proc.poll() is not None


@pytest.mark.local_model
@pytest.mark.timeout(900)
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
def test_free_grammar_and_busy_decoding_are_measured_in_one_run(capsys: pytest.CaptureFixture[str]) -> None:
    decode.main(["--model", "local:smollm2", "--rounds", "1", "--tokens", "24", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["wait_policy"] and out["threads"] >= 1 and out["prompt_tokens"] > 100
    assert {b["bar"].split()[0] for b in out["ratios"]} == {"grammar", "busy"}
    assert all(len(out["tok_s"][case]) == 1 and out["tok_s"][case][0] > 0 for case in ("free", "grammar", "busy"))
    assert out["cold_prompt_ms"][0] > 0 and out["ttft_over_prompt"] >= 1.0
