"""The wire helpers every provider shares: tool renderers, argument parsing, headers, timeouts."""

from __future__ import annotations

from duckflow.llm.anthropic import AnthropicModel
from duckflow.llm.ollama import OllamaModel
from duckflow.llm.openai_compat import OpenAICompatModel
from duckflow.llm.types import Collector, ModelSettings, TextDelta, ToolSpec
from duckflow.llm.wire import anthropic_tools, headers, openai_tools, parse_arguments

SPEC = ToolSpec("add", "Add.", {"type": "object", "properties": {"a": {"type": "integer"}}})


def test_one_renderer_per_wire_format() -> None:
    assert openai_tools([SPEC]) == [{"type": "function", "function": {
        "name": "add", "description": "Add.", "parameters": SPEC.parameters}}]
    assert anthropic_tools([SPEC]) == [{"name": "add", "description": "Add.", "input_schema": SPEC.parameters}]


def test_arguments_a_string_an_object_or_something_that_must_not_run() -> None:
    assert parse_arguments("add", '{"a": 1}', "c1").arguments == {"a": 1}
    assert parse_arguments("add", {"a": 1}, "c1").arguments == {"a": 1}  # Ollama sends objects
    assert parse_arguments("add", "", "c1").executable
    for bad in ('{"a": ', "[1, 2]"):
        call = parse_arguments("add", bad, "c1")
        assert not call.executable and call.raw == bad and call.arguments == {}


def test_each_provider_builds_its_headers_with_the_one_helper() -> None:
    openai = OpenAICompatModel("m", api_key="k", headers={"X-Team": "t"})._headers()
    assert openai == {"Accept": "text/event-stream", "Authorization": "Bearer k", "X-Team": "t"}
    claude = AnthropicModel("c", api_key="k")._headers()
    assert claude["x-api-key"] == "k" and "Authorization" not in claude and claude["anthropic-version"]
    assert OllamaModel("q")._headers() == {}  # NDJSON, no key: nothing to say
    assert headers(None, extra={"Authorization": "mine"}) == {"Authorization": "mine"}


def test_a_call_timeout_overrides_the_models_own_even_at_the_old_default() -> None:
    model = OpenAICompatModel("m", timeout_s=5.0)
    assert model._timeout(None) == 5.0 and model._timeout(ModelSettings()) == 5.0
    assert model._timeout(ModelSettings(timeout_s=120.0)) == 120.0


def test_the_collector_packs_many_small_pieces() -> None:
    got = Collector()
    for _ in range(10_000):
        got.add(TextDelta("ab"))
    assert got.text == "ab" * 10_000 and len(got.parts) < 4097
