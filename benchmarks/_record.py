"""Record real Sym-Ops replies of a model for the compliance table (`tests/corpus/real/NAME/`).

    python -m benchmarks._record local:default tests/corpus/real/local

Each task is asked once with the live Sym-Ops system prompt (the one `SymOpsCodec` gives the
engine and the companion, few-shot examples included), unconstrained (no grammar). A reply
that does not read cleanly is re-asked at most twice with the SelfCorrector's message; every
reply is saved as it came (`NN_task.txt`, `NN_task.reask1.txt`, ...) with a `.json` naming
the model, the settings, the request and the actions we meant (`intended`).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TASKS: tuple[tuple[str, str, list[tuple[str, str]]], ...] = (
    ("hello", "Create hello.py that prints Hello, world.", [("create", "hello.py")]),
    ("add", "Create utils.py with a function add(a, b) that returns their sum.", [("create", "utils.py")]),
    ("delete", "Delete the file old_notes.txt.", [("delete", "old_notes.txt")]),
    ("run", "Run the command `ls -la` to see the files.", [("run", "ls -la")]),
    ("json", 'Create config.json containing {"debug": true}.', [("create", "config.json")]),
    ("readme", "Create README.md with the title Demo and one sentence about the project.",
     [("create", "README.md")]),
    ("edit", "In app.py, change the greeting from 'hi' to 'hello'. app.py is:\n\nprint('hi')\n",
     [("edit", "app.py")]),
    ("test", "Create test_utils.py with a pytest test for add() from utils.py, then run that test file.",
     [("create", "test_utils.py"), ("test", "test_utils.py")]),
    ("sql", "Create schema.sql that creates a users table with id and email.", [("create", "schema.sql")]),
    ("nested", "Create src/models/user.py with a dataclass User(name: str, email: str).",
     [("create", "src/models/user.py")]),
)


async def _ask(model: Any, messages: Sequence[Any]) -> str:
    from duckflow.llm.types import ModelSettings

    parts: list[str] = []
    async for event in model.stream(list(messages), tools=[], settings=ModelSettings(max_tokens=400)):
        if event.kind == "text":
            parts.append(event.text)
    return "".join(parts)


def _save(stem: Path, source: str, model: str, request: str, intended: list[tuple[str, str]], reasks: int) -> None:
    """The `.json` of one task, written after every reply (a run cut short leaves usable data)."""
    meta = {"source": source, "model": model, "settings": "temperature 0.2, seed 0, max_tokens 400, no grammar",
            "recorded": time.strftime("%Y-%m-%d"), "request": request, "reasks": reasks,
            "intended": [{"type": t, "path": p} for t, p in intended]}  # fmt: skip
    stem.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


async def record(name: str, out: Path) -> None:
    from duckflow.config import load_config
    from duckflow.llm.registry import get_model
    from duckflow.llm.types import Message
    from duckflow.protocols.symops import SymOpsCodec, parse
    from duckflow.protocols.symops.prompts import correction_message

    model = get_model(name, load_config())
    system = SymOpsCodec().system_prompt([])
    out.mkdir(parents=True, exist_ok=True)
    for n, (slug, request, intended) in enumerate(TASKS, 1):
        stem = out / f"{n:02d}_{slug}"
        if stem.with_suffix(".json").exists():
            continue  # recorded already (a run cut short goes on where it stopped)
        messages = [Message("system", system), Message("user", request)]
        reply = await _ask(model, messages)
        stem.with_suffix(".txt").write_text(reply, encoding="utf-8")
        reasks = 0

        source = f"recorded from {model.name} with `python -m benchmarks._record {name} {out}`"
        _save(stem, source, model.name, request, intended, 0)
        result = parse(reply, request=request)
        while not result.ok and reasks < 2:
            reasks += 1
            errors = [i.describe() for i in result.issues] or ["the reply had no Sym-Ops actions"]
            asked = [*messages, Message("assistant", reply), Message("user", correction_message(errors))]
            reply = await _ask(model, asked)
            (out / f"{stem.name}.reask{reasks}.txt").write_text(reply, encoding="utf-8")
            _save(stem, source, model.name, request, intended, reasks)
            result = parse(reply, request=request)
        print(f"{stem.name}: stage {parse(stem.with_suffix('.txt').read_text('utf-8')).stage}, re-asks {reasks}")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m benchmarks._record MODEL OUT_DIR", file=sys.stderr)
        return 2
    asyncio.run(record(argv[0], Path(argv[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
