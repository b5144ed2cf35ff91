"""The context assembler: AgentState → prompt inputs, and a decision's state_delta → AgentState.

Reads only what each layer needs (seed 001 §3.3: "AgentState参照: 必要な情報のみ"), so the
prompt layer never sees the state object itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from duckflow.companion.state import AgentState, Step, clip
from duckflow.prompts.render import PromptInputs

RECENT_TURNS = 3
EVIDENCE_KEPT = 5
FILES_ATTACHED = 3
FILE_CHARS = 4000
FILES_CHARS = 8000


def prompt_inputs(
    state: AgentState, *, evidence: list[str], allowed: list[str], tools: str = ""
) -> PromptInputs:
    mem = state.memory
    pending = ""
    if state.pending_gate and state.pending_job:
        pending = f"job {state.pending_job.get('job_id', '?')}: {state.pending_job.get('summary', '')}"
    summaries = state.summaries(5)
    return PromptInputs(
        session_id=state.session_id,
        conversation_count=state.conversation_count,
        last_updated=time.strftime("%Y-%m-%d %H:%M", time.localtime(state.last_updated)),
        files_created=len(mem.files_created),
        successful_operations=mem.successful_operations,
        learned_patterns=list(mem.learned_patterns),
        user_settings=dict(mem.user_settings),
        past_sessions=[p for p in mem.past_sessions if not p.startswith(f"[{state.session_id[-6:]}]")],
        summaries=summaries,
        step=state.step.value,
        status=state.status.value,
        task=clip(state.task, 200)[0],
        vitals=state.vitals.line(),
        goal=state.goal,
        why_now=state.why_now,
        constraints=list(state.constraints),
        plan_brief=list(state.plan_brief),
        open_questions=list(state.open_questions),
        recent_turns=summaries[-RECENT_TURNS:],  # the same lines as the last of the summaries
        evidence=[clip(e, 300)[0] for e in evidence[-EVIDENCE_KEPT:]],
        context_refs=list(state.context_refs[-8:]),
        pending=pending,
        allowed=allowed,
        tools=tools,
    )


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if str(v).strip()]
    return [str(value)]


def apply_state_delta(state: AgentState, delta: str | dict[str, Any] | None) -> list[str]:
    """Apply the fixed-five updates of a decision; returns what changed (for last_delta)."""
    changed: list[str] = []
    if delta is None:
        return changed
    if isinstance(delta, str):
        if delta.strip():
            state.set_last_delta(delta)
            changed.append("last_delta")
        return changed
    if isinstance(delta.get("goal"), str) and delta["goal"].strip():
        state.set_goal(delta["goal"])
        changed.append("goal")
    if isinstance(delta.get("why_now"), str) and delta["why_now"].strip():
        state.set_why_now(delta["why_now"])
        changed.append("why_now")
    for c in _as_list(delta.get("add_constraint")) + _as_list(delta.get("constraints")):
        if c not in state.constraints:
            state.add_constraint(c)
            changed.append("constraints")
    if "plan_brief" in delta and _as_list(delta["plan_brief"]):
        state.set_plan_brief(_as_list(delta["plan_brief"]))
        changed.append("plan_brief")
    if "open_questions" in delta:
        state.set_open_questions(_as_list(delta["open_questions"]))
        changed.append("open_questions")
    for ref in _as_list(delta.get("context_refs")):
        state.add_context_ref(ref)
        changed.append("context_refs")
    for pattern in _as_list(delta.get("learned")):
        state.memory.learn(pattern)
        changed.append("learned_patterns")
    if changed:
        state.set_last_delta("updated " + ", ".join(dict.fromkeys(changed)))
    return changed


def allowed_next(state: AgentState, table: Any) -> list[str]:
    return [s.value for s in Step if table.is_allowed(state.step, s)]


def file_context(refs: list[str], read: Callable[[str], str | None]) -> str:
    """The current text of the files this task touched last (newest first), for the Specialized call.

    The budgeted layers keep evidence to one line per result; a model that must edit a file
    needs its real lines, so up to three files (4,000 characters each, 8,000 in all) are
    attached to the Specialized request, read fresh from the workspace. Cuts are marked.
    """
    paths = [r[5:] for r in reversed(refs) if r.startswith("file:")]
    parts: list[str] = []
    total = 0
    for path in list(dict.fromkeys(paths))[:FILES_ATTACHED]:
        text = read(path)
        if text is None:
            continue
        room = min(FILE_CHARS, FILES_CHARS - total)
        if room <= 0:
            break
        shown = text if len(text) <= room else text[:room] + f"\n… ({len(text) - room} more characters not shown)"
        parts.append(f"--- {path} ---\n{shown}")
        total += len(shown)
    return ("\n\nCurrent content of the files in play:\n" + "\n".join(parts)) if parts else ""


def symops_vitals(text: str) -> dict[str, Any] | None:
    """The `#c #m #f #s` vitals of a Sym-Ops reply (None when the parser is missing or none given)."""
    import importlib

    try:
        parse = importlib.import_module("duckflow.protocols.symops").parse
    except (ImportError, AttributeError):
        return None
    vitals = parse(text).to_dict().get("vitals")
    return vitals if isinstance(vitals, dict) and any(v is not None for v in vitals.values()) else None
