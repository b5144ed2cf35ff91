"""`--model scripted:demo`: a rule-driven stand-in model that holds a conversation without breaking.

No model is behind it, so it says so plainly and offers the one task it can show: creating
hello.py (plan → write behind the gate → review → done). It reads what to do from the prompt
it is given — the step, the evidence, the person's message — not from a position in a fixed
script, so a resumed session continues where it stopped (after `duckflow approvals grant`
too) and any number of messages get an answer. Replies stream word by word at a visible pace
(`delay_s`), like a real model's, and so do its tool calls' arguments (a file shows as written).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any

from duckflow.llm.types import (
    FinishEvent,
    Message,
    ModelEvent,
    ModelSettings,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallEvent,
    ToolSpec,
    Usage,
    UsageEvent,
)

GREETING = ('def main() -> None:\n    print("Hello from Duckflow!")\n\n\n'
            'if __name__ == "__main__":\n    main()\n')
CAN_DO = ("I'm the scripted demo model: no real model is behind me, so I can't follow free text. "
          "I can show one task end to end — say \"create hello.py\" and I'll plan it, write it "
          "behind the approval gate, review it and finish. For real work start with --model "
          "(e.g. ollama:qwen2.5-coder:7b) or set OPENAI_API_KEY / ANTHROPIC_API_KEY.")
_STEP = re.compile(r"(?:Step|ステップ): (PLANNING|EXECUTION|REVIEW|AWAITING_APPROVAL|DONE)")
_REQUEST = re.compile(r"hello|greet|create|write|make|build|作|書", re.IGNORECASE)
_CONTINUE = "(no new message"
_SPECIALIZED = (("# Planning", "PLANNING"), ("計画作成の手順書", "PLANNING"), ("# Execution", "EXECUTION"),
                ("実行の手順書", "EXECUTION"), ("# Review", "REVIEW"), ("レビューの手順書", "REVIEW"))


def decision_json(step: str, pattern: str, next_step: str, rationale: str, reply: str,
                  delta: dict[str, Any] | None = None) -> str:
    return json.dumps({  # `reply` first, as the Main prompt asks: it streams while the rest is written
        "reply": reply, "rationale": rationale, "goal_consistency": "yes: it is the task",
        "constraint_check": "yes: stays inside the workspace", "next_step": next_step,
        "step": step, "prompt_pattern": pattern, "state_delta": delta or {},
    })


class DemoModel:
    def __init__(self, *, delay_s: float | None = None) -> None:
        self.name = "scripted:demo"
        self.provider = "scripted"  # llm.constrain.backend_of: not a llama.cpp server to size or constrain
        self.supports_tools = True
        self.is_local = True
        if delay_s is None:  # seconds per streamed word; DUCKFLOW_DEMO_DELAY slows it for a screen test
            # the pace is for a person watching a terminal; piped or captured output gets no pause
            default = "0.01" if sys.stdout.isatty() else "0"
            try:
                delay_s = float(os.environ.get("DUCKFLOW_DEMO_DELAY", default))
            except ValueError:
                delay_s = float(default)
        self.delay_s = max(0.0, delay_s)
        self.calls = 0

    async def stream(self, messages: Sequence[Message], *, tools: Sequence[ToolSpec] = (),
                     settings: ModelSettings | None = None) -> AsyncIterator[ModelEvent]:
        self.calls += 1
        system = messages[0].content if messages and messages[0].role == "system" else ""
        user = next((m.content for m in reversed(messages) if m.role == "user"), "")
        text, calls = self._answer(system, user)
        if calls and not tools:  # a text codec: write the calls the way the system prompt teaches
            text, calls = _as_text(system, text, calls), []
        for piece in re.findall(r"\s*\S+\s*", text):
            if self.delay_s:
                await asyncio.sleep(self.delay_s)
            yield TextDelta(piece)
        for n, call in enumerate(calls, 1):
            raw = json.dumps(call.arguments)  # its arguments stream first, as a provider's do (shown as written)
            for at in range(0, len(raw), 8):
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
                yield ToolCallDelta(n - 1, raw[at:at + 8], f"demo_{self.calls}_{n}", call.name)
            yield ToolCallEvent(ToolCall(call.name, call.arguments, f"demo_{self.calls}_{n}"))
        yield UsageEvent(Usage(sum(len(m.content) for m in messages) // 4, len(text) // 4 + 8 * len(calls)))
        yield FinishEvent("tool_calls" if calls else "stop")

    def _answer(self, system: str, user: str) -> tuple[str, list[ToolCall]]:
        if '"prompt_pattern"' in system:
            return self._main(system, user), []
        for marker, step in _SPECIALIZED:
            if marker in system:
                return self._specialized(step)
        return CAN_DO, []

    def _main(self, system: str, user: str) -> str:
        m = _STEP.search(system)
        step = m.group(1) if m else "PLANNING"
        wrote = "write_file(path=hello.py) → ok" in system
        reviewed = "read_file(path=hello.py) → ok" in system
        planned = "list_files(path=.) → ok" in system
        if "?" in user or "？" in user or not (user.startswith(_CONTINUE) or _REQUEST.search(user)):
            return decision_json(step, "base_main", "pending_user", "the demo can only show hello.py", CAN_DO)
        if step == "REVIEW" and reviewed:
            return decision_json("DONE", "base_main", "done", "hello.py was written and reviewed",
                                 "Done: hello.py prints a friendly greeting. Run it with `python hello.py`.")
        if step == "REVIEW" or (step == "EXECUTION" and wrote):
            return decision_json("REVIEW", "base_main_specialized", "continue", "check what was written",
                                 "Reviewing hello.py.")
        if step == "EXECUTION" or planned:
            return decision_json("EXECUTION", "base_main_specialized", "continue",
                                 "the plan is ready: write the file",
                                 "Writing hello.py now (it goes through the approval gate).")
        return decision_json(
            "PLANNING", "base_main_specialized", "continue", "the task needs a short plan first",
            "I'll plan this: look at the workspace, then write hello.py.",
            {"goal": "hello.py prints a friendly greeting", "why_now": "you asked for it just now",
             "plan_brief": ["look at the workspace", "write hello.py", "read it back to review"]})

    def _specialized(self, step: str) -> tuple[str, list[ToolCall]]:
        if step == "PLANNING":
            return ("Plan: greeting\nSteps: 1. list the workspace 2. write hello.py 3. read it back\n"
                    "Risk: low (one new file)\nSuccess: hello.py exists and prints a greeting\n"
                    "Alternatives: print the greeting with `python -c` instead of a file; "
                    "add it to an existing module",
                    [ToolCall("list_files", {"path": "."}),
                     ToolCall("write_file", {"path": "hello.py", "content": GREETING})])
        if step == "EXECUTION":
            return ("Alternatives: print the greeting with `python -c` instead of a file",
                    [ToolCall("write_file", {"path": "hello.py", "content": GREETING})])
        return ("Rating: good / Problems: none / Suggestions: none / Verdict: accept",
                [ToolCall("read_file", {"path": "hello.py"})])


def _as_text(system: str, text: str, calls: list[ToolCall]) -> str:
    """The calls written in the text protocol the Specialized prompt teaches (DML or Sym-Ops)."""
    if "🦆" in system:
        from duckflow.protocols.dml import DMLCodec

        head = f"Thought: {text.splitlines()[0]}\n" if text else ""
        return head + "Action:\n" + DMLCodec().encode_calls(calls)
    from duckflow.protocols.symops import SymOpsCodec

    thoughts = "".join(f"~ {line}\n" for line in text.splitlines() if line.strip())
    return thoughts + SymOpsCodec().encode_calls(calls)
