"""The Sym-Ops tool list keeps a space between a long `$ tool @ arg` and its description."""

from __future__ import annotations

from duckflow.llm.types import ToolSpec
from duckflow.protocols.symops.codec import SymOpsCodec


def test_long_tool_names_keep_a_space_before_the_description() -> None:
    specs = [ToolSpec("create_directory", "Create a folder.", {"type": "object", "properties": {"path": {}}}),
             ToolSpec("ls", "List.", {"type": "object", "properties": {"path": {}}})]
    text = SymOpsCodec().system_prompt(specs)
    assert "$ create_directory @ path Create a folder." in text
    assert "$ ls @ path" in text and "pathCreate" not in text
