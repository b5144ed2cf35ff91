"""The single-call turn: one grammar-constrained Sym-Ops reply per step, for small models.

A small model fails the two-call turn (a JSON decision, then a Specialized reply); it can be
made to follow a grammar. Here each step is ONE call whose reply carries the thought, the
vitals, the actions and a step marker (`~ next: DONE|CONTINUE`), constrained by a GBNF grammar
built for this task and workspace (`protocols.grammar`): only the session's verbs, only paths
the task names or the workspace holds (or plain new names), runs of the form `python3 FILE`,
bounded `---` blocks. The reply is decoded by the session's Sym-Ops codec and goes through the
same gate, tools, state machine and chunks as the two-call turn (the session's own helpers).

Guards against what small models were seen doing: the few-shot example (template files in
`data/singlecall/`, counted in the budget) uses names no task uses, and a reply that copies it
is not run; a `create` of a file that exists is shown and gated as an overwrite with its diff;
the person's task text is never replaced by the model's words; a step that only repeats what
already succeeded ends the task instead of looping.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duckflow.companion.decision import MainDecision
from duckflow.companion.engine import SPECIALIZED_AGENT
from duckflow.companion.singlecall_protocol import dml_step, is_dml, step_protocol
from duckflow.companion.state import Status, Step
from duckflow.companion.turnmode import MODES as MODES  # re-exported: where they lived before
from duckflow.companion.turnmode import choose_mode as choose_mode
from duckflow.companion.turnmode import inner_model
from duckflow.companion.turnmode import model_size_b as model_size_b
from duckflow.core.chunks import DecisionChunk, DecisionData, delta
from duckflow.llm.types import Message, ToolCall
from duckflow.protocols.grammar import (
    SymOpsGrammarSpec,
    plausible_paths,
    run_commands,
    symops_grammar,
)

if TYPE_CHECKING:
    from duckflow.companion.session import CompanionSession, TurnResult

DATA = Path(__file__).parent / "data" / "singlecall"
EXAMPLE_MARKERS = ("zeta_demo", "zeta_number")  # names only the example uses
MAX_FILES_SHOWN = 4
MAX_FILE_CHARS = 2500
LISTING_LIMIT = 60
SKIP_DIRS = {".git", ".duckflow", "__pycache__", ".venv", "node_modules", ".pytest_cache", ".mypy_cache"}
TEST_FILE = re.compile(r"(^|/)test_[^/]*\.py$|_test\.py$")
MARKER = re.compile(r"^~ next: (DONE|CONTINUE)\s*$", re.M)


@functools.lru_cache(maxsize=1)
def templates() -> tuple[str, str, str]:
    """(system, example task, example reply) from the template files."""
    return tuple((DATA / n).read_text(encoding="utf-8").strip() for n in  # type: ignore[return-value]
                 ("system.txt", "example_task.txt", "example_reply.txt"))


ADDS = re.compile(r"\b(add|append|insert|extend)\b|追加", re.I)


@functools.lru_cache(maxsize=2)
def edit_templates(kind: str) -> tuple[str, str]:
    """(example task, example reply) of an edit with one hunk: `add` appends (empty SEARCH),
    `fix` replaces lines. A small model copies the example's shape, so the step shows the one
    that matches the task's wording."""
    return tuple((DATA / n).read_text(encoding="utf-8").strip() for n in  # type: ignore[return-value]
                 (f"example_{kind}_task.txt", f"example_{kind}_reply.txt"))


def workspace_files(root: Path, limit: int = LISTING_LIMIT) -> list[str]:
    """Relative paths of the workspace's files (hidden and tool folders skipped), sorted."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            found.append(str((Path(dirpath) / name).relative_to(root)))
            if len(found) >= limit:
                return found
    return found


@dataclass
class StepPrompt:
    messages: list[Message]
    grammar: str
    tokens: dict[str, int]
    max_tokens: int


class LineFeed:
    """Streams the reply to the person line by line as it is written (the actions as they come)."""

    def __init__(self, emit: Any) -> None:
        self.emit = emit
        self.pending = ""

    def feed(self, text: str) -> None:
        self.pending += text
        if "\n" in self.pending:
            done, _, self.pending = self.pending.rpartition("\n")
            self.emit(done + "\n")


def _shown_files(session: CompanionSession, files: list[str], task: str) -> dict[str, str]:
    """The files the task names (or all, when the workspace is tiny), with their text (cut)."""
    named = set(plausible_paths(task, []))
    chosen = [f for f in files if f in named or Path(f).name in named]
    if not chosen and len(files) <= 2:
        chosen = files
    shown: dict[str, str] = {}
    for rel in chosen[:MAX_FILES_SHOWN]:
        text = session.runner.read_text(rel)
        if text is not None:
            shown[rel] = text
    return shown


def _file_block(shown: dict[str, str]) -> str:
    parts = []
    for rel, text in shown.items():
        if len(text) > MAX_FILE_CHARS:
            text = text[:MAX_FILE_CHARS] + "\n... (cut)"
        parts.append(f"File {rel}:\n---\n{text.rstrip()}\n---")
    return "\n".join(parts)


def build_step(session: CompanionSession, user_text: str | None) -> StepPrompt:
    """Messages and grammar of one step: system rules, the example exchange, then this task."""
    state = session.state
    task = state.task or (user_text or "")
    root = session.runner.root
    files = workspace_files(root)
    system, ex_task, ex_reply = templates()
    lines = [f"Task: {task}", "Files: " + (", ".join(files) if files else "(none)")]
    shown = _shown_files(session, files, task)
    if shown:
        lines.append(_file_block(shown))
    if state.constraints:
        lines.append("Constraints: " + "; ".join(state.constraints))
    if user_text and user_text.strip() and user_text.strip() != task.strip():
        lines.append(f"The person adds: {user_text.strip()}")
    if state.evidence:
        lines.append("Results so far:\n" + "\n".join(f"- {e}" for e in state.evidence[-4:]))
        lines.append("If the results show the task is complete, write one short thought and "
                     "\"~ next: DONE\". Otherwise fix what failed.")
    user = "\n".join(lines)
    names = set(session.runner.tool_names)
    # an edit changes a shown file with SEARCH/REPLACE hunks (the grammar holds its lines)
    asks_delete = bool(re.search(r"\b(delete|remove|rm)\b", task, re.I))
    editable = {p: t for p, t in shown.items()  # (a delete task: its example would only mislead)
                if len(t) <= MAX_FILE_CHARS and "edit_file" in names and not asks_delete}
    examples = [Message("user", ex_task), Message("assistant", ex_reply)]
    # the examples are chosen at the first step and kept (the prefix stays the same, so the KV
    # cache is reused): the edit example when a file the task names already exists then
    kept = session.__dict__.get("_singlecall_edit_kind")
    if not kept or kept[0] != task:  # (a new task in a chat chooses again)
        kept = session.__dict__["_singlecall_edit_kind"] = (
            task, ("add" if ADDS.search(task) else "fix") if editable else "")
    kind = kept[1]
    if kind:
        ed_task, ed_reply = edit_templates(kind)
        examples += [Message("user", ed_task), Message("assistant", ed_reply)]
    msgs = [Message("system", system), *examples, Message("user", user)]
    verbs = [v for v, tool in (("create", "write_file"), ("edit", "edit_file"), ("run", "execute_shell"),
                               ("test", "run_tests")) if tool in names and (v != "edit" or editable)]
    if "delete_path" in names and files and asks_delete:
        verbs.append("delete")  # only when asked: a delete always waits for the person
    paths = plausible_paths(task, files)
    new_paths = [p for p in paths if not any(m in p for m in EXAMPLE_MARKERS)]
    spec = SymOpsGrammarSpec(
        verbs=verbs, create_paths=new_paths, existing=[f for f in files if f in paths],
        commands=_commands(new_paths),
        new_names=not any(p.endswith(".py") for p in plausible_paths(task, [])),
        min_actions=0 if state.evidence else 1, max_actions=3, edit_files=editable,
        run_args=True,
    )
    if "test" in verbs:
        tests = [p for p in new_paths if TEST_FILE.search(p)]
        if tests:
            spec.extra["test"] = f"\"$ test @ \" ( {' | '.join(_lit(t) for t in tests)} ) \"\\n\""
    grammar = _with_test(symops_grammar(spec), bool(spec.extra))
    count = _counter(session)
    if is_dml(session):  # the same step in DML: its templates, grammar and codec
        return dml_step(session, user, spec, count, max_tokens=700)
    tokens = {"system": count(system), "examples": sum(count(m.content) for m in examples), "task": count(user)}
    return StepPrompt(msgs, grammar, tokens, max_tokens=700)


def _commands(paths: list[str]) -> list[str]:
    """`python3 FILE` for each .py file; a test file runs with pytest (a plain run tests nothing)."""
    tests = {p for p in paths if TEST_FILE.search(p)}
    return [c.replace("python ", "python3 ", 1) for c in run_commands(paths)
            if c.startswith("python ") and c != "python -m pytest -q" and c[7:] not in tests]


def _lit(text: str) -> str:
    from duckflow.protocols.grammar import literal

    return literal(text)


def _with_test(grammar: str, has_test: bool) -> str:
    if not has_test:
        return grammar
    return grammar.replace("action ::= ", "action ::= test | ", 1)


def _counter(session: CompanionSession) -> Any:
    """The model's own tokenizer when it has one (local models), else llm.tokens.count_tokens."""
    own = getattr(inner_model(session.model), "count_tokens", None)
    if callable(own):
        return own
    from duckflow.llm.tokens import count_tokens

    return lambda text: count_tokens(text, session.model.name).tokens


def copied_example(calls: list[ToolCall], task: str) -> bool:
    """A call that carries the example's names (which the task does not use)."""
    for call in calls:
        blob = " ".join(str(v) for v in call.arguments.values())
        if any(m in blob and m not in task for m in EXAMPLE_MARKERS):
            return True
    return False


def _signature(call: ToolCall) -> tuple[str, str]:
    a = call.arguments
    return call.name, str(a.get("path") or a.get("command") or "") + "\x00" + str(a.get("content") or "")


async def single_turn(session: CompanionSession, user_text: str | None) -> TurnResult:
    """One step: ask once (constrained), decode, gate and run, move the state machine."""
    from duckflow.core.errors import CoreError
    from duckflow.llm.constrain import constrained

    state = session.state
    if state.pending_gate:
        session.chunks.notice("approval_pending", "an approval is pending: no step change, no new action")
        return session._result("An approval is pending.", None, [], "pending_user")
    done_before: set[tuple[str, str]] = session.__dict__.setdefault("_singlecall_done", set())
    last: list[ToolCall] = session.__dict__.pop("_singlecall_last", [])
    if state.status != Status.ERROR and not state.pending_gate:
        done_before.update(_signature(c) for c in last)  # they ran (also those run after approval)
    if session.__dict__.pop("_singlecall_then_done", False) and state.step == Step.REVIEW \
            and state.status != Status.ERROR and not user_text \
            and not any(failed_run(e) for e in state.evidence[-max(1, len(last)):]):
        # the step's reply said DONE and its actions ran after their approval: finish
        rec = session._transition(Step.DONE, "single-call: the approved actions ran; the task is complete",
                                  "outcome", Status.SUCCESS)
        if rec.allowed:
            text = f"Done: {state.task}"[:300]
            session._reply(text)
            return session._result(text, None, [], "done")
    step = build_step(session, user_text)
    session.last_tokens = dict(step.tokens)
    enabled = getattr(session, "constrained_decoding", True)
    settings = constrained(session.model, max_tokens=step.max_tokens,
                           grammar=step.grammar, enabled=enabled)
    feed = LineFeed(lambda t: session._emit(delta(SPECIALIZED_AGENT, t)))
    try:
        reply = await session.engine.call("single", step.messages, streamer=feed, specialized=True,
                                          settings=settings)
    except CoreError as exc:
        session.owner.set_status(Status.REQUIRES_USER_INPUT, f"model call failed: {exc.message}")
        text = f"The model call failed: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")
        session._reply(text)
        return session._result(text, None, [], "pending_user")
    raw = reply.text
    proto = step_protocol(session)  # Sym-Ops, or DML for a DML session: codec, marker, thought
    codec = proto.codec
    decoded = codec.decode(raw, session.runner.specs)
    for msg in decoded.errors + decoded.warnings:
        session.chunks.notice("codec", f"{codec.name}: {msg}")
    done_said = proto.said(raw) == "DONE"
    thought = proto.thought_of(raw) or "(no thought given)"
    calls = list(decoded.calls)
    if copied_example(calls, state.task):
        session.chunks.notice("copied_example", "the reply copied the prompt's example; nothing was run")
        calls = []
    from duckflow.companion.context import symops_vitals

    vitals = symops_vitals(raw)
    if vitals:
        session.owner.change("vitals", lambda s: s.vitals.update_from_symops(vitals))
    fresh = [c for c in calls if _signature(c) not in done_before]
    session._emit(DecisionChunk(agent="companion", data=DecisionData(
        rationale=thought, step="EXECUTION" if calls else ("DONE" if done_said else state.step.value),
        pattern="single_call", next_step="done" if done_said else "continue",
        goal_consistency="", constraint_check="", safe_default=False)))
    session.owner.change("decision", lambda s: s.log_decision(f"single-call: {thought}"[:200]))
    d = MainDecision(rationale=thought, goal_consistency="yes", constraint_check="yes",
                     next_step="done" if done_said else "continue", step="EXECUTION",
                     prompt_pattern="base_main_specialized")
    outcomes = []
    if fresh:
        if state.step != Step.EXECUTION:
            first = state.step == Step.PLANNING
            moved = session._transition(Step.EXECUTION, "single-call: act on the reply", "decision")
            if not moved.allowed:
                text = f"Could not start executing from {state.step.value}."
                session._reply(text)
                return session._result(text, d, [], "pending_user")
            if first:
                session._plan(thought, fresh)
        _note_overwrites(session, fresh)
        outcomes = await session._run_calls(fresh, d)
    session.__dict__["_singlecall_last"] = fresh
    finished = _finish(session, done_said, bool(fresh), outcomes)
    if state.pending_gate and done_said:
        session.__dict__["_singlecall_then_done"] = True
    from duckflow.companion.reply import outcome_text

    text = outcome_text(session.state, outcomes) if outcomes else thought
    if finished:
        text = (text + "\n" if outcomes else "") + f"Done: {state.task}"[:300]
    session.owner.change("exchange", lambda s: s.add_exchange(user_text or "(continued)", text))
    session._reply(text)
    nxt = "done" if finished else ("pending_user" if state.status == Status.REQUIRES_USER_INPUT else "continue")
    return session._result(text, d, outcomes, nxt)


def _finish(session: CompanionSession, done_said: bool, acted: bool, outcomes: list[Any]) -> bool:
    """Move to DONE when the model says so and nothing failed; a step that only repeats is done."""
    state = session.state
    ran = [o for o in outcomes if o.status in ("ok", "error", "refused")]
    ok = [o for o in ran if o.status == "ok"]
    if state.pending_gate or (ran and len(ok) != len(ran)) or any(failed_run(o.content) for o in ok):
        return False
    if not acted or done_said:
        if state.step == Step.EXECUTION:
            why = "single-call: the actions ran" if acted else "single-call: the reply ran no action"
            session._transition(Step.REVIEW, why, "outcome", Status.SUCCESS)
        if state.step == Step.REVIEW:
            if not state.memory.files_created and not acted and not done_said:
                return False
            rec = session._transition(Step.DONE, "single-call: the task is complete", "outcome", Status.SUCCESS)
            return rec.allowed
    return False


def failed_run(content: str) -> bool:
    """A command result (JSON from execute_shell / run_tests, or its evidence line
    `… → ok: exit N; …`) that exited non-zero or timed out."""
    import json

    if re.search(r"→ \w+: (exit (-?[1-9]|None)|timed out)\b", content):
        return True
    if '"exit_code"' not in content:
        return False
    try:
        data = json.loads(content)
    except ValueError:
        return bool(re.search(r'"exit_code": [1-9]', content)) or '"timed_out": true' in content
    return isinstance(data, dict) and (bool(data.get("exit_code")) or bool(data.get("timed_out")))


def _note_overwrites(session: CompanionSession, calls: list[ToolCall]) -> None:
    """A create of an existing file is an overwrite: say so (the gate shows its diff)."""
    for call in calls:
        path = call.arguments.get("path")
        if call.name == "write_file" and path and session.runner.read_text(str(path)) is not None:
            session.chunks.notice("overwrite", f"create of an existing file: {path} is overwritten "
                                  "(the approval shows the diff)")
