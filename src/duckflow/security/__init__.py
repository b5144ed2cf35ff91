"""Security: the sanitizer that masks secrets and PII before anything leaves the machine.

Public API (imported on first use, so `import duckflow.security` stays cheap):
`Sanitizer`, `Masked`, `Finding`, `default_sanitizer`, `mask_text` (sanitizer.py) and
`SanitizingFilter`, `install_log_masking` (logfilter.py). See docs/security.md.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "Sanitizer": "duckflow.security.sanitizer",
    "Masked": "duckflow.security.sanitizer",
    "Finding": "duckflow.security.sanitizer",
    "default_sanitizer": "duckflow.security.sanitizer",
    "mask_text": "duckflow.security.sanitizer",
    "SanitizingFilter": "duckflow.security.logfilter",
    "install_log_masking": "duckflow.security.logfilter",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'duckflow.security' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
