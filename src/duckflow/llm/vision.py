"""Whether a model can see images: `vision_refusal(model)` is None when it can, else one line saying why not.

A model declares it with a `vision` attribute (ScriptedModel(vision=True), or any Model a
developer writes); otherwise its name decides, by the families the providers document as
taking images (OpenAI gpt-4o / 4.1 / 5 and o1/o3/o4, every Claude since 3, Ollama's and
OpenAI-compatible servers' vision families: llava, *-vl, llama3.2-vision, gemma3, pixtral,
minicpm-v, moondream, ...). llama.cpp in this process (`local:`) has no vision projector
(an mmproj file) loaded, so it never takes images. A fallback chain can see only when every
model in it can (a fallback would otherwise get the image dropped).
"""

from __future__ import annotations

import re
from typing import Any

_CLOUD = re.compile(r"^(chatgpt-4o|gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-4-vision|gpt-5|o1(?!-mini)|o3|o4)", re.I)
_OPEN = re.compile(r"llava|bakllava|[-_.:]vl\b|vl[-_:]|qwen2\.5vl|qwen3-vl|vision|gemma-?3|pixtral|minicpm-v"
                   r"|moondream|internvl|multimodal|llama-?4|mistral-small-?3\.[12]|gemini|granite.*vision", re.I)


def vision_refusal(model: Any) -> str | None:
    """None when `model` takes images; otherwise why not, in one line with the next step."""
    chain = getattr(model, "models", None)
    if isinstance(chain, list | tuple) and chain:
        for inner in chain:
            why = vision_refusal(inner)
            if why is not None:
                return why
        return None
    name = str(getattr(model, "name", "") or "the model")
    declared = getattr(model, "vision", None)
    if isinstance(declared, bool):
        return None if declared else _no(name)
    provider, _, bare = name.partition(":")
    if provider == "local":
        return (f"{name} runs in llama.cpp without a vision projector (an mmproj file), so it cannot see "
                "images: nothing was sent. Use a vision model (e.g. --model ollama:llava or openai:gpt-4o)")
    if provider == "anthropic":
        return None if "claude" in bare and not re.search(r"claude-(2|instant)", bare) else _no(name)
    if _CLOUD.match(bare) or _OPEN.search(bare):
        return None
    return _no(name)


def _no(name: str) -> str:
    return (f"{name} cannot see images, so nothing was sent. Use a vision model "
            "(e.g. --model ollama:llava, openai:gpt-4o or anthropic:claude-sonnet-4-5), or send text only")
