"""Opens a companion session for a workspace: config, model, codec, tools, gate, store, state.

`open_session(workspace, ...)` creates a new session or resumes one (by id, or the latest of
the workspace), restoring its state, transition history, plans and pending approval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duckflow.companion.actions import ActionRunner
from duckflow.companion.owner import StateOwner
from duckflow.companion.session import CompanionSession
from duckflow.companion.state import AgentState, LongTermMemory
from duckflow.companion.store import SessionStore, new_session_id
from duckflow.companion.transitions import TransitionController, TransitionLimiter, TransitionTable
from duckflow.errors import DuckflowError
from duckflow.llm.types import Model

if TYPE_CHECKING:
    from duckflow.config import Config
    from duckflow.core.guardrails import Guardrail
    from duckflow.core.run import TraceSink
    from duckflow.core.token_guard import TokenGuard
    from duckflow.core.tools import Tool
    from duckflow.gate import Gate
    from duckflow.protocols.codec import Codec


@dataclass
class OpenedSession:
    session: CompanionSession
    resumed: bool
    model_name: str
    codec_name: str
    store: SessionStore
    config: Config | None = None  # the Config the session was opened with (loaded once per command)

    def close(self) -> None:
        from duckflow.store.sqlite import close_all

        self.session.note_session()
        closers = [self.session.runner.gate.close, self.store.close]
        if self.session.mcp is not None:
            closers.append(self.session.mcp.close)  # its servers' processes end
        trace = self.session.trace
        if trace is not None and hasattr(trace, "close"):
            closers.append(trace.close)
        counter = getattr(self.session.engine.token_guard, "counter", None)
        if counter is not None and hasattr(counter, "close"):
            closers.append(counter.close)
        close_all(*closers)  # together: each store's checkpoint waits for the disk


def open_session(
    workspace: str | Path,
    *,
    model: Model | None = None,
    model_name: str | None = None,
    session_id: str | None = None,
    resume: bool = False,
    config: Config | None = None,
    store: SessionStore | None = None,
    gate: Gate | None = None,
    tools: list[Tool] | None = None,
    codec: Codec | str | None = None,
    trace: TraceSink | None = None,
    token_guard: TokenGuard | None = None,
    guardrails: Sequence[Guardrail] = (),
    output_guardrails: Sequence[Guardrail] = (),
    mode: str | None = None,
    mcp: Any = None,
) -> OpenedSession:
    """`token_guard`: a core TokenGuard (default: from the config's `token_guard` section, per
    session); `guardrails` / `output_guardrails`: core Guardrails on each message / reply;
    `mcp`: an McpHub several sessions share (a server's, made with `mcp_hub`; not closed with
    this session), else the session starts its own from the config (closed with it)."""
    from duckflow.companion.models import choose_model_name, load_model
    from duckflow.config import load_config
    from duckflow.core.codecs import resolve_codec
    from duckflow.gate import Gate
    from duckflow.prompts.budget import LayerBudget
    from duckflow.prompts.render import PromptBuilder, read_workspace_persona

    asked_codec = codec  # --codec as the person gave it: a local model for what is not coding gets it too
    root = Path(workspace).expanduser().resolve()
    if not root.is_dir():
        if root.exists():
            raise DuckflowError(f"{root} is a file, not a folder",
                                hint=f"pass the folder that holds it: -w {root.parent}")
        raise DuckflowError(f"workspace {root} is not a folder (it does not exist)",
                            hint="create it, or pass an existing folder with -w DIR")
    cfg = config if config is not None else load_config(root)
    if model is None:
        model_name = choose_model_name(model_name, cfg)
        model = load_model(model_name, cfg)
    name = model_name or model.name
    store = store if store is not None else SessionStore()
    comp = cfg.companion
    table = TransitionTable.load(comp.transitions_file)
    controller = TransitionController(table=table, limiter=TransitionLimiter(),
                                      max_recovery_retries=comp.max_recovery_retries)
    resumed = False
    sid = session_id
    if sid is None and resume:
        sid = store.latest(str(root))
    loaded = store.load(sid) if sid else None
    if sid and loaded is None and session_id is not None:
        raise DuckflowError(f"no saved session '{session_id}'", hint="see `duckflow sessions`")
    remembered = store.load_memory(str(root))  # the workspace's long-term memory (every session)
    if loaded is not None:
        state, extra = loaded
        home = Path(state.workspace).resolve() if state.workspace else root
        if home != root:  # a session, its jobs and their approvals belong to one workspace
            raise DuckflowError(
                f"session {state.session_id} belongs to workspace {home}, not {root}",
                hint=f"run it there (-w {home}), or start a new session in {root}")
        owner = StateOwner(state, controller, store)
        owner.restore_history(extra)
        resumed = True
    else:
        owner = StateOwner(AgentState(new_session_id(), workspace=str(root)), controller, store)
    if remembered is not None:
        owner.state.memory = LongTermMemory.from_dict(remembered)
    owner.persist()
    if tools is None:
        from duckflow.workspace.tools import workspace_tools

        tools = workspace_tools(root, cfg.workspace)
    hub, said = (None, []) if mcp is not None else mcp_hub(root, cfg)
    shared = mcp if mcp is not None else hub
    if shared is not None:
        tools = [*tools, *shared.tools()]  # the servers start here (each within its startup timeout)
        said += shared.problems
    if gate is None:
        gate = Gate.from_config(cfg.gate, requested_by=f"companion:{owner.state.session_id}")
    if codec is None or isinstance(codec, str):
        wanted = codec or comp.codec  # "auto": by the model (the demo model writes every codec)
        try:
            codec = resolve_codec(wanted, model)
        except DuckflowError:
            codec = resolve_codec(None, model)
    if getattr(codec, "name", "") == "dml" and hasattr(codec, "language"):
        codec.language = comp.language  # the DML prompt in the session's language (en / ja)
    if trace is None:
        from duckflow.core.trace import trace_from_config

        trace = trace_from_config(cfg.trace)
    runner = ActionRunner(root, tools, gate, owner.state.session_id, sandbox=cfg.workspace.sandbox)
    budget = LayerBudget(cfg.budget.base_tokens, cfg.budget.main_tokens, cfg.budget.specialized_tokens)
    builder = PromptBuilder(comp.language, read_workspace_persona(root))
    if comp.block_patterns and not guardrails:  # the config's patterns guard messages and replies
        from duckflow.core.guardrails import Guardrail

        guardrails = [Guardrail(name="companion.block_patterns", regex_blocks=list(comp.block_patterns))]
    if token_guard is None:
        from duckflow.core.token_guard import TokenGuard

        token_guard = TokenGuard.from_config(cfg.token_guard)
    session = CompanionSession(owner, model, runner, codec=codec, builder=builder, budget=budget,
                               trace=trace, token_guard=token_guard, guardrails=guardrails,
                               output_guardrails=output_guardrails)
    from duckflow.companion.projectnotes import project_notes
    from duckflow.companion.turnmode import choose_mode

    session.asked_codec, session.asked_mode = asked_codec, mode  # a local model for the rest gets them too
    session.project = project_notes(root, comp)  # AGENTS.md, read as data (never settings)
    session.mcp = hub
    session.open_notes += [("mcp", line) for line in said]  # told in the first turn, one line each
    session.mode = choose_mode(mode, comp.mode, model, name, comp.single_call_below_b)
    from duckflow.companion.task import TaskBudget

    session.task_budget = TaskBudget(comp.task_max_calls, comp.task_time_budget_s)
    session.constrained_decoding = cfg.models.constrained_decoding  # type: ignore[attr-defined]
    # traced as the session opens: the trace's writer thread starts with its first record, so here,
    # not in the person's first turn (a thread start waits for the new thread: ms on a busy machine)
    session.engine.run_for(session.engine.main).trace_event(
        "session_open", resumed=resumed, model=name, codec=getattr(codec, "name", "native"), mode=session.mode)
    return OpenedSession(session, resumed, name, getattr(codec, "name", "native"), store, cfg)


def mcp_hub(root: Path, cfg: Config) -> tuple[Any, list[str]]:
    """An McpHub of the servers this workspace may start (yours; the repository's you allowed)
    and a line for each one waiting for your yes. Nothing is imported when none is configured."""
    if not (cfg.mcp_servers or cfg.workspace_mcp_servers or (root / ".mcp.json").exists()):
        return None, []
    from duckflow.gate.mcptrust import servers_for

    servers = servers_for(root, cfg)
    if not servers.start:
        return None, servers.notes
    from duckflow.core.mcphub import McpHub

    return McpHub(servers.start, cwd=str(root)), servers.notes
