"""The native codec: tools go to the provider as definitions and calls come back structured.

Implements `duckflow.protocols.codec.Codec` with `native=True`: nothing is added to the
system prompt, `decode` finds no calls in text (the provider returned them as events), and
`encode_*` render calls and results as JSON text for logs or for text-only histories.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from duckflow.llm.types import ToolCall, ToolResult, ToolSpec
from duckflow.protocols.codec import Decoded


class NativeCodec:
    name = "native"
    native = True

    def system_prompt(self, tools: Sequence[ToolSpec]) -> str:
        return ""

    def decode(self, text: str, tools: Sequence[ToolSpec]) -> Decoded:
        return Decoded(text=text)

    def encode_calls(self, calls: Sequence[ToolCall]) -> str:
        return json.dumps(
            [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls],
            ensure_ascii=False,
        )

    def encode_results(self, results: Sequence[ToolResult]) -> str:
        return json.dumps(
            [{"id": r.call_id, "name": r.name, "content": r.content, "is_error": r.is_error}
             for r in results],
            ensure_ascii=False,
        )
