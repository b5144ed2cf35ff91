"""Images are typed by content and sized from their headers; models are judged able to see or not."""

from __future__ import annotations

import struct
from typing import Any

from duckflow.llm.scripted import ScriptedModel
from duckflow.llm.vision import vision_refusal
from duckflow.orchestra.imagetype import image_problem
from tests.helpers.vision import png


def _jpeg(w: int, h: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0" + b"\1\1\0\0\1\0\1\0\0"
    sof = b"\xff\xc2" + struct.pack(">HBHHB", 11, 8, h, w, 1) + b"\1\x11\0"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def _webp(kind: bytes, body: bytes) -> bytes:
    return b"RIFF" + struct.pack("<I", 4 + 8 + len(body)) + b"WEBP" + kind + struct.pack("<I", len(body)) + body


def test_each_type_is_known_by_its_bytes_and_sized_from_its_header() -> None:
    vp8 = b"\0\0\0" + b"\x9d\x01\x2a" + struct.pack("<HH", 640, 480) + b"\0" * 4
    bits = (320 - 1) | ((200 - 1) << 14)
    vp8l = b"\x2f" + struct.pack("<I", bits) + b"\0" * 4
    vp8x = b"\0" * 4 + (1023).to_bytes(3, "little") + (767).to_bytes(3, "little")
    cases = {
        png(9, 4): ("image/png", (9, 4)),
        _jpeg(1280, 720): ("image/jpeg", (1280, 720)),
        b"GIF89a" + struct.pack("<HH", 16, 8) + b"\0" * 8: ("image/gif", (16, 8)),
        _webp(b"VP8 ", vp8): ("image/webp", (640, 480)),
        _webp(b"VP8L", vp8l): ("image/webp", (320, 200)),
        _webp(b"VP8X", vp8x): ("image/webp", (1024, 768)),
    }
    for data, (media, size) in cases.items():
        assert image_problem(data) == (media, size, None), media


def test_what_is_not_an_image_or_too_big_is_refused_with_the_reason() -> None:
    assert "not a PNG, JPEG, GIF or WebP" in str(image_problem(b"<svg/>")[2])
    assert "not a PNG" in str(image_problem(b"%PDF-1.7 ...")[2])
    assert "does not say its size" in str(image_problem(b"\x89PNG\r\n\x1a\n" + b"\0" * 16)[2])
    assert "does not say its size" in str(image_problem(b"\xff\xd8\xff\xe0\0\x02")[2])
    assert "over the limit" in str(image_problem(_jpeg(9000, 10))[2])
    assert "over the limit" in str(image_problem(_jpeg(7000, 7000))[2])  # 49 M pixels


def test_which_models_can_see() -> None:
    from duckflow.llm.retry import FallbackModel

    seeing = ["openai:gpt-4o", "openai:gpt-4.1-mini", "openai:o3", "anthropic:claude-sonnet-4-5",
              "anthropic:claude-3-haiku-20240307", "ollama:llava:7b", "ollama:llama3.2-vision",
              "ollama:qwen2.5vl:3b", "ollama:gemma3:4b", "openrouter:mistralai/pixtral-12b"]
    blind = ["openai:gpt-3.5-turbo", "openai:o1-mini", "ollama:qwen2.5-coder:7b", "anthropic:claude-2.1",
             "local:default", "scripted:demo"]
    for name in seeing:
        assert vision_refusal(type("M", (), {"name": name})()) is None, name
    for name in blind:
        why = vision_refusal(type("M", (), {"name": name})())
        assert why is not None and "\n" not in why and name in why, name
    assert "projector" in str(vision_refusal(type("M", (), {"name": "local:default"})()))
    assert vision_refusal(ScriptedModel(vision=True)) is None
    chain = FallbackModel([ScriptedModel(vision=True), ScriptedModel(name="blind")])
    assert "scripted:blind" in str(vision_refusal(chain))


async def test_llama_cpp_without_a_projector_refuses_images_before_loading_anything(tmp_path: Any) -> None:
    import pytest

    from duckflow.llm.errors import LLMError
    from duckflow.llm.local import LocalModel
    from duckflow.llm.localmodels import LocalModelInfo
    from duckflow.llm.types import ImagePart, Message

    model = LocalModel(LocalModelInfo("tiny", tmp_path / "missing.gguf", 0.1, "tiny"))
    with pytest.raises(LLMError, match="without a vision projector"):
        async for _ in model.stream([Message("user", "what is this?", images=[ImagePart(png(2, 2))])]):
            pass
