"""The codec interface: how the engine talks tools with a model in text or natively.

A codec renders the available tools into prompt text and decodes a model's reply into tool
calls plus free text. Implementations: Sym-Ops (`protocols/symops/codec.py`), DML
(`protocols/dml/codec.py`) and native tool calling (`core/native_codec.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from duckflow.llm.types import ToolCall, ToolResult, ToolSpec


@dataclass
class Decoded:
    """A decoded reply: free text, the tool calls found, and what went wrong or was repaired.

    Calls with `executable=False` were guessed; the caller may propose them, never run them.
    `errors` non-empty with no executable calls means the codec could not read the reply; the
    caller can re-ask with `errors` (see each protocol's SelfCorrector).
    """

    text: str
    calls: list[ToolCall] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    confidence: float = 1.0
    questions: list[tuple[str, list[str]]] = field(default_factory=list)  # for the person: (text, options)

    @property
    def executable_calls(self) -> list[ToolCall]:
        return [c for c in self.calls if c.executable]


@runtime_checkable
class Codec(Protocol):
    name: str
    native: bool  # True: tools go to the provider as definitions, not into the prompt

    def system_prompt(self, tools: Sequence[ToolSpec]) -> str:
        """Instructions (and tool stubs) to add to the system prompt; '' for native codecs."""
        ...

    def decode(self, text: str, tools: Sequence[ToolSpec]) -> Decoded:
        """Read a reply's text into calls. Never raises on malformed text."""
        ...

    def encode_calls(self, calls: Sequence[ToolCall]) -> str:
        """Write calls back as the assistant would have (for the conversation history)."""
        ...

    def encode_results(self, results: Sequence[ToolResult]) -> str:
        """Write tool results as text for the next user turn."""
        ...
