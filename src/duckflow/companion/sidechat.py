"""The chat side of the dual loop (seed 001 §4.4): what a person types while a task runs.

`classify(text)` sorts a line typed during a task into:
- `stop`: "stop", "wait", "pause", 止めて, 待って, ストップ, … → the task pauses (the current step
  is cancelled cleanly, the state kept; "continue" / 続けて goes on);
- `question`: ends with ? / ？ or starts like one (what, why, how, どう, なぜ, …) → the Main
  layer answers at once, in parallel, read-only: it sees the live state, its step and
  state_delta are ignored, so it cannot move the task;
- `correction`: anything else → added to the constraints and handed to the task as a message
  at its next step.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from duckflow.companion.decision import ReplyStreamer, Silent, read_decision
from duckflow.core.chunks import ReplyChunk, ReplyData, delta
from duckflow.core.errors import CoreError
from duckflow.llm.types import Message

if TYPE_CHECKING:
    from duckflow.companion.host import TurnHost
    from duckflow.core.model_call import Feed

Kind = Literal["stop", "question", "correction"]
CHAT_AGENT = "companion.chat"
STOP_WORDS = {"stop", "wait", "pause", "hold on", "stop it", "stop that", "wait a moment", "halt",
              "止めて", "とめて", "待って", "まって", "ストップ", "止まって", "中断", "一時停止", "ちょっと待って"}
RESUME_WORDS = {"continue", "go on", "resume", "carry on", "go ahead", "続けて", "つづけて", "再開", "続行"}
_QUESTION_START = re.compile(
    r"^(what|why|how|where|when|which|who|is|are|can|could|does|do|did|will|would|should|have|has)\b"
    r"|^(なぜ|なんで|どう|どこ|どれ|何|なに|いつ|誰|だれ)", re.IGNORECASE)
_QUESTION_END = re.compile(r"(\?|？|か[。]?|の[。]?)$")
READ_ONLY_NOTE = (
    "A task is running right now. The person asked a question in between: answer it in `reply` "
    "from the state above. This answer is read-only: your step and state_delta are ignored and "
    "the task goes on unchanged."
)


def _plain(text: str) -> str:
    return text.strip().strip("!！。.、,").strip().lower()


def classify(text: str) -> Kind:
    t = _plain(text)
    if t in STOP_WORDS or any(t.startswith(w + " ") for w in ("stop", "wait", "pause")):
        return "stop"
    if _QUESTION_END.search(text.strip()) or _QUESTION_START.search(t):
        return "question"
    return "correction"


def is_resume(text: str) -> bool:
    return _plain(text) in RESUME_WORDS or text.strip() == "/resume"


async def answer_question(session: TurnHost, text: str) -> str:
    """Main answers `text` from the live state, in parallel with the task, and changes nothing."""
    built = session._build()
    system = f"{built.base}\n\n{built.main}\n\n{READ_ONLY_NOTE}"
    raw: list[str] = []
    engine = session.engine

    async def ask(reask: str | None) -> str:
        msgs = [Message("system", system), Message("user", text)]
        if reask is not None:
            msgs += [Message("assistant", raw[-1] if raw else ""), Message("user", reask)]
        feed: Feed = Silent() if engine.holds_output or raw else ReplyStreamer(
            lambda t: engine.emit(delta(CHAT_AGENT, t)))
        reply = await engine.call("question", msgs, streamer=feed)
        raw.append(reply.text)
        return reply.text

    try:
        dr = await read_decision(ask, session.state.step.value)
        answer = dr.decision.reply or dr.message or dr.decision.rationale
    except CoreError as exc:
        answer = f"I could not answer that just now: {exc.message}"
    tripped = await engine.check("output", answer)
    if tripped is not None:
        answer = f"(a reply was withheld by a guardrail: {tripped.message})"
    s = session.state
    engine.emit(ReplyChunk(agent=CHAT_AGENT, data=ReplyData(text=answer, step=s.step.value,
                                                            status=s.status.value)))
    return answer
