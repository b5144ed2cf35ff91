"""Logging for the command line: Duckflow's records go to stderr, masked by the sanitizer first."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any


class MaskingHandler(logging.StreamHandler):  # type: ignore[type-arg,unused-ignore]  # generic only in newer typeshed
    """A stderr handler that passes every record through the sanitizer before writing it.

    The sanitizer is imported on the first record, so commands that log nothing pay nothing.
    """

    def __init__(self, stream: Any = None) -> None:
        super().__init__(stream if stream is not None else sys.stderr)
        self.follow_stderr = stream is None  # write to whatever sys.stderr is at the time
        self._mask: logging.Filter | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self._mask is None:
            from duckflow.security.logfilter import SanitizingFilter

            self._mask = SanitizingFilter()
        self._mask.filter(record)
        if self.follow_stderr:
            self.stream = sys.stderr
        super().emit(record)


def setup_logging(stream: Any = None) -> logging.Logger:
    """Route the `duckflow` loggers to one masking stderr handler (level: DUCKFLOW_LOG_LEVEL)."""
    logger = logging.getLogger("duckflow")
    level = os.environ.get("DUCKFLOW_LOG_LEVEL", "WARNING").upper()
    logger.setLevel(getattr(logging, level, logging.WARNING))
    handler = next((h for h in logger.handlers if isinstance(h, MaskingHandler)), None)
    if handler is None:
        handler = MaskingHandler(stream)
        handler.setFormatter(logging.Formatter("duckflow: %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    elif stream is not None:  # not setStream(): it flushes the old stream, which may be closed
        handler.follow_stderr, handler.stream = False, stream
    logger.propagate = False  # nothing reaches an unmasked root handler
    return logger
