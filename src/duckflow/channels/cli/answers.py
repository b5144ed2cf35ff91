"""How a person answers an approval in the terminal: y / n / e(dit) / a(lways for this session), "what instead", or any free answer.

Shared by `duckflow chat` and `duckflow run` (asked inline on a terminal). `read_answer` maps
what was typed to one word; `decide` answers the session's pending approval: yes grants, no
and edit deny with the person's words as the note (the companion takes them as a correction),
always grants and remembers to auto-approve the rest of this session's workspace changes
(never a hard-required one: the gate still asks for those).
"""

from __future__ import annotations

import re
from typing import Any, Literal

Answer = Literal["yes", "no", "edit", "always", "details"]
WORDS: dict[str, Answer] = {
    "y": "yes", "yes": "yes", "ok": "yes", "approve": "yes", "はい": "yes",
    "n": "no", "no": "no", "deny": "no", "いいえ": "no",
    "e": "edit", "edit": "edit",
    "a": "always", "always": "always",
    "d": "details", "details": "details", "show": "details",
}
QUESTION = "Apply? y(es) / n(o) / e(dit) / a(lways for this session) / d(etails)"
CODER_QUESTION = "Apply the Coder's change? y(es) / n(o)"
INSTEAD = "What should it do instead? (Enter to just refuse)"
CHANGE = "What should change? (Enter to just refuse)"
ALWAYS_BY = "user: always for this session"


GRANT = re.compile(r"^(y|yes|yep|yeah|ok|okay|sure|fine|approve[d]?|apply( it)?|go( ahead)?|do it|lgtm|"
                   r"looks good|sounds good|please do|はい|お願いします?|いいよ)[\s!.。]*$", re.I)
# not an answer: a hedge or a question (the card is asked again; a question is not a correction)
UNSURE = re.compile(r"^(maybe|perhaps|not sure|i don'?t know|dunno|hmm+|wait)[\s.!?]*$|[?？]\s*$", re.I)
DENY = re.compile(r"^(n|no|nope|nah|don'?t|do not|deny|いいえ|だめ|ダメ)\b[\s,.:;!—–-]*", re.I)


def read_answer(text: str) -> Answer | None:
    return WORDS.get(text.strip().lower())


def understand(text: str) -> tuple[Answer, str] | None:
    """Any free answer at the card: yes / ok / go ahead grant; no denies; anything else is a no
    with those words as the correction ("no — call it greet.py instead": no, "call it greet.py
    instead"). None for an empty line, a hedge ("maybe") or a question: not an answer, the card
    is asked again. One-letter keys keep their meaning (e, a, d)."""
    said = text.strip()
    if not said:
        return None
    word = WORDS.get(said.lower())
    if word is not None:
        return word, ""
    if GRANT.match(said):
        return "yes", ""
    if UNSURE.search(said):
        return None
    denied = DENY.match(said)
    if denied and said[denied.end():].strip():
        return "no", said[denied.end():].strip()
    return "no", said


def auto_answer_pending(session: Any) -> str | None:
    """'always for this session': answer the waiting job within the workspace scope; None when
    it was auto-approved, else why a person must decide this one."""
    from duckflow.gate import AutoApproveScope
    from duckflow.gate.request import Decision

    job = session.state.pending_job or {}
    answered = session.runner.gate.auto_answer(job.get("job_id", ""), AutoApproveScope.workspace(), by=ALWAYS_BY)
    return None if isinstance(answered, Decision) else str(answered)


async def decide(session: Any, answer: Answer, words: str = "", *, by: str) -> Any:
    """The turn that answers the pending approval (yes / always: granted; no / edit: denied with `words`)."""
    if answer in ("yes", "always"):
        return await session.answer_approval(True, by=by if answer == "yes" else ALWAYS_BY)
    return await session.answer_approval(False, by=by, note=words.strip() or None)
