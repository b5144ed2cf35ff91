"""The prompt templates render the same through MiniJinja (what Duckflow uses) as through Jinja2
(whose syntax they are written in): every template, both languages, empty and full inputs.

MiniJinja differs from Jinja2 where a template prints a value Python would `repr` (None, a
dict, a bool); the templates print only strings, numbers and joined lists, and this test keeps
it so.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import jinja2
import pytest

from duckflow.prompts.render import PromptBuilder, PromptInputs, template_sources

FULL = PromptInputs(
    session_id="20261126-101500-abc123", conversation_count=3, last_updated="2026-11-26T10:15:00Z",
    files_created=2, successful_operations=5, learned_patterns=["tests with pytest", "small diffs"],
    user_settings={"language": "ja", "style": "terse"},
    summaries=["asked for hello.py", "approved the write"], past_sessions=["20261125: fixed calc.py"],
    step="EXECUTION", status="IN_PROGRESS", task="Create hello.py 「こんにちは」", vitals="mood 0.8 · focus 0.9",
    goal="hello.py prints a greeting", why_now="the person asked", constraints=["no network", "keep tests green"],
    plan_brief=["list the workspace", "write hello.py"], open_questions=["which greeting?"],
    recent_turns=["PLANNING → EXECUTION"], evidence=["list_files: []", 'read_file: print("hi") {x} {{y}}'],
    context_refs=["hello.py", "README.md"], pending="job 1a2b: write_file hello.py", allowed=["REVIEW", "DONE"],
    tools="$ create @ PATH\n---\nCONTENT\n---",
)


def _jinja2_env(language: str) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.DictLoader(template_sources(language)), autoescape=False,
                              keep_trailing_newline=False, trim_blocks=False)


class _Both(PromptBuilder):
    """Renders every template through both engines and keeps the pairs."""

    pairs: list[tuple[str, str, str]]

    def _render(self, name: str, data: dict[str, Any]) -> str:
        mine = super()._render(name, data)
        theirs = str(_jinja2_env(self.language).get_template(name).render(**data)).strip()
        self.pairs.append((name, mine, theirs))
        return mine


@pytest.mark.parametrize("language", ["en", "ja"])
@pytest.mark.parametrize("inputs", [PromptInputs(), FULL], ids=["empty", "full"])
def test_every_template_renders_as_jinja2_renders_it(language: str, inputs: PromptInputs) -> None:
    builder = _Both(language)  # type: ignore[arg-type]
    builder.pairs = []
    builder.base(inputs)
    builder.main(inputs)
    for step in ("PLANNING", "EXECUTION", "REVIEW"):
        builder.specialized(step, inputs)
    assert {name for name, _, _ in builder.pairs} == {"base.j2", "main.j2", "planning.j2", "execution.j2",
                                                      "review.j2"}
    for name, mine, theirs in builder.pairs:
        assert mine == theirs, name


def test_the_full_inputs_reach_the_prompts() -> None:
    """The comparison above is not vacuous: the full inputs show up in the rendered text."""
    builder = PromptBuilder("en")
    text = builder.base(FULL) + builder.main(FULL) + builder.specialized("EXECUTION", FULL)
    for f in fields(PromptInputs):
        value = getattr(FULL, f.name)
        if isinstance(value, str) and value and f.name not in ("last_updated",):
            assert value.split("\n")[0] in text, f.name
    assert "1. list the workspace" in text and "style" in text


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_dml_system_prompt_renders_as_jinja2_renders_it(language: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import minijinja

    from duckflow.protocols.dml import system_prompt

    seen: list[tuple[str, str]] = []
    real = minijinja.Environment.render_str

    def both(self: Any, source: str, *args: Any, **context: Any) -> str:
        mine = real(self, source, *args, **context)
        env = jinja2.Environment(keep_trailing_newline=True, autoescape=False, undefined=jinja2.StrictUndefined)
        seen.append((mine, env.from_string(source).render(**context)))
        return mine

    monkeypatch.setattr(minijinja.Environment, "render_str", both)
    text = system_prompt(language=language, state={"cwd": "/work/hello", "task_plan": "write hello.py"})
    assert len(seen) == 1 and seen[0][0] == seen[0][1] and "hello.py" in text
