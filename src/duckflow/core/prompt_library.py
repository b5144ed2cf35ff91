"""A prompt library: an agent's prompt texts by id and language, kept as data files beside its code.

    library = PromptLibrary("duckflow.apps.smartao")   # reads <package>/prompts/<lang>.toml
    library.get("draft.system", "ja")                  # tables give dotted ids
    library.get("draft.depth", "en", goal="...")       # $name placeholders filled in

Seed 004 §9's Prompt Library: template id → text, per language, so a prompt can be read, diffed
and translated on its own. A language without the id (or without a file) falls back to English;
an id missing from English too is an error naming it. Files are read once per process.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources
from string import Template
from typing import Any

from duckflow.core.errors import CoreError

FALLBACK = "en"


class PromptNotFound(CoreError):
    """No prompt with that id in the library (nor in its English file)."""

    code = "prompt"


@functools.cache
def _table(package: str, language: str) -> dict[str, str]:
    try:
        raw = resources.files(package).joinpath(f"prompts/{language}.toml").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        return {}
    flat: dict[str, str] = {}

    def walk(prefix: str, data: dict[str, Any]) -> None:
        for key, value in data.items():
            name = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict):
                walk(name, value)
            else:
                flat[name] = str(value)

    walk("", tomllib.loads(raw))
    return flat


class PromptLibrary:
    """The prompts of one package, by id and language (see the module docstring)."""

    def __init__(self, package: str) -> None:
        self.package = package

    def languages(self) -> list[str]:
        folder = resources.files(self.package).joinpath("prompts")
        return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))

    def ids(self, language: str = FALLBACK) -> list[str]:
        return sorted(_table(self.package, language))

    def get(self, prompt_id: str, language: str, **values: Any) -> str:
        text = _table(self.package, language).get(prompt_id)
        if text is None:
            text = _table(self.package, FALLBACK).get(prompt_id)
        if text is None:
            raise PromptNotFound(f"no prompt '{prompt_id}' in {self.package}/prompts",
                                 hint=f"add it to {self.package.replace('.', '/')}/prompts/{FALLBACK}.toml")
        return Template(text).safe_substitute({k: str(v) for k, v in values.items()}) if values else text
