"""Run the real `duckflow` command (e.g. `acp -w DIR`) in a subprocess whose model is a ScriptedModel.

    python -m tests.helpers.acp_scripted SCRIPT.json acp -w DIR --model scripted:acp

SCRIPT.json is a list of steps, each one model call: `{"decision": {...}}` (a Main reply,
tests.helpers.companion.decision's arguments), `{"tool": NAME, "args": {...}}` (one native
tool call), or `{"wait": MARKER}` (writes the file MARKER, then waits a minute: a turn a test
cancels while it runs). Only the model is scripted; the command, the protocol and the
workspace are the real ones.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any


def _steps(raw: list[dict[str, Any]]) -> list[Any]:
    from duckflow.llm.scripted import reply, tool_call
    from tests.helpers.companion import decision

    def waiting(marker: str) -> Any:
        async def step(messages: Any) -> Any:
            Path(marker).write_text("waiting\n")
            await asyncio.sleep(60)
            return reply("too late")

        return step

    out: list[Any] = []
    for step in raw:
        if "decision" in step:
            out.append(decision(**step["decision"]))
        elif "tool" in step:
            out.append(tool_call(step["tool"], **step.get("args", {})))
        elif "wait" in step:
            out.append(waiting(step["wait"]))
        else:
            raise ValueError(f"unknown script step {step}")
    return out


def main() -> int:
    script = json.loads(Path(sys.argv[1]).read_text())
    steps = _steps(script)
    from duckflow.llm.scripted import ScriptedModel

    model = ScriptedModel(steps, name="acp", supports_tools=True)

    def load(name: str, config: Any) -> ScriptedModel:
        return model

    import duckflow.companion.models

    duckflow.companion.models.load_model = load  # type: ignore[assignment]
    from duckflow.channels.cli.main import main as duckflow_main

    return duckflow_main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
