"""Chooses how a session's turns run: single-call for small local models, two-call otherwise.

Kept apart from `companion/singlecall.py` (the single-call turn itself, with its grammars and
templates), so a session that runs two-call turns never imports that machinery.
"""

from __future__ import annotations

from typing import Any

MODES = {"single": "single", "single_call": "single", "single-call": "single",
         "layered": "layered", "two_call": "layered", "two-call": "layered"}


def inner_model(model: Any) -> Any:
    """The first model under fallback wrappers (the one that answers first)."""
    while getattr(model, "models", None):
        model = model.models[0]
    return model


def model_size_b(model: Any, name: str = "") -> float:
    """Billions of parameters of `model` when known (local GGUFs; a size in the name), else 0."""
    from duckflow.llm.localmodels import _guess_params

    inner = inner_model(model)
    info = getattr(inner, "info", None)
    if info is not None and getattr(info, "params_b", None):
        return float(info.params_b)
    return _guess_params(getattr(inner, "model", "") or name or getattr(inner, "name", ""))


def choose_mode(wanted: str | None, config_mode: str, model: Any, name: str = "",
                below_b: float = 4.0) -> str:
    """`single` or `layered`: the flag, else the config; `auto` picks single-call for a local
    model (in process, Ollama, a server on this machine) smaller than `below_b` billion
    parameters or of unknown size, and the two-call turn for everything else."""
    from duckflow.errors import DuckflowError
    from duckflow.llm.constrain import backend_of

    choice = (wanted or config_mode or "auto").strip().lower()
    if choice in MODES:
        return MODES[choice]
    if choice != "auto":
        raise DuckflowError(f"unknown mode {wanted!r}", hint="use --mode auto, single-call or two-call")
    if backend_of(model) not in ("local", "ollama", "llamacpp-http"):
        return "layered"
    size = model_size_b(model, name)
    if size == 0:  # unknown: in process means a small CPU model; a server may hold anything
        return "single" if backend_of(model) == "local" else "layered"
    return "single" if size < below_b else "layered"
