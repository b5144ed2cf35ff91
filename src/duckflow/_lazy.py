"""Lazy package exports: a module `__getattr__` that imports a public name's module on first use.

Packages list `{name: module}` once for the runtime and repeat the imports under
`if TYPE_CHECKING:` so that mypy and IDEs see the real types (a lazy table alone is `Any`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(namespace: dict[str, Any], exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A `__getattr__` for the package whose globals are `namespace`; found names are cached there."""
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
