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
