"""Chooses an agent's codec: native tool calling when the model has it, else a text protocol."""

from __future__ import annotations

import importlib
from typing import Any

from duckflow.core.native_codec import NativeCodec
from duckflow.errors import ConfigError
from duckflow.llm.types import Model
from duckflow.protocols.codec import Codec

CODEC_NAMES = ("auto", "native", "symops", "dml")


def codec_by_name(name: str) -> Codec:
    """"native" | "symops" | "dml" → a codec instance (text codecs are imported lazily)."""
    key = name.strip().lower().replace("-", "").replace("_", "")
    if key == "native":
        return NativeCodec()
    if key == "symops":
        return _load("duckflow.protocols.symops", "SymOpsCodec")
    if key == "dml":
        return _load("duckflow.protocols.dml", "DMLCodec")
    raise ConfigError(f"unknown codec '{name}'", hint=f"use one of: {', '.join(CODEC_NAMES)}")


def _load(module: str, cls: str) -> Codec:
    try:
        factory: Any = getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"the codec {cls} is not available ({exc})",
                          hint="use codec='native' with a model that supports tools") from exc
    codec: Codec = factory()
    return codec


def resolve_codec(codec: Codec | str | None, model: Model) -> Codec:
    """The codec given (object or name); None or "auto": native when the model's tool calling
    is known to be reliable (llm/toolcalling.py: a probe remembered, else the family table),
    Sym-Ops otherwise."""
    if codec is None or (isinstance(codec, str) and codec.strip().lower() == "auto"):
        from duckflow.llm.toolcalling import reliable_native

        return NativeCodec() if reliable_native(model) else codec_by_name("symops")
    chosen = codec_by_name(codec) if isinstance(codec, str) else codec
    if chosen.native and not model.supports_tools:
        raise ConfigError(f"the model {model.name} has no native tool calling",
                          hint="use codec='symops' or codec='dml' for this model")
    return chosen
