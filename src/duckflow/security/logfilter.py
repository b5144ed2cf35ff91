"""A logging filter that masks secrets and personal data in every record before any handler writes it."""

from __future__ import annotations

import logging

from duckflow.security.sanitizer import Sanitizer, default_sanitizer


class SanitizingFilter(logging.Filter):
    """Replaces a record's message (arguments merged in) with its masked form.

    Attach it to handlers (`handler.addFilter(SanitizingFilter())`) or use
    `install_log_masking()`; exception text is masked too.
    """

    def __init__(self, sanitizer: Sanitizer | None = None) -> None:
        super().__init__()
        self.sanitizer = sanitizer or default_sanitizer()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = self.sanitizer.mask(message).text
        if masked != message or record.args:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.sanitizer.mask(record.exc_text).text
        return True


def install_log_masking(logger: logging.Logger | None = None) -> SanitizingFilter:
    """Add a SanitizingFilter to every handler of `logger` (the root logger by default)."""
    target = logger or logging.getLogger()
    flt = SanitizingFilter()
    for handler in target.handlers:
        if not any(isinstance(f, SanitizingFilter) for f in handler.filters):
            handler.addFilter(flt)
    return flt
