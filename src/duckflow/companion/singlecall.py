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

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from duckflow.companion import checkask, checks, quietimport, testfirst, testview
from duckflow.companion.decision import MainDecision
from duckflow.companion.editkind import (
    COPIED,
    EXAMPLE_MARKERS,
    copied_example,
    edit_templates,
    templates,
)
from duckflow.companion.editkind import edit_kind as edit_kind  # re-exported: where it lived before
from duckflow.companion.engine import SPECIALIZED_AGENT
from duckflow.companion.fixround import MAX_REPLY, fix_bound, whole_fix
from duckflow.companion.rejected import rejected_lines, rename_correction, symops_write
from duckflow.companion.renames import loop_reply
from duckflow.companion.replycheck import (
    LOOP_PENALTY,
    MAX_REASKS,
    RESAMPLE_TEMPERATURE,
    looping_tail,
    problems,
)
from duckflow.companion.shownfiles import MAX_FILE_CHARS, file_block, shown_files
from duckflow.companion.shownfiles import workspace_files as workspace_files  # re-exported
from duckflow.companion.singlecall_end import (
    ACCEPT,
    Verdict,
    accept,
    after_verdict,
    answered,
    conclude,
    ended,
    no_action,
    run_check,
    step_failed,
)
from duckflow.companion.singlecall_protocol import (
    StepPrompt,
    dml_step,
    is_dml,
    script_commands,
    step_protocol,
    with_test,
)
from duckflow.companion.state import Status, Step
from duckflow.companion.taskchecks import TEST_FILE, asks_answer, guarded_tests
from duckflow.companion.turnmode import MODES as MODES  # re-exported: where they lived before
from duckflow.companion.turnmode import choose_mode as choose_mode
from duckflow.companion.turnmode import inner_model
from duckflow.companion.turnmode import model_size_b as model_size_b
from duckflow.core.chunks import DecisionChunk, DecisionData, delta
from duckflow.core.model_call import Feed
from duckflow.llm.types import Message, ToolCall
from duckflow.protocols.grammar import SymOpsGrammarSpec, literal, plausible_paths, symops_grammar
from duckflow.toolkinds import KINDS, RUN_TOOLS

if TYPE_CHECKING:
    from duckflow.companion.host import TurnHost
    from duckflow.companion.turnctx import TurnResult

MARKER = re.compile(r"^~ next: (DONE|CONTINUE)\s*$", re.M)


def build_step(session: TurnHost, user_text: str | None) -> StepPrompt:
    """Messages and grammar of one step: system rules, the example exchange, then this task."""
    state = session.state
    task = state.task or (user_text or "")
    root = session.runner.root
    files = workspace_files(root)
    system, ex_task, ex_reply = templates()
    project = session.project_text()  # AGENTS.md: after the fixed rules, the same every step
    if project:
        system = f"{system}\n\n{project}"
    lines = [f"Task: {task}", "Files: " + (", ".join(files) if files else "(none)")]
    shown = shown_files(session.runner.read_text, files, task)
    lines += testview.lines_of(testview.beside(files, list(shown), session.runner.read_text))  # (kept before
    if shown:  # the files, which change between steps: the prompt's prefix stays the same)
        lines.append(file_block(shown))
    lines += quietimport.step_lines(session, task, files)  # what runs on import, where that is the task
    if state.constraints:
        lines.append("Constraints: " + "; ".join(state.constraints))
    if user_text and user_text.strip() and user_text.strip() != task.strip():
        lines.append(f"The person adds: {user_text.strip()}")
    lines += rejected_lines(session.owner.plans.denied_calls())  # the proposal and their words
    if state.evidence:
        lines.append("Results so far:\n" + "\n".join(f"- {e}" for e in state.evidence[-4:]))
    log = checks.log_of(session)
    ask_call = session.turn.take_ask_call()
    calls_to = checkask.call_modules(session, task, log)
    first = testfirst.target(session, log) if "execute_shell" in session.runner.tool_names else None
    if first:  # the task names no result: the assertion the change must pass comes first
        log.asked_expect += 1
        lines += testfirst.ask_lines(*first)
    else:
        lines += testfirst.reminder(log) + checkask.check_lines(session, log, ask_call and bool(calls_to), calls_to, task)
    user = "\n".join(lines)
    names = set(session.runner.tool_names)
    # an edit changes a shown file with SEARCH/REPLACE hunks (the grammar holds its lines)
    asks_delete = bool(re.search(r"\b(delete|remove|rm)\b", task, re.I))
    guarded = guarded_tests(task, list(shown), plausible_paths(task, files)) | checks.protected_paths(session)
    editable = {p: t for p, t in shown.items()  # (a delete task: its example would only mislead)
                if len(t) <= MAX_FILE_CHARS and "edit_file" in names and not asks_delete and p not in guarded}
    examples = [Message("user", ex_task), Message("assistant", ex_reply)]
    # the examples are chosen at the first step and kept (the prefix stays the same, so the KV
    # cache is reused): the edit example when a file the task names already exists then
    kept = session.turn.edit_kind
    if not kept or kept[0] != task:  # (a new task in a chat chooses again)
        kept = session.turn.edit_kind = (task, edit_kind(task) if editable else "")
    kind = kept[1]
    if kind:
        ed_task, ed_reply = edit_templates(kind)
        examples += [Message("user", ed_task), Message("assistant", ed_reply)]
    msgs = [Message("system", system), *examples, Message("user", user)]
    verbs = [v for v, tool in (("create", "write_file"), ("edit", "edit_file"), ("run", "execute_shell"),
                               ("test", "run_tests")) if tool in names and (v != "edit" or editable)]
    if "delete_path" in names and files and asks_delete:
        verbs.append("delete")  # only when asked: a delete always waits for the person
    fixing = log.passed is False and bool({"create", "edit"} & set(verbs))
    if fixing:  # a fix round: only a change is useful (the loop runs the failed check again after it)
        verbs = [v for v in verbs if v in ("create", "edit")]
        whole = whole_fix(log.changed, editable)
        if whole and "create" in verbs and whole in plausible_paths(task, files):
            verbs, editable = ["create"], {}  # a small file is written again whole: fewer tokens than
            user += f"\nWrite {whole} again, whole and fixed: $ create @ {whole}."  # a SEARCH and its REPLACE
            msgs[-1] = Message("user", user)
    paths = plausible_paths(task, files)
    new_paths = [p for p in paths if not any(m in p for m in EXAMPLE_MARKERS)]
    spec = SymOpsGrammarSpec(  # (a guarded test may be run, not written)
        verbs=verbs, create_paths=[p for p in new_paths if p not in guarded],
        existing=[f for f in files if f in paths and f not in guarded],
        commands=script_commands(new_paths),
        new_names=not any(p.endswith(".py") for p in plausible_paths(task, [])),
        min_actions=0 if (state.evidence and not fixing) or asks_answer(task) else 1,
        max_actions=1 if fixing else 3,  # a fix round: one change, then the loop checks it again
        edit_files=editable,
        run_args=True, tools=[] if fixing else [n for n in names if n not in KINDS],  # an MCP server's tools
    )
    if "test" in verbs:
        tests = [p for p in new_paths if TEST_FILE.search(p)]
        if tests:
            spec.extra["test"] = f"\"$ test @ \" ( {' | '.join(literal(t) for t in tests)} ) \"\\n\""
    grammar = with_test(symops_grammar(spec), bool(spec.extra))
    run_only = session.turn.take_run_only()
    if first and "run" in verbs:  # only that assertion
        grammar = testfirst.grammar(grammar, *first)
    elif run_only and "run" in verbs:  # asked to run a script with arguments: only that, then
        grammar = checkask.run_only_grammar(grammar, run_only)
    elif calls_to and "run" in verbs:  # a call of the function: `python3 -c "import m; print(m.f(2))"`
        only = ask_call and bool(calls_to)
        grammar = re.sub(r"^action ::= .*$", "action ::= callrun" if only else r"\g<0> | callrun",
                         grammar, count=1, flags=re.M)
        if only:
            grammar = re.sub(r"action\{0,", "action{1,", grammar, count=1)
        grammar += 'callrun ::= "$ run @ " callcheck "\\n"\n' + checkask.call_commands_rule(calls_to)
    count = _counter(session)
    # a fix round rewrites at most a file it was shown: its reply is bounded by that file's size
    bound = fix_bound([count(t) for t in editable.values()] or [count(t) for t in shown.values()]) \
        if fixing else MAX_REPLY
    if is_dml(session):  # the same step in DML: its templates, grammar and codec
        return dml_step(session, user, spec, count, max_tokens=bound)
    tokens = {"system": count(system), "examples": sum(count(m.content) for m in examples), "task": count(user)}
    return StepPrompt(msgs, grammar, tokens, max_tokens=bound)


def _counter(session: TurnHost) -> Any:
    """The model's own tokenizer when it has one (local models), else llm.tokens.count_tokens."""
    own = getattr(inner_model(session.model), "count_tokens", None)
    if callable(own):
        return own
    from duckflow.llm.tokens import count_tokens

    return lambda text: count_tokens(text, session.model.name).tokens


async def single_turn(session: TurnHost, user_text: str | None) -> TurnResult:
    """One step: ask once (constrained; re-asked when unusable), decode, gate and run, then end
    honestly: DONE only after a check (singlecall_end)."""
    from duckflow.core.errors import CoreError

    state = session.state
    if state.pending_gate:
        session.chunks.notice("approval_pending", "an approval is pending: no step change, no new action")
        return session._result("An approval is pending.", None, [], "pending_user")
    log = checks.log_of(session)
    if user_text and ACCEPT.match(user_text) and (log.changed or log.passed is False):
        if accept(session):  # the person takes the result as it is
            return ended(session, [])
    command = session.turn.take_check_next()
    if command and not user_text:  # a check the loop chose: run it, no model call
        return await run_check(session, command)
    if session.turn.take_then_done() and not user_text \
            and state.step == Step.REVIEW and state.status != Status.ERROR and log.passed is not False:
        # the step's reply said DONE and its actions ran after their approval
        first_verdict = conclude(session, workspace_files(session.runner.root))
        if first_verdict != "continue" or session.turn.check_next:
            return await after_verdict(session, first_verdict, [], None)
    if log.passed is False:
        if user_text:  # the person said what to change: their words get the fixes again
            log.fixes = 0
        if log.fixes >= checks.MAX_FIXES:
            return await after_verdict(session, conclude(session, []), [], None)
        log.fixes += 1  # one of the bounded chances to fix what the check found
    step = build_step(session, user_text)
    session.last_tokens = dict(step.tokens)
    try:
        raw, calls, done_said = await _ask(session, step)
    except CoreError as exc:
        session.owner.set_status(Status.REQUIRES_USER_INPUT, f"model call failed: {exc.message}")
        text = f"The model call failed: {exc.message}" + (f" ({exc.hint})" if exc.hint else "")
        session._reply(text)
        return session._result(text, None, [], "pending_user")
    proto = step_protocol(session)
    asked = session.turn.take_asked()
    if asked:  # a question for the person (companion/asking.py): the task waits for the answer
        from duckflow.companion.asking import pose

        pose(session, asked)
        said = proto.thought_of(raw) or "I need your answer before I go on."
        session.owner.change("exchange", lambda s: s.add_exchange(user_text or "(continued)", said))
        session._reply(said)
        return session._result(said, None, [], "pending_user")
    unusable = session.turn.take_unusable()
    thought = proto.thought_of(raw) or (f"I couldn't use the model's reply, even after asking again: {unusable}"
                                        if unusable else "")
    from duckflow.companion.context import symops_vitals

    vitals = symops_vitals(raw)
    if vitals:
        session.owner.change("vitals", lambda s: s.vitals.update_from_symops(vitals))
    fresh = [c for c in calls if checks.signature(c) not in log.done]
    if log.passed is False:  # a fix round that wrote a file as it was before: the next round is told
        log.same_write = next((str(c.arguments.get("path")) for c in calls if c not in fresh
                               and c.name in ("write_file", "edit_file")), log.same_write)
    session._emit(DecisionChunk(agent="companion", data=DecisionData(
        rationale=thought or "(no thought given)", step="EXECUTION" if calls else ("DONE" if done_said else state.step.value),
        pattern="single_call", next_step="done" if done_said else "continue",
        goal_consistency="", constraint_check="", safe_default=False)))
    session.owner.change("decision", lambda s: s.log_decision(f"single-call: {thought}"[:200]))
    d = MainDecision(rationale=thought or "(no thought given)", goal_consistency="yes", constraint_check="yes",
                     next_step="done" if done_said else "continue", step="EXECUTION",
                     prompt_pattern="base_main_specialized")
    if not fresh and done_said and thought and asks_answer(state.task) and not checks.did_something(log):
        return answered(session, thought, d, user_text)  # a question about the code, answered
    outcomes = []
    if fresh:
        if state.step != Step.EXECUTION:
            first = state.step == Step.PLANNING and session.owner.plans.latest() is None
            # acting on a reply is not the model changing its mind: no limit of moves per message
            # (a valid reply after a cut-off or unusable one was refused here, stranding the task)
            moved = session._transition(Step.EXECUTION, "single-call: act on the reply", "outcome")
            if not moved.allowed:
                text = f"Could not start executing from {state.step.value}."
                session._reply(text)
                return session._result(text, d, [], "pending_user")
            if first:
                session._plan(thought, fresh)
        _note_overwrites(session, fresh)
        outcomes = await session._run_calls(fresh, d)
        log.done.update(checks.signature(o.call) for o in outcomes if o.status == "proposed")  # not again
    if state.pending_gate:
        if done_said:
            session.turn.then_done = True
        verdict: Verdict = "continue"
    elif step_failed(outcomes) or (fresh and not done_said and any(o.status != "proposed" for o in outcomes)):
        verdict = "continue"
    elif not any(o.status != "proposed" for o in outcomes) and not done_said and log.passed is None:
        verdict = no_action(session)
    else:
        verdict = conclude(session, workspace_files(session.runner.root))
    return await after_verdict(session, verdict, outcomes, d, thought, user_text)


async def _ask(session: TurnHost, step: StepPrompt) -> tuple[str, list[ToolCall], bool]:
    """The model's reply for `step`, re-asked (at most `MAX_REASKS` times, with the error and
    the file's closest lines) while it cannot be used: (raw reply, usable calls, said DONE)."""
    from duckflow.companion.decision import LineFeed, Silent
    from duckflow.llm.constrain import constrained

    state = session.state
    settings = constrained(session.model, max_tokens=step.max_tokens, grammar=step.grammar,
                           enabled=getattr(session, "constrained_decoding", True))
    log = checks.log_of(session)
    if log.same_write and settings is not None:  # the last fix wrote the file as it was: at a low
        seed = int(settings.extra.get("seed") or 0) + log.fixes  # temperature this prompt, told so,
        settings = replace(settings, temperature=RESAMPLE_TEMPERATURE,  # still gave the same copy
                           extra={**settings.extra, "seed": seed})
    proto = step_protocol(session)
    messages = list(step.messages)
    denied = session.owner.plans.denied_calls()
    written = loop_reply(session, proto, denied, workspace_files(session.runner.root)) or _renamed(session, proto, denied)
    if written is not None:
        return written
    feed: Feed = LineFeed(lambda t: session._emit(delta(SPECIALIZED_AGENT, t)))
    said_before = ""
    for round_ in range(MAX_REASKS + 1):
        reply = await session.engine.call("single", messages, streamer=feed, specialized=True, settings=settings)
        raw = reply.text
        decoded = proto.codec.decode(raw, session.runner.specs)
        for msg in decoded.errors + decoded.warnings:
            session.chunks.notice("codec", f"{proto.codec.name}: {msg}")
        calls = list(decoded.calls)
        if decoded.questions and not reply.cut_off:  # it asks the person: nothing runs until they answer
            session.turn.asked = list(decoded.questions)
            return raw, [], False
        copied = copied_example(calls, state.task)
        if copied:
            session.chunks.notice("copied_example", "the reply copied the prompt's example; nothing was run")
            calls = []
        usable, again = problems(calls, decoded.errors, session.runner.read_text, denied,
                                 wants_action=not state.evidence and not asks_answer(state.task))
        again = COPIED if copied else again  # (not "no action": it had one, the example's)
        tests = [why for why in (checks.refused_test_write(session, c) for c in usable) if why]
        if tests:  # the task's tests are the expectation: a reply that edits one is asked again
            usable = [c for c in usable if not checks.refused_test_write(session, c)]
            again = tests[0]
        if not again and log.passed is False and usable and all(c.name in RUN_TOOLS for c in usable):
            again = (f"The check failed ({log.last.removeprefix('check failed: ')}) and nothing changed "
                     "since: running it again gives the same error. Change the code first.")
        if reply.cut_off:  # ended at its token bound, not by the model: nothing of it is used
            usable = []
            again = again or ("Your reply was cut off at its length limit before it ended, so nothing "
                              "of it was used. Answer again, shorter: only the lines the task needs.")
        if not again:
            return raw, usable, proto.said(raw) == "DONE"
        looped = looping_tail(raw) if decoded.errors or reply.cut_off else ""  # cut off while repeating a line
        if looped:  # stuck on one line until cut off: say that (not the cut-off block it caused)
            again = (f"Your last reply repeated `{looped[:60]}` {raw.count(looped)} times and was cut off. "
                     "Write each line once: a short file with only the lines the task needs.")
            if settings is not None:  # and the next try is penalised for repeating itself
                settings = replace(settings, extra={**settings.extra, "repeat_penalty": LOOP_PENALTY})
        elif again == said_before and settings is not None:
            # the same unusable reply twice: at temperature 0 a third try would give it again
            seed = int(settings.extra.get("seed") or 0) + round_ + 1
            settings = replace(settings, temperature=RESAMPLE_TEMPERATURE, extra={**settings.extra, "seed": seed})
        said_before = again
        if round_ == MAX_REASKS:
            session.chunks.notice("reply_unusable", f"still unusable after {MAX_REASKS} re-asks: {again}"[:300])
            session.turn.unusable = again.splitlines()[0][:200]
            return raw, usable, proto.said(raw) == "DONE" and not (len(usable) < len(calls)) and not reply.cut_off
        session.chunks.notice("reasked", f"the reply cannot be used as it is; asking again: {again}"[:300])
        # a looped reply is not shown back (the model would go on repeating it): the task is asked
        # again with what to avoid
        messages = [*step.messages[:-1], Message("user", f"{step.messages[-1].content}\n{again}")] if looped \
            else [*step.messages, Message("assistant", raw), Message("user", again)]
        feed = Silent()
    raise AssertionError("unreachable")


def _renamed(session: TurnHost, proto: Any, denied: list[Any]) -> tuple[str, list[ToolCall], bool] | None:
    """"No — call it greet.py instead": the denied write again under the new name, its content kept
    (companion/rejected.py), written by the loop; None when the words ask for more than that."""
    if proto.codec.name != "symops":
        return None
    found = rename_correction(denied, lambda p: session.runner.read_text(p) is not None,
                              set(checks.log_of(session).written))
    if found is None:
        return None
    old, new, content = found
    session.chunks.notice("rename", f"Proposing the same content as {new}, as you said (no model call)")
    raw = symops_write(new, content, f"as the person said: the content proposed for {old}, named {new}")
    return raw, list(proto.codec.decode(raw, session.runner.specs).calls), True


def _note_overwrites(session: TurnHost, calls: list[ToolCall]) -> None:
    """A create of an existing file is an overwrite: say so (the gate shows its diff)."""
    for call in calls:
        path = call.arguments.get("path")
        if call.name == "write_file" and path and session.runner.read_text(str(path)) is not None:
            session.chunks.notice("overwrite", f"create of an existing file: {path} is overwritten "
                                  "(the approval shows the diff)")
