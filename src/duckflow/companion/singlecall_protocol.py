"""The protocol of a single-call step: Sym-Ops or DML — its codec, templates, grammar and step marker.

`companion.singlecall` builds one step for Sym-Ops; for a session opened with `--codec dml`
this module turns the same step (the task message, the verbs, paths and commands the grammar
may offer) into DML: the templates in `data/singlecall/dml/`, a grammar from
`protocols.grammar.dml_grammar` over the session's tools (plain paths: the short prompt shows
no alias table), and the session's own DMLCodec to read the reply — one grammar, one reader. The step marker is
`~ next: DONE|CONTINUE` in Sym-Ops and `Next: DONE|CONTINUE` in DML.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duckflow.companion.taskchecks import TEST_FILE
from duckflow.llm.types import Message
from duckflow.protocols.grammar import VERB_TOOLS, DmlGrammarSpec, SymOpsGrammarSpec, dml_grammar

if TYPE_CHECKING:
    from duckflow.companion.host import TurnHost
    from duckflow.protocols.codec import Codec

DML_DATA = Path(__file__).parent / "data" / "singlecall" / "dml"


@dataclass
class StepPrompt:
    """One single-call step's request: the messages, the grammar its reply must follow, the
    prompt's token counts per part and the reply's token cap."""

    messages: list[Message]
    grammar: str
    tokens: dict[str, int]
    max_tokens: int


@dataclass(frozen=True)
class StepProtocol:
    """How a single-call reply of one protocol is read: its codec, marker and thought line."""

    codec: Codec
    marker: re.Pattern[str]
    thought: re.Pattern[str]

    def said(self, raw: str) -> str | None:
        """DONE or CONTINUE: the last step marker of the reply, if any."""
        found = self.marker.findall(raw)
        return found[-1] if found else None

    def thought_of(self, raw: str) -> str:
        m = self.thought.search(raw)
        return m.group(1).strip() if m else ""


SYMOPS_MARKER = re.compile(r"^~ next: (DONE|CONTINUE)\s*$", re.M)
DML_MARKER = re.compile(r"^Next: (DONE|CONTINUE)\s*$", re.M)


def is_dml(session: TurnHost) -> bool:
    return getattr(session.codec, "name", "") == "dml"


def step_protocol(session: TurnHost) -> StepProtocol:
    """The session's protocol for single-call steps (Sym-Ops unless the session speaks DML)."""
    if is_dml(session):
        assert session.codec is not None
        return StepProtocol(session.codec, DML_MARKER, re.compile(r"^Thought:[ \t]*(.+)$", re.M))
    codec = session.codec
    if codec is None or codec.name != "symops":
        from duckflow.protocols.symops.codec import SymOpsCodec

        codec = SymOpsCodec()
    return StepProtocol(codec, SYMOPS_MARKER, re.compile(r"^~ (?!next: )(.+)$", re.M))


@functools.lru_cache(maxsize=1)
def dml_templates() -> tuple[str, str, str]:
    """(system, example task, example reply) of the DML single-call prompt."""
    return tuple((DML_DATA / n).read_text(encoding="utf-8").strip() for n in  # type: ignore[return-value]
                 ("system.txt", "example_task.txt", "example_reply.txt"))


def dml_spec(session: TurnHost, spec: SymOpsGrammarSpec) -> DmlGrammarSpec:
    """The Sym-Ops step's choices (verbs, paths, commands, bounds) as a DML grammar spec."""
    from duckflow.companion.dml_context import refresh_dml

    refresh_dml(session.codec, session.state)  # the session's alias table stays the same as in two-call
    wanted = {VERB_TOOLS[v] for v in spec.verbs if v in VERB_TOOLS and v != "test"}
    if "edit" in spec.verbs:
        wanted.add("edit_file")
    if "test" in spec.extra:
        wanted.add("run_tests")
    wanted.update(spec.tools)  # an MCP server's tools, as in the Sym-Ops step
    tools = [t for t in session.runner.specs if t.name in wanted]
    # plain paths only: the short single-call prompt shows no alias table, so it offers no `{{F:x}}`
    return DmlGrammarSpec(
        tools=tools, create_paths=spec.create_paths, existing=spec.existing, commands=spec.commands,
        new_names=spec.new_names,
        min_actions=spec.min_actions, max_actions=spec.max_actions,
        max_block_lines=spec.max_block_lines, thought_chars=spec.thought_chars, marker=spec.marker)


def dml_step(session: TurnHost, user: str, spec: SymOpsGrammarSpec, count: Any,
             max_tokens: int) -> StepPrompt:
    """The DML form of a step: same task message, DML templates, the DML grammar."""
    system, ex_task, ex_reply = dml_templates()
    project = session.project_text()  # AGENTS.md, as in the Sym-Ops step
    if project:
        system = f"{system}\n\n{project}"
    msgs = [Message("system", system), Message("user", ex_task), Message("assistant", ex_reply),
            Message("user", user.replace("~ next: DONE", "Next: DONE"))]
    tokens = {"system": count(system), "examples": count(ex_task) + count(ex_reply), "task": count(user)}
    return StepPrompt(msgs, dml_grammar(dml_spec(session, spec)), tokens, max_tokens=max_tokens)


def script_commands(paths: list[str]) -> list[str]:
    """`python3 FILE` for each .py file; a test file runs with pytest (a plain run tests nothing)."""
    from duckflow.protocols.grammar import run_commands

    tests = {p for p in paths if TEST_FILE.search(p)}
    return [c.replace("python ", "python3 ", 1) for c in run_commands(paths)
            if c.startswith("python ") and c != "python -m pytest -q" and c[7:] not in tests]


def with_test(grammar: str, has_test: bool) -> str:
    """The grammar with the `$ test @ FILE` action first among the actions (when it has one)."""
    if not has_test:
        return grammar
    return grammar.replace("action ::= ", "action ::= test | ", 1)
