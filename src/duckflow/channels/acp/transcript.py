"""What an editor session showed, kept so `session/load` replays it: the person's prompts and the updates sent.

One JSONL file per session (`$DUCKFLOW_HOME/acp/SESSION.jsonl`, mode 0600, rotated past its
limit: store/jsonlog.py), written once per turn: the prompt as a `user_message_chunk`, then
the turn's updates as they were sent, the message pieces of one paragraph joined. A session
the editor did not start (a `duckflow chat` one) has none; its last exchanges are replayed
instead (agent.py).
"""

from __future__ import annotations

import re
from typing import Any

from duckflow.paths import duckflow_home
from duckflow.store.jsonlog import JsonlFile

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def _dump(update: Any) -> dict[str, Any]:
    return dict(update.model_dump(mode="json", by_alias=True, exclude_none=True))


def _joined(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Adjacent agent message text pieces as one update (a turn streams one per word)."""
    out: list[dict[str, Any]] = []
    for u in updates:
        last = out[-1] if out else None
        if (last is not None and u.get("sessionUpdate") == "agent_message_chunk" == last.get("sessionUpdate")
                and u.get("content", {}).get("type") == "text" == last.get("content", {}).get("type")):
            last["content"] = {**last["content"], "text": last["content"]["text"] + u["content"]["text"]}
            continue
        out.append(u)
    return out


class Transcript:
    def __init__(self, session_id: str) -> None:
        self.file = JsonlFile(duckflow_home() / "acp" / f"{session_id}.jsonl") if SAFE_ID.match(session_id) \
            else None
        self.pending: list[dict[str, Any]] = []

    def add(self, updates: list[Any]) -> None:
        self.pending.extend(_dump(u) for u in updates)

    def flush(self) -> None:
        import json

        if self.file is None or not self.pending:
            self.pending = []
            return
        lines = [json.dumps({"update": u}, ensure_ascii=False) for u in _joined(self.pending)]
        self.pending = []
        self.file.append(lines)

    def replay(self) -> list[dict[str, Any]]:
        """The updates of every turn so far, in order ([] when the editor never had this session)."""
        if self.file is None or not self.file.path.exists():
            return []
        return [r["update"] for r in self.file.read() if isinstance(r.get("update"), dict)]
