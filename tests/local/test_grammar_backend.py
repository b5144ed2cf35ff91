"""The generated grammars against the real backend: llama.cpp accepts them and the reply is strict."""

from __future__ import annotations

from pathlib import Path

import pytest

from duckflow.llm.constrain import constrained
from duckflow.llm.local import LocalModel
from duckflow.llm.localmodels import resolve_local
from duckflow.llm.types import Message, complete
from duckflow.protocols.grammar import SymOpsGrammarSpec, symops_grammar
from duckflow.protocols.symops.codec import SymOpsCodec
from tests.local.conftest import needs_llama

pytestmark = [pytest.mark.local_model, needs_llama, pytest.mark.timeout(1800)]


async def test_a_constrained_symops_reply_is_strict_even_from_the_smallest_model(tmp_path: Path) -> None:
    from duckflow.config import WorkspaceConfig
    from duckflow.workspace.tools import workspace_tools

    model = LocalModel(resolve_local("smollm2", allow_pip=False), n_ctx=2048, n_threads=2)
    grammar = symops_grammar(SymOpsGrammarSpec(verbs=("create", "run"), create_paths=["hi.py"],
                                               commands=["python3 hi.py"], new_names=False,
                                               max_block_lines=6, thought_chars=60))
    msgs = [Message("system", "Reply in Sym-Ops."), Message("user", "Create hi.py that prints hi, then run it.")]
    resp = await complete(model, msgs, settings=constrained(model, max_tokens=160, grammar=grammar))
    specs = [t.spec for t in workspace_tools(tmp_path, WorkspaceConfig())]
    decoded = SymOpsCodec().decode(resp.text, specs)
    assert decoded.calls and not decoded.errors and not decoded.repairs, resp.text
    assert {c.name for c in decoded.calls} <= {"write_file", "execute_shell"}
    assert all(c.arguments.get("path", "hi.py") == "hi.py" for c in decoded.calls)
    assert resp.text.rstrip().splitlines()[-1] in ("~ next: DONE", "~ next: CONTINUE")


async def test_the_bundled_model_under_the_dml_grammar_writes_strict_dml(default_model_home: Path,
                                                                         tmp_path: Path) -> None:
    from duckflow.companion.singlecall_protocol import dml_templates
    from duckflow.config import WorkspaceConfig
    from duckflow.protocols.dml import DMLCodec
    from duckflow.protocols.grammar import DmlGrammarSpec, dml_grammar
    from duckflow.workspace.tools import workspace_tools

    model = LocalModel(resolve_local("default", allow_pip=False), n_ctx=2048, n_threads=2)
    specs = [t.spec for t in workspace_tools(tmp_path, WorkspaceConfig())]
    grammar = dml_grammar(DmlGrammarSpec(tools=[s for s in specs if s.name in ("write_file", "execute_shell")],
                                         create_paths=["hi.py"], commands=["python3 hi.py"], new_names=False,
                                         max_block_lines=8, thought_chars=80))
    system, ex_task, ex_reply = dml_templates()
    msgs = [Message("system", system), Message("user", ex_task), Message("assistant", ex_reply),
            Message("user", "Task: Create hi.py that prints hi, then run it.\nFiles: (none)")]
    resp = await complete(model, msgs, settings=constrained(model, max_tokens=200, grammar=grammar))
    decoded = DMLCodec().decode(resp.text, specs)
    assert decoded.calls and not decoded.errors and not decoded.warnings, resp.text
    assert all(c.executable for c in decoded.calls)
    assert {c.name for c in decoded.calls} <= {"write_file", "execute_shell"}
    assert resp.text.rstrip().splitlines()[-1] in ("Next: DONE", "Next: CONTINUE"), resp.text


async def test_the_run_with_arguments_grammar_is_accepted_and_only_runs_the_script(tmp_path: Path) -> None:
    """When the loop asks for a run with the option the task names, the step's grammar allows
    only `$ run @ python3 SCRIPT ARGS`: llama.cpp accepts it and the reply is that run."""
    from duckflow.companion.checkask import run_only_grammar

    model = LocalModel(resolve_local("smollm2", allow_pip=False), n_ctx=2048, n_threads=2)
    base = symops_grammar(SymOpsGrammarSpec(verbs=("create", "edit", "run"), create_paths=["greet.py"],
                                            commands=["python3 greet.py"], new_names=False, min_actions=0,
                                            max_block_lines=6, thought_chars=60))
    grammar = run_only_grammar(base, "greet.py")
    msgs = [Message("system", "Reply in Sym-Ops."),
            Message("user", "Now check greet.py: run it with --name and a sample value.")]
    resp = await complete(model, msgs, settings=constrained(model, max_tokens=120, grammar=grammar))
    decoded = SymOpsCodec().decode(resp.text, [])
    runs = [c for c in decoded.calls if c.name == "execute_shell"]
    assert len(decoded.calls) == 1 and runs, resp.text
    assert runs[0].arguments["command"].startswith("python3 greet.py ")
    assert not set("`$;&|<>") & set(runs[0].arguments["command"])
