"""DML data: the S state variables and the I instruction library, in English and Japanese.

The texts live in `data/state.json` and `data/instructions.json` (edit, diff and translate them
there); this module only loads them and looks keys up.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Literal

Language = Literal["en", "ja"]
LANGUAGES: tuple[str, ...] = ("en", "ja")


@functools.lru_cache(maxsize=None)
def _load(name: str) -> dict[str, dict[str, str]]:
    raw = json.loads(resources.files(__package__).joinpath("data").joinpath(name).read_text("utf-8"))
    return {k: v for k, v in raw.items() if not k.startswith("_")}


def state_variables() -> dict[str, dict[str, str]]:
    """{name: {"en": meaning, "ja": meaning}} for cwd, last_error, os, task_plan."""
    return dict(_load("state.json"))


def instructions() -> dict[str, dict[str, str]]:
    """{key: {"en": text, "ja": text}} for respect_style, no_guesswork, ... verify_before_edit."""
    return dict(_load("instructions.json"))


def _pick(table: dict[str, dict[str, str]], key: str, language: str) -> str:
    entry = table[key]
    return entry.get(language) or entry["en"]


def instruction_text(key: str, language: str = "en") -> str:
    """The text of instruction `key` (KeyError when unknown)."""
    return _pick(_load("instructions.json"), key, language)


def state_meaning(name: str, language: str = "en") -> str:
    """What state variable `name` means (KeyError when unknown)."""
    return _pick(_load("state.json"), name, language)
