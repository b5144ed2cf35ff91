"""`duckflow bench kvcache`: only in-process models (a clear line otherwise); the figures with a real one."""

from __future__ import annotations

import importlib.util
import json

import pytest
from benchmarks import kvcache


def test_a_model_that_is_not_in_process_gets_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        kvcache.main(["--model", "scripted:demo"])
    assert "not an in-process model" in str(exc.value)


@pytest.mark.local_model
@pytest.mark.timeout(900)
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
def test_the_second_call_of_a_session_evaluates_only_the_new_suffix(capsys: pytest.CaptureFixture[str]) -> None:
    assert kvcache.main(["--model", "local:smollm2", "--rounds", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["shared_prefix_tokens"] > out["prompt_tokens"] // 2  # the order of the single-call prompt
    assert out["evaluated_tokens"] == {"warm": out["prompt_tokens"] - out["shared_prefix_tokens"],
                                       "cold": out["prompt_tokens"]}
    assert len(out["warm_ttft_s"]) == len(out["cold_ttft_s"]) == 1 and out["ratio"] > 0
    # llama.cpp's own counter agrees: the warm call evaluated the new suffix, the cold one all of it
    measured = out["llama_cpp_evaluated"]
    assert measured["warm"][0] <= out["evaluated_tokens"]["warm"] < out["prompt_tokens"] - 1 <= measured["cold"][0]
