"""Runs tool calls for the companion: reads at once, everything else through the gate first.

For each call: unknown tool → error; a guessed call (`executable=False`) → proposed, never
run; read_file / list_files / search_code → run (the workspace guard still checks the path);
write, edit, delete, move, directory creation, shell and tests → `Gate.submit` with the five
points of seed 001 §8.2 (intent, rationale, impact and alternatives computed in fivepoints.py,
unified diff); a write that empties a file, removes most of it or changes a file the task did
not name is marked destructive (risk high: a person decides); allowed or auto-approved → run; pending → wait for the person; refused → error result.
Around every run that is not a read, the task's tests are kept and put back if it changed them
(companion/testguard.py): the outcome is then refused, with the reason for the model.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from duckflow.companion import testguard
from duckflow.companion.effectscheck import COMMAND_TOOLS, run_watched
from duckflow.companion.fivepoints import alternatives_text, edit_preview, impact_of, write_hazard
from duckflow.companion.taskchecks import TEST_FILE
from duckflow.core.tools import Tool
from duckflow.gate import Gate
from duckflow.llm.types import ToolCall, ToolSpec
from duckflow.toolkinds import READ_KINDS, READ_TOOLS, policy_class

RESULT_MAX = 4000

Status = Literal["ok", "error", "pending", "refused", "proposed"]


def bounded(content: str) -> str:
    """A tool's result as the session keeps it: at most RESULT_MAX characters, a cut said. A
    command's JSON result stays JSON: its stdout and stderr are cut in the middle, keeping their
    heads (a test run's first failure) and tails (its summary), so that its exit code and
    output can still be read (cut as text, a failed test run read as a run that timed out with
    no output)."""
    if len(content) <= RESULT_MAX:
        return content
    shortened = _bounded_command(content)
    if shortened is not None:
        return shortened
    return content[:RESULT_MAX - 60] + f"\n[result cut at {RESULT_MAX - 60:,} of {len(content):,} characters]"


def command_result(content: str) -> dict[str, Any] | None:
    """A tool result read as a command's result (a JSON object with `exit_code`), else None."""
    import json

    if not content.startswith("{") or '"exit_code"' not in content:
        return None
    try:
        data = json.loads(content)
    except ValueError:
        return None
    return data if isinstance(data, dict) and "exit_code" in data else None


def _bounded_command(content: str) -> str | None:
    import json

    data = command_result(content)
    if data is None:
        return None
    outputs = [k for k in ("stdout", "stderr") if isinstance(data.get(k), str) and data[k]]
    rest = len(json.dumps({k: v for k, v in data.items() if k not in outputs}))
    room = (RESULT_MAX - rest - 200) // max(1, len(outputs))  # (JSON escapes counted below)
    for key in outputs:
        text = data[key]
        keep = room
        while keep > 100 and len(json.dumps(_middle_cut(text, keep))) > room:
            keep = keep * 4 // 5
        data[key] = _middle_cut(text, keep)
    out = json.dumps(data)
    return out if len(out) <= RESULT_MAX else None


def _middle_cut(text: str, keep: int) -> str:
    """`text` with its middle cut out when longer than `keep` characters (the cut said)."""
    if len(text) <= keep:
        return text
    head = keep * 3 // 5
    tail = keep - head
    return f"{text[:head]}\n[… {len(text) - keep:,} characters cut …]\n{text[-tail:]}"


@dataclass
class CallOutcome:
    call: ToolCall
    status: Status
    content: str = ""
    job_id: str | None = None
    request: dict[str, Any] | None = None
    duration_ms: float = 0.0  # time in the tool
    gate_ms: float = 0.0  # time in the gate (risk, job, audit)
    unchanged: bool = False  # a write or edit that would leave the file as it is: not run, no card
    restored: tuple[str, ...] = ()  # the task's tests it changed, put back (or never applied, boxed)
    kept_note: str = ""  # the one line the person reads about that, or about an assertion kept (hold)

    def line(self, limit: int = 100) -> str:
        args = ", ".join(f"{k}={str(v)[:30]!s}" for k, v in self.call.arguments.items() if k != "content")
        head = f"{self.call.name}({args}) → {self.status}"
        body = command_summary(self.content, limit) or " ".join(self.content.split())
        return f"{head}: {body}"[:limit] if body else head[:limit]


def command_summary(content: str, limit: int) -> str | None:
    """A command's result as `exit N; stdout: …; stderr: …` with the ENDS of the outputs (where
    a traceback names the error), or None when `content` is not a command result."""
    data = command_result(content)
    if data is None:
        return None
    parts = ["timed out" if data.get("timed_out") else f"exit {data.get('exit_code')}"]
    room = max(40, limit // 2 - 30)
    for key in ("stdout", "stderr"):
        text = " ".join(str(data.get(key) or "").split())
        if text:
            parts.append(f"{key}: " + (text if len(text) <= room else "…" + text[-room:]))
    if data.get("ran") is False and data.get("note"):
        parts.append(str(data["note"]))
    return "; ".join(parts)


@dataclass
class ActionRunner:
    """Holds the workspace tools and the gate for one session."""

    root: Path
    tools: Sequence[Tool]
    gate: Gate
    session_id: str = ""
    by: str = "duckflow-companion"
    engine: Any = None  # the session's EngineLoop: runs the calls on core's tool runner
    sandbox: str = "auto"  # workspace.sandbox: "none" (or no bubblewrap) means plain mode
    written: set[str] = field(default_factory=set)  # files this session wrote (write/edit_file)
    created: set[str] = field(default_factory=set)  # ... that did not exist before it (effectscheck.py)
    _index: dict[str, Tool] = field(default_factory=dict, init=False)
    specs: list[ToolSpec] = field(default_factory=list, init=False)
    _guard: Any = field(default=None, init=False)
    before_run: Callable[[], None] = field(default=lambda: None, init=False)  # before every tool run
    named: tuple[str, ...] | None = None  # the files the task names (None: it names none)
    guarded: Callable[[], set[str]] = field(default=set, init=False)  # the task's tests (testguard.py)
    hold: Callable[[ToolCall], str] = field(default=lambda call: "", init=False)  # testfirst.hold

    def __post_init__(self) -> None:
        self._index = {t.name: t for t in self.tools}
        self.specs = [t.spec for t in self.tools]  # built once per session (JSON schemas)

    @property
    def tool_names(self) -> list[str]:
        return list(self._index)

    def guard(self) -> Any:
        """The session's WorkspaceGuard of `root` (made once: resolving the root costs ~60 us;
        every check still walks the path from the root's descriptor)."""
        if self._guard is None:
            from duckflow.workspace.guard import WorkspaceGuard

            self._guard = WorkspaceGuard(self.root)
        return self._guard

    def plain(self) -> bool:
        """True when there is no box to run code in (workspace/box.py): then no command that
        runs code is auto-approved."""
        from duckflow.workspace.box import backend

        return backend(self.sandbox) is None

    def op_class(self, name: str) -> str:
        return policy_class(name)  # write, delete or execute pass the gate (policy.GATED_OPS)

    # -- the five points ----------------------------------------------------------------
    def changes_nothing(self, call: ToolCall) -> str:
        """The path a write or edit would leave exactly as it is ('' when it changes something)."""
        if call.name not in ("write_file", "edit_file"):
            return ""
        path = str(call.arguments.get("path") or "")
        old = self.read_text(path) if path else None
        content = call.arguments.get("content")
        if old is None or not isinstance(content, str):
            return ""
        if call.name == "write_file":
            return path if content == old else ""
        from duckflow.protocols.editblocks import apply_hunks, parse_hunks

        hunks = parse_hunks(content)
        applied = apply_hunks(old, hunks) if hunks else None
        return path if applied is not None and applied.ok and applied.text == old else ""

    def read_text(self, rel: str) -> str | None:
        """A workspace file's text through the guard (None when refused, missing or not a file)."""
        try:
            verdict = self.guard().check(rel, "read")
            if not verdict.allowed or verdict.resolved is None or not verdict.resolved.is_file():
                return None
            return verdict.resolved.read_text(encoding="utf-8", errors="replace")
        except Exception:
            return None

    def after_text(self, call: ToolCall) -> str | None:
        """A write's or edit's file text once it ran (None: not a write, or hunks that do not apply)."""
        content = str(call.arguments.get("content", ""))
        if call.name == "write_file":
            return content
        from duckflow.protocols.editblocks import apply_hunks, parse_hunks

        hunks = parse_hunks(content) if call.name == "edit_file" else None
        if hunks is None:
            return content if call.name == "edit_file" else None
        applied = apply_hunks(self.read_text(str(call.arguments.get("path") or "")) or "", hunks)
        return applied.text if applied.ok else None

    def write_hazard(self, call: ToolCall) -> str | None:
        if call.name not in ("write_file", "edit_file"):
            return None
        old = self.read_text(str(call.arguments.get("path") or ""))
        return write_hazard(call, old, self.after_text(call), self.named)

    def diff_preview(self, call: ToolCall) -> str:
        from duckflow.gate.diff import unified_diff

        a = call.arguments
        path = str(a.get("path") or a.get("src") or "")
        if call.name in ("write_file", "edit_file") and path:
            old = self.read_text(path)
            content = str(a.get("content", ""))
            if call.name == "edit_file" and old is not None:
                return edit_preview(path, old, content, unified_diff)
            return unified_diff(path, old, content)
        if call.name == "delete_path" and path:
            return unified_diff(path, self.read_text(path) or "", None)
        if call.name in ("execute_shell", "run_tests"):
            return f"$ {a.get('command') or a.get('cmd') or a.get('args') or 'run the tests'}"
        if call.name == "move_path":
            return f"rename {a.get('src', '')} -> {a.get('dst', '')}"
        return ""

    def submit(self, call: ToolCall, *, intent: str, rationale: str, task_type: str | None = None,
               alternatives: list[str] | None = None) -> Any:
        return self._submit(call, intent=intent, rationale=rationale, task_type=task_type,
                            alternatives=alternatives)[0]

    def _submit(self, call: ToolCall, *, intent: str, rationale: str,
                task_type: str | None = None, alternatives: list[str] | None = None) -> tuple[Any, float]:
        """Submit to the gate; returns (outcome, ms spent inside Gate.submit)."""
        from duckflow.gate.guarded import guarded_operation

        remote = self._index.get(call.name)
        if getattr(remote, "server", None):  # an MCP server's tool: its own operation, no paths of ours
            return self._submit_mcp(call, remote, intent=intent, rationale=rationale, alternatives=alternatives)
        hazard = self.write_hazard(call)  # emptying, removing most, a file the task did not name
        op = guarded_operation(call.name, call.arguments, self.guard(), task_type=task_type,
                               boxed=call.name in COMMAND_TOOLS and not self.plain(),
                               **({"destructive": hazard} if hazard else {}))
        if op.kind in ("execute", "test"):  # the auto-approve list, with this session's context
            from dataclasses import replace

            from duckflow.gate.allowlist import unlisted

            op = replace(op, allow=unlisted(op.command, tool=call.name, written=self.written,
                                            plain=self.plain(), read_text=self.read_text,
                                            root=self.root))
        diff = self.diff_preview(call)
        impact = impact_of(call, self.root, diff)
        if hazard:
            impact = f"{hazard}; {impact}"
        t0 = time.perf_counter()
        outcome = self.gate.submit(
            op, intent=intent, rationale=rationale, impact=impact,
            alternatives=alternatives_text(alternatives or []),
            diff_preview=diff, requested_by=self.by,
        )
        return outcome, (time.perf_counter() - t0) * 1000

    def _submit_mcp(self, call: ToolCall, tool: Any, *, intent: str, rationale: str,
                    alternatives: list[str] | None) -> tuple[Any, float]:
        """An MCP tool that is not read-only: asked like a command (never on the auto-approve
        list; destructive unless the server says it is not), its call shown on the card."""
        import json

        from duckflow.gate.operation import Operation

        shown = json.dumps(call.arguments, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 1500 else shown[:1500] + " …"
        op = Operation(kind="execute", tool=call.name, allow=f"a tool of the MCP server {tool.server}",
                       destructive=(f"the MCP server {tool.server} does not say {tool.remote} is safe to repeat "
                                    "or undo" if tool.destructive else None))
        t0 = time.perf_counter()
        outcome = self.gate.submit(
            op, intent=intent, rationale=rationale,
            impact=f"runs {tool.remote} on the MCP server {tool.server}; not undoable by Duckflow",
            alternatives=alternatives_text(alternatives or []),
            diff_preview=f"{tool.server}: {tool.remote}({shown})", requested_by=self.by)
        return outcome, (time.perf_counter() - t0) * 1000

    # -- running ------------------------------------------------------------------------
    async def run(self, call: ToolCall, *, approved: bool = False,
                  approval: str | None = None, readonly: tuple[str, ...] = (),
                  staging: str = "") -> CallOutcome:
        """Run one call through core's tool runner. `approved`: a person said yes (the workspace
        tools may then do what needs a person, e.g. a destructive command); `approval` says who
        answered the gate (`person:...` or `auto:...`) and reaches the tool as
        `workspace_approval`."""
        if call.name not in self._index:
            known = ", ".join(sorted(self._index)) or "none"
            return CallOutcome(call, "error", f"unknown tool '{call.name}' (available: {known})")
        if self.engine is None:
            raise RuntimeError("ActionRunner.engine is not set: tools run on core's loop (CompanionSession sets it)")
        self.before_run()  # the session stores its state first (its work, outside the tool's time)
        t0 = time.perf_counter()
        path = str(call.arguments.get("path") or "") if call.name in ("write_file", "edit_file") else ""
        new = bool(path) and not os.path.lexists(self.root / path)
        try:  # the task's tests as they are, to put back whatever this does to them
            kept = testguard.snapshot(self.root, self.guarded()) if call.name not in READ_TOOLS else {}
        except Exception as exc:  # fail closed: a test that cannot be kept is not risked
            return CallOutcome(call, "refused", f"not run: the task's tests could not be kept before it "
                               f"({type(exc).__name__}: {exc})")
        result = await self.engine.run_tool(call, approved=approved, approval=approval,
                                            readonly=readonly, staging=staging)
        back, lost = testguard.restore(self.root, kept) if kept else ([], [])
        if back or lost:
            return self.kept_back(CallOutcome(call, "ok", bounded(result.content),
                                              duration_ms=(time.perf_counter() - t0) * 1000), back, lost=lost)
        if path and not result.is_error:
            from duckflow.gate.operation import normalize_path

            self.written.add(normalize_path(path))
            if new:
                self.created.add(normalize_path(path))
        return CallOutcome(call, "error" if result.is_error else "ok", bounded(result.content),
                           duration_ms=(time.perf_counter() - t0) * 1000)

    def kept_back(self, out: CallOutcome, paths: list[str], *, reached: bool = True,
                  lost: list[str] | None = None) -> CallOutcome:
        """`out` of an action that changed the task's tests (put back, or never applied when boxed):
        refused, with the reason first, so no check counts it and the model reads why."""
        code = [p for p in self.named or () if p.endswith(".py") and not TEST_FILE.search(p)]
        out.status, out.restored = "refused", (*paths, *(p.split(" (")[0] for p in lost or []))
        out.content = testguard.said_to_model(list(out.restored), code, reached=reached, lost=bool(lost)) \
            + "\n" + out.content
        out.kept_note = testguard.said_to_person(paths, reached=reached, lost=lost)
        return out

    async def run_auto(self, call: ToolCall, by: str) -> CallOutcome:
        """Run an auto-approved call: a command under the effects check (effectscheck.py)."""
        if call.name in COMMAND_TOOLS and call.name in self._index:
            return await run_watched(self, call, f"auto:{by}", CallOutcome)
        return await self.run(call, approved=False, approval=f"auto:{by}")

    def _decided_by(self, job_id: str | None) -> str:
        job = self.gate.get(job_id) if job_id else None
        by = job.decision.by if job is not None and job.decision is not None else "gate"
        return by.removeprefix("auto:")

    async def run_approved(self, job_id: str, call: ToolCall, *, rationale: str = "") -> CallOutcome:
        """Run the call of a job answered yes. A person's grant lets the tool do what needs a
        person; an auto-approval never does (the gate never auto-approves such a job, and the
        tool is told `approved=False` as a second line). Anything else is refused.

        What was approved is what runs (gate/binding.py): a job asked in another workspace is
        refused; when a path changed since the job was asked, the call is not run and the
        gate is asked again (a new job, shown against the content as it is now).
        """
        from duckflow.gate.binding import stale
        job = self.gate.get(job_id)
        by = job.decision.by if job.decision is not None else "?"
        found = stale(self.root, self.guard(), job.request.operation.extra)
        if found is not None and job.status in ("granted", "auto_approved"):
            kind, why = found
            if kind == "workspace":
                return CallOutcome(call, "refused", f"job {job_id[:8]} not run: {why}", job_id)
            again = await self.process(call, intent=f"{call.name} (asked again: the file changed)",
                                       rationale=rationale or job.request.rationale)
            again.content = f"job {job_id[:8]} not run: {why}. " + (
                "Asking again with the current content." if again.status == "pending" else again.content)
            return again
        if job.status == "granted":
            return await self.run(call, approved=True, approval=f"person:{by}")
        if job.status == "auto_approved":
            return await self.run_auto(call, by.removeprefix("auto:"))
        return CallOutcome(call, "refused", f"job {job_id[:8]} is {job.status}, not approved; not run",
                           job_id)

    async def process(
        self, call: ToolCall, *, intent: str, rationale: str, run_mutations: bool = True,
        alternatives: list[str] | None = None,
    ) -> CallOutcome:
        """One call through the rules above (run_mutations=False: propose writes, run reads only)."""
        if call.name not in self._index:
            return await self.run(call)
        if not call.executable:
            return CallOutcome(call, "proposed", "guessed from the model's text: proposed, not run")
        if call.name in READ_TOOLS or self._index[call.name].kind in READ_KINDS:
            return await self.run(call)  # reads (an MCP tool read-only by its annotations or your config)
        if not run_mutations:
            return CallOutcome(call, "proposed", "planned: runs in EXECUTION after approval")
        held = self.hold(call)  # the assertion written first for a module not written yet: kept, not run
        if held:
            return CallOutcome(call, "ok", held, kept_note=held)
        same = self.changes_nothing(call)
        if same:  # no card for a change that changes nothing (+0 −0)
            return CallOutcome(call, "ok", f"unchanged: {same} already reads exactly so; nothing was written",
                               unchanged=True)
        try:
            outcome, gate_ms = self._submit(call, intent=intent, rationale=rationale, alternatives=alternatives)
        except Exception as exc:  # fail closed: a broken gate never lets a write through
            return CallOutcome(call, "refused", f"the approval gate failed ({type(exc).__name__}: {exc}); not run")
        if outcome.decision in ("allowed", "auto_approved"):
            # an auto-approval is never a person's: the tool gets approved=False and is told so
            by = self._decided_by(outcome.job_id) if outcome.decision == "auto_approved" else None
            done = await (self.run_auto(call, by) if by else self.run(call))
            done.gate_ms = gate_ms
            return done
        request = outcome.request.to_dict() if outcome.request is not None else None
        status: Status = "pending" if outcome.decision == "pending" else "refused"
        return CallOutcome(call, status, outcome.reason, outcome.job_id, request, gate_ms=gate_ms)
