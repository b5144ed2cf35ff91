"""The DML codec of one companion session: its file aliases, S state values and language.

Seed 002's DML gives the model short file aliases (`{{F:main}}`, `user_2`, ...), state values
it reads as `🦆▶️[S:name]◀️🦆`, and its prompt in the session's language. The session keeps one
DMLCodec for its whole life: aliases are only ever added (in the order the task met the files),
so an alias the model learnt in one turn means the same file in every later turn.
"""

from __future__ import annotations

import platform
from typing import Any

from duckflow.companion.state import AgentState


def refresh_dml(codec: Any, state: AgentState) -> None:
    """Before a Specialized call: register the task's files, fill the S values (DML only)."""
    if getattr(codec, "name", "") != "dml" or not hasattr(codec, "aliases"):
        return
    refs = [r.partition(":")[2] if r.startswith("file:") else r for r in state.context_refs
            if ":" not in r or r.startswith("file:")]  # (other refs, e.g. `url:`, are no files)
    for path in [*refs, *state.memory.files_created]:
        if path and not path.startswith(("/", "~")) and ".." not in path.split("/"):
            codec.aliases.add(path)
    errors = [e for e in state.evidence if "error" in e.lower()]
    codec.state = {
        "cwd": ". (the workspace root; paths are relative to it)",
        "os": platform.system().lower() or "unknown",
        "last_error": errors[-1][:300] if errors else "none",
        "task_plan": "; ".join(state.plan_brief) or state.goal or state.task or "none yet",
    }
