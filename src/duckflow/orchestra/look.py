"""A message with images, answered by the companion's model when it can see them (else one line saying why not).

The companion's own turn (Main decision, tools, Sym-Ops) reads text only, so a message that
carries images — `duckflow chat/run --image`, an upload to `/v1/sessions/{id}/messages`, a
LINE photo — is answered here by one call of the session's model with the images in its
provider's wire form (llm/types.ImagePart: OpenAI-compatible data-URL `image_url` parts,
Anthropic `image` blocks, Ollama `images`). Nothing is sent when no image could be used (the
reasons are in the audit records `prepare_images` wrote) or the model cannot see
(`llm.vision.vision_refusal`): the answer is then one line with the next step. Pixels are not
masked: an image sent to a cloud model goes as it is (only its text passes the sanitizer).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

INSTRUCTIONS = ("You are Duckflow, a coding companion. The person sent image(s) with their message: "
                "look at them and answer the message plainly and briefly. You cannot run tools in this "
                "reply; if the person wants files changed, say what you would do and ask them to send it "
                "as a task.")


@dataclass
class Looked:
    ok: bool
    text: str


def dropped(records: list[dict[str, Any]]) -> str:
    """The files not sent and why, in one line."""
    from pathlib import Path

    gone = [f"{Path(str(r.get('source_path', '?'))).name}: {r.get('drop_reason')}" for r in records
            if not r.get("included")]
    return "; ".join(gone)


async def look(model: Any, text: str, parts: list[Any], records: list[dict[str, Any]],
               *, history: str = "", token_guard: Any = None) -> Looked:
    """One model call with the images; `history` (the conversation so far) goes into the instructions,
    `token_guard` counts its tokens against the budgets as the companion's calls are."""
    from duckflow.llm.vision import vision_refusal

    if not parts:
        why = dropped(records) or "no image was given"
        return Looked(False, f"nothing was sent: no image could be used ({why})")
    refusal = vision_refusal(model)
    if refusal is not None:
        return Looked(False, refusal)
    from duckflow.core.agent import Agent
    from duckflow.llm.types import Message

    skipped = dropped(records)
    instructions = INSTRUCTIONS + (f"\n\nThe conversation so far:\n{history}" if history else "")
    agent = Agent("companion", instructions, model=model, max_turns=1, codec="native", token_guard=token_guard)
    result = await agent.run([Message("user", text, images=parts)], raise_errors=False)
    if not result.ok:
        from duckflow.orchestra.roles import error_text, is_timeout

        if is_timeout(result.error):
            from duckflow.orchestra.images import audit_after_timeout

            audit_after_timeout(parts)
        return Looked(False, f"the model could not answer: {error_text(result.error)}")
    answer = result.text.strip() or "(the model gave no answer)"
    return Looked(True, answer + (f"\n(not sent: {skipped})" if skipped else ""))


async def answer_with_images(session: Any, orch: Any, text: str) -> Looked:
    """The companion session's message with the images `orch.handle` prepared, answered by the
    session's model; the exchange joins the session's conversation (the image noted, not its bytes)."""
    parts, records = orch.image_inputs
    history = "\n".join(session.state.summaries(6))
    guard = getattr(getattr(session, "engine", None), "token_guard", None)
    looked = await look(getattr(session, "model", None), text, parts, records, history=history, token_guard=guard)
    noted = f"{text} [{len(parts)} image(s)]"
    session.owner.change("image reply", lambda st: st.add_exchange(noted, looked.text))
    return looked
