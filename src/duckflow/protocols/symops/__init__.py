"""Sym-Ops: the compact text protocol for a model's actions (seed 000), read and written.

    from duckflow.protocols.symops import parse, serialize
    result = parse(reply_text)            # strict -> repaired -> fuzzy -> failed
    result.to_dict()                      # the shape `duckflow protocol parse` prints
    serialize(result)                     # canonical Sym-Ops again

Only actions that were declared explicitly and whose block was properly closed are
`executable`; anything guessed is returned for a person to confirm. See
docs/protocols/symops.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from duckflow.protocols.symops.model import (
    Action,
    Issue,
    Note,
    Question,
    Repair,
    SymOpsResult,
    normalize_verb,
    result_from_dict,
)
from duckflow.protocols.symops.processor import SymOpsProcessor, parse, repair_text
from duckflow.protocols.symops.repair import AutoRepair
from duckflow.protocols.symops.serializer import serialize

if TYPE_CHECKING:
    from duckflow.protocols.symops.codec import SymOpsCodec
    from duckflow.protocols.symops.corrector import SelfCorrector
    from duckflow.protocols.symops.prompts import PromptBuilder
    from duckflow.protocols.symops.robust import DebugProcessor, RobustProcessor
    from duckflow.protocols.symops.streaming import StreamingProcessor

_LAZY = {
    "SymOpsCodec": "duckflow.protocols.symops.codec",
    "SelfCorrector": "duckflow.protocols.symops.corrector",
    "StreamingProcessor": "duckflow.protocols.symops.streaming",
    "PromptBuilder": "duckflow.protocols.symops.prompts",
    "RobustProcessor": "duckflow.protocols.symops.robust",
    "DebugProcessor": "duckflow.protocols.symops.robust",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)


__all__ = [
    "Action", "AutoRepair", "DebugProcessor", "Issue", "Note", "PromptBuilder", "Question",
    "Repair", "RobustProcessor", "SelfCorrector", "StreamingProcessor", "SymOpsCodec",
    "SymOpsProcessor", "SymOpsResult", "normalize_verb", "parse", "repair_text",
    "result_from_dict", "serialize",
]  # fmt: skip
