"""The single-call turn in DML (`--codec dml --mode single-call`): the DML templates and grammar,
the session's DMLCodec reading the reply, the same gate, tools and states as Sym-Ops."""

from __future__ import annotations

from typing import Any

from duckflow.companion.singlecall import build_step
from duckflow.companion.task import drive
from duckflow.llm.scripted import ScriptedModel, reply
from duckflow.protocols.dml import DMLCodec
from tests.helpers.companion import env, steps_of  # noqa: F401
from tests.helpers.gbnf_walk import Walker

CREATE_AND_RUN = (
    "Thought: write add.py and run it\nAction:\n"
    "🦆▶️[T:write_file|add.py|\ndef add(a, b):\n    return a + b\n\nprint(add(2, 3))\n]◀️🦆\n"
    "🦆▶️[T:execute_shell|python3 add.py]◀️🦆\nNext: DONE\n"
)


class LocalScripted(ScriptedModel):
    """A scripted model that looks like llama.cpp's server on this machine: grammars are sent."""

    provider = "llamacpp"


async def test_a_dml_reply_creates_runs_and_finishes_with_the_dml_grammar(env: Any, steps_of: Any) -> None:  # noqa: F811
    model = LocalScripted([reply(CREATE_AND_RUN)], name="t")
    o = env.open(model, codec="dml", mode="single-call")
    assert o.session.mode == "single" and isinstance(o.session.codec, DMLCodec)
    out = await drive(o.session, o.session.handle_message("Create add.py that prints 2+3 using add(), run it"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert (env.root / "add.py").read_text() == "def add(a, b):\n    return a + b\n\nprint(add(2, 3))\n"
    hist = steps_of(o)
    assert hist[0] == "PLANNING>EXECUTION" and hist[-1] == "REVIEW>DONE"
    ran = [x for r in out.results for x in r.outcomes if x.call.name == "execute_shell"]
    assert ran and ran[-1].status == "ok" and "5" in ran[-1].content
    (req,) = model.requests
    assert "DML" in req.messages[0].content and "🦆▶️[T:write_file|zeta_demo.py|" in req.messages[2].content
    grammar = req.settings.extra["grammar"] if req.settings else ""
    assert '"🦆▶️[T:write_file" "|" ( ( "add.py" ) ) "|" dblock' in grammar
    assert '"🦆▶️[T:execute_shell" "|" ( "python3 add.py" )' in grammar
    assert "$ create" not in grammar  # not the Sym-Ops grammar
    # what the step's own grammar allows, the session's codec reads strictly
    for _ in range(40):
        sample = Walker(grammar, seed=_).sample()
        decoded = o.session.codec.decode(sample, o.session.runner.specs)
        assert decoded.calls and not decoded.errors and not decoded.warnings, sample


async def test_dml_continue_then_done_and_the_failed_run_is_evidence(env: Any) -> None:  # noqa: F811
    broken = ("Thought: write calc.py\nAction:\n🦆▶️[T:write_file|calc.py|\nprint(1/0)\n]◀️🦆\n"
              "🦆▶️[T:execute_shell|python3 calc.py]◀️🦆\nNext: DONE\n")
    fixed = ("Thought: the run failed: fix it\nAction:\n🦆▶️[T:write_file|calc.py|\nprint(1/1)\n]◀️🦆\n"
             "🦆▶️[T:execute_shell|python3 calc.py]◀️🦆\nNext: CONTINUE\n")
    done = "Thought: it printed 1.0: finished\nAction:\nNext: DONE\n"
    model = LocalScripted([reply(broken), reply(fixed), reply(done)], name="t")
    o = env.open(model, codec="dml", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Create calc.py printing a quotient and run it"),
                      auto_approve_workspace=True)
    assert out.success, out.message
    assert (env.root / "calc.py").read_text() == "print(1/1)\n"
    third = model.requests[2].messages[-1].content
    assert "Results so far" in third and "Next: DONE" in third and "~ next" not in third
    grammar = model.requests[2].settings.extra["grammar"]
    assert '"calc.py"' in grammar and "{{F:" not in grammar  # the prompt shows no alias table: plain paths


async def test_a_copied_dml_example_is_not_run(env: Any) -> None:  # noqa: F811
    copied = ("Thought: copy\nAction:\n🦆▶️[T:write_file|zeta_demo.py|\nfor zeta_number in range(1, 4):\n"
              "    print(zeta_number)\n]◀️🦆\nNext: DONE\n")
    o = env.open([reply(copied)] * 3, codec="dml", mode="single-call")
    out = await drive(o.session, o.session.handle_message("Create count.py that prints 1 to 5"),
                      auto_approve_workspace=True)
    assert not out.success and not (env.root / "zeta_demo.py").exists()


async def test_constrained_decoding_off_sends_no_grammar(env: Any) -> None:  # noqa: F811
    model = LocalScripted([reply(CREATE_AND_RUN)], name="t")
    o = env.open(model, codec="dml", mode="single-call")
    step = build_step(o.session, "Create add.py that prints 2+3 using add(), run it")
    assert step.grammar.startswith('root ::= "Thought: "') and step.messages[-1].content.startswith("Task:")
    o.session.constrained_decoding = False  # models.constrained_decoding = false
    await o.session.handle_message("Create add.py that prints 2+3 using add(), run it")
    settings = model.requests[0].settings
    assert settings is not None and "grammar" not in settings.extra and settings.max_tokens  # bounds stay


async def test_consecutive_steps_share_the_longest_prefix(env: Any) -> None:  # noqa: F811
    """KV-cache reuse: rules and example first, the task next, what changes (files, results) last."""
    task = "Create hello.py that prints hi and run it"
    for codec in ("symops", "dml"):
        o = env.open(LocalScripted([], name="t"), codec=codec, mode="single-call")
        o.session.owner.change("task", lambda s: setattr(s, "task", task))
        one = build_step(o.session, task)
        (env.root / "hello.py").write_text("print('hi')\n")
        o.session.owner.change("evidence", lambda s: s.evidence.append('execute_shell: {"exit_code": 0}'))
        two = build_step(o.session, None)
        assert [m.content for m in one.messages[:3]] == [m.content for m in two.messages[:3]]
        first, second = one.messages[3].content, two.messages[3].content
        assert second.startswith(f"Task: {task}\nFiles: ") and first.startswith(f"Task: {task}\nFiles: ")
        head = len(f"Task: {task}\nFiles: ")  # the new parts (the file, the results) come after the task
        assert second.index("File hello.py:") > head and second.index("Results so far") > head
        (env.root / "hello.py").unlink()
