"""`duckflow bench server --redis URL --database URL [--workers N]`: the server side on shared stores.

The child runs `duckflow serve`'s app on Redis and PostgreSQL (channels/shared) with N uvicorn
workers on one port, each with a ScriptedModel per session as the single-process bench has. The
server's CPU and memory are those of the whole process tree (the supervisor and its workers).
`side_by_side` puts a run with one process beside one with N on the same load: the throughput
ratio is the burst's messages a second at the largest level (how much more N processes carry
when every session writes at once), with the paced bar of each run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

CHILD_ENV = "DUCKFLOW_BENCH_SHARED"
REPLY = ("Hello! I read your message and I am ready to help with this workspace: tell me what to "
         "change, and I will plan it, show you the diff and wait for your approval before I write "
         "anything. Ask for a status at any time.")


def script_step() -> Any:
    """The one scripted reply of a bench session's model (a greeting that waits for the task)."""
    from duckflow.llm.scripted import reply

    decision = {"rationale": "a greeting: answer and wait for the task", "goal_consistency": "yes",
                "constraint_check": "yes", "next_step": "pending_user", "step": "PLANNING",
                "prompt_pattern": "base_main", "state_delta": {}, "reply": REPLY}
    return reply(json.dumps(decision))


def tree(pid: int) -> list[int]:
    """`pid` and every process below it (from /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += parents.get(p, [])
    return out


def tree_cpu_s(pid: int) -> float:
    total = 0.0
    for p in tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def tree_rss_kb(pid: int) -> int:
    total = 0
    for p in tree(pid):
        try:
            lines = Path(f"/proc/{p}/status").read_text().splitlines()
        except OSError:
            continue
        total += next((int(x.split()[1]) for x in lines if x.startswith("VmRSS:")), 0)
    return total


def bench_app() -> Any:
    """The app of one worker (uvicorn calls it in each)."""
    from duckflow.channels.http.app import ServerSettings, create_app, tune_gc
    from duckflow.channels.shared.pg import Database
    from duckflow.channels.shared.runner import SharedRunner
    from duckflow.llm.scripted import ScriptedModel

    kw = json.loads(os.environ[CHILD_ENV])
    replies = int(kw["replies"])
    runner = SharedRunner(kw["workspace"], db=Database(kw["database"]), redis_url=kw["redis"], model_factory=lambda: ScriptedModel(
        [script_step() for _ in range(replies)], name="bench"))
    settings = ServerSettings(token=os.environ["DUCKFLOW_SERVER_TOKEN"], workspace=kw["workspace"],
                              port=int(kw["port"]), redis_url=kw["redis"], database_url=kw["database"])
    tune_gc()
    return create_app(settings, runner=runner)


def serve_shared(port: int, workspace: str, replies: int, workers: int, redis: str, database: str) -> None:
    import uvicorn

    os.environ[CHILD_ENV] = json.dumps({"port": port, "workspace": workspace, "replies": replies,
                                        "redis": redis, "database": database})
    uvicorn.run(f"{__name__}:bench_app", factory=True, workers=workers, host="127.0.0.1", port=port,
                log_level="error", access_log=False, proxy_headers=False, timeout_graceful_shutdown=5)


def side_by_side(one: dict[str, Any], many: dict[str, Any], workers: int) -> dict[str, Any]:
    """Both runs, and how much more the N processes carried (burst messages/s at the largest level)."""
    def carried(data: dict[str, Any]) -> float:
        levels = data.get("burst_levels") or data["levels"]
        return float(levels[-1]["messages_per_s"])

    ratio = round(carried(many) / carried(one), 2) if carried(one) else float("inf")
    return {"workers": workers, "one_process": one, "n_processes": many, "throughput_ratio": ratio,
            "passed": bool(one["passed"] and many["passed"])}
