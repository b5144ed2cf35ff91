"""Security: the sanitizer that masks secrets and PII before anything leaves the machine.

Public API (imported on first use, so `import duckflow.security` stays cheap; repeated under
TYPE_CHECKING for type checkers): `Sanitizer`, `Masked`, `Finding`, `default_sanitizer`,
`mask_text` (sanitizer.py) and `SanitizingFilter`, `install_log_masking` (logfilter.py).
See docs/security.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from duckflow._lazy import lazy_getattr

if TYPE_CHECKING:  # the lazy names below, for type checkers (`X as X` marks a re-export)
    from duckflow.security.logfilter import SanitizingFilter as SanitizingFilter
    from duckflow.security.logfilter import install_log_masking as install_log_masking
    from duckflow.security.sanitizer import Finding as Finding
    from duckflow.security.sanitizer import Masked as Masked
    from duckflow.security.sanitizer import Sanitizer as Sanitizer
    from duckflow.security.sanitizer import default_sanitizer as default_sanitizer
    from duckflow.security.sanitizer import mask_text as mask_text

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

__getattr__ = lazy_getattr(globals(), _EXPORTS)
