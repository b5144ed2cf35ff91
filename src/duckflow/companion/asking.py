"""A question the model asks the person (Sym-Ops `? "..."` with numbered options): shown, waited for, answered.

A reply that asks runs nothing: the answer may change what should be done. The question goes
out as a `question` notice (its text with the options numbered, and `question` / `options` in
its details, so a channel can offer them as buttons), the task waits for the person
(REQUIRES_USER_INPUT), and the question is kept in the state's open questions (it survives a
restart, and the next prompt shows it). The person's next message is its answer: an option's
number or its words pick that option, anything else is the answer as typed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from duckflow.companion.state import AgentState, Status

if TYPE_CHECKING:
    from duckflow.companion.host import TurnHost

Asked = tuple[str, list[str]]
_OPTIONS = re.compile(r" \(options: (.*)\)$")


def stored(question: str, options: Sequence[str]) -> str:
    """The question as the state keeps it (one line, the options after it)."""
    return question + (f" (options: {' | '.join(options)})" if options else "")


def read_stored(line: str) -> Asked:
    m = _OPTIONS.search(line)
    return (line[:m.start()], m.group(1).split(" | ")) if m else (line, [])


def as_text(question: str, options: Sequence[str]) -> str:
    return question + "".join(f"\n  {i}. {o}" for i, o in enumerate(options, 1))


def pose(host: TurnHost, questions: Sequence[Asked]) -> str:
    """Ask the person the reply's first question; the task waits. Returns the question's text."""
    question, options = questions[0]
    text = as_text(question, options)
    hint = "Answer with a number or your own words." if options else "Answer in your own words."
    host.chunks.notice("question", f"{text}\n{hint}", question=question, options=list(options))

    def keep(s: AgentState) -> None:
        s.set_open_questions([stored(question, options)])
        s.log_decision(f"asked the person: {question}"[:200])

    host.owner.change("the model asks the person", keep)
    host.turn.question = (question, list(options))  # whole (the state keeps it cut to 100 characters)
    host.owner.set_status(Status.REQUIRES_USER_INPUT, f"asked the person: {question}"[:200])
    return text


def pick(options: Sequence[str], said: str) -> str:
    """The option the person's words choose (`2`, `2.`, the option's words), else the words."""
    words = said.strip()
    number = words.rstrip(".)").strip()
    if number.isdigit() and 1 <= int(number) <= len(options):
        return options[int(number) - 1]
    for option in options:
        if words.lower().rstrip(".!") == option.lower():
            return option
    return words


def take_answer(host: TurnHost, said: str) -> str | None:
    """The person's message as the answer to the open question (None when none is open): the
    question is closed, the answer kept as evidence, and the text the next step reads returned."""
    state = host.state
    if not state.open_questions or not said.strip():
        return None
    question, options = host.turn.question or read_stored(state.open_questions[-1])
    asked = f"asked the person: {question}"[:60]
    if host.turn.question is None and not any(line.startswith(asked) for line in state.decision_log[-30:]):
        return None  # an open question the model only noted (its state_delta), never asked: not this
    host.turn.question = None
    answer = pick(options, said)
    line = f'the person answered "{question}": {answer}'

    def close(s: AgentState) -> None:
        s.set_open_questions(s.open_questions[:-1])
        s.add_evidence(line)
        s.log_decision(line[:200])

    host.owner.change("the person answered the question", close)
    host.chunks.notice("answered", f"Answer: {answer}", question=question, answer=answer)
    return f'My answer to your question "{question}": {answer}'
