"""The grammar of a two-call Specialized reply (Sym-Ops or DML), for local models.

In the two-call turn the Main decision is constrained by its JSON schema; this module gives the
Specialized reply that follows it the same treatment: for a session speaking Sym-Ops or DML
with a local backend (in process, or llama.cpp's server on this machine) the call is bounded,
at a low temperature, and constrained by the protocol's grammar (`protocols.grammar`) built
from the session's tools, the paths the task and workspace make plausible and runs of the
files they name. `models.constrained_decoding = false` drops the grammar (bounds stay); cloud
and scripted models get no settings (None), exactly as before.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from duckflow.companion.state import Step
from duckflow.llm.constrain import backend_of, constrained

if TYPE_CHECKING:
    from duckflow.companion.host import TurnHost
    from duckflow.llm.types import ModelSettings

MAX_TOKENS = 1024  # what a local call without a bound got before
GRAMMAR_BACKENDS = ("local", "llamacpp-http")  # the backends that read a GBNF grammar
_TOOLS = {"create": "write_file", "edit": "edit_file", "run": "execute_shell", "delete": "delete_path",
          "read": "read_file"}


def _choices(session: TurnHost) -> tuple[list[str], list[str], list[str], list[str]]:
    """(verbs, paths a reply may create, files that exist, run commands) for this task and workspace."""
    from duckflow.companion.shownfiles import workspace_files
    from duckflow.protocols.grammar import plausible_paths, run_commands

    task = session.state.task or session.state.goal or ""
    files = workspace_files(session.runner.root)
    paths = plausible_paths(task, files)
    names = set(session.runner.tool_names)
    verbs = [v for v, tool in _TOOLS.items() if tool in names]
    if not re.search(r"\b(delete|remove|rm)\b", task, re.I):
        verbs = [v for v in verbs if v != "delete"]  # a delete only when the person asks for one
    commands = [c.replace("python ", "python3 ", 1) for c in run_commands(paths)]
    return verbs, paths, [f for f in files if f in paths], commands


def other_tools(session: TurnHost) -> list[str]:
    """The session's tools beyond the workspace's own (an MCP server's, a plugin's), by name."""
    from duckflow.toolkinds import KINDS

    return [n for n in session.runner.tool_names if n not in KINDS]


def specialized_grammar(session: TurnHost, step: Step) -> str | None:
    """The GBNF grammar of the Specialized reply for `step`, or None (no text protocol / no action)."""
    name = getattr(session.codec, "name", "")
    if name not in ("symops", "dml"):
        return None  # native tool calls (the scripted demo, cloud models): no grammar module loaded
    from duckflow.protocols.grammar import (
        DmlGrammarSpec,
        SymOpsGrammarSpec,
        dml_grammar,
        plausible_paths,
        symops_grammar,
    )

    verbs, paths, existing, commands = _choices(session)
    least = 0 if step == Step.REVIEW else 1  # a review may answer without acting
    task = session.state.task or session.state.goal or ""
    new_names = not plausible_paths(task, [])  # a task that names its files gets only those
    try:
        others = other_tools(session)  # an MCP server's tools: `$ NAME @ argument`
        if name == "symops":  # Sym-Ops has no `read` verb (the codec would only warn and guess)
            return symops_grammar(SymOpsGrammarSpec(
                verbs=[v for v in verbs if v != "read"], create_paths=paths, existing=existing, commands=commands,
                new_names=new_names, min_actions=least, max_actions=4, marker=False, tools=others))
        wanted = {_TOOLS[v] for v in verbs} | set(others)
        aliases: Any = getattr(session.codec, "aliases", None)
        return dml_grammar(DmlGrammarSpec(
            tools=[t for t in session.runner.specs if t.name in wanted], create_paths=paths,
            existing=existing, commands=commands, aliases=aliases.items() if aliases is not None else (),
            new_names=new_names, min_actions=least, max_actions=4, marker=False))
    except ValueError:  # nothing the grammar could offer: leave the reply free
        return None


def specialized_settings(session: Any, step: Step) -> ModelSettings | None:
    """Settings of the Specialized call: bounded and grammar-constrained for local models."""
    model = getattr(session, "specialized_model", None) or session.model
    enabled = bool(getattr(session, "constrained_decoding", True))
    backend = backend_of(model)
    grammar = specialized_grammar(session, step) if enabled and backend in GRAMMAR_BACKENDS else None
    return constrained(model, max_tokens=MAX_TOKENS, grammar=grammar, enabled=enabled)
