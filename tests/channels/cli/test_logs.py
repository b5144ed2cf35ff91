"""Log records of Duckflow's own loggers reach stderr only after the sanitizer masked them."""

from __future__ import annotations

import io
import logging

from duckflow.channels.cli.logs import setup_logging


def test_a_secret_in_a_log_line_is_masked() -> None:
    stream = io.StringIO()
    logger = setup_logging(stream)
    try:
        logging.getLogger("duckflow.companion").warning("retrying with key %s", "AKIAIOSFODNN7EXAMPLE")
        out = stream.getvalue()
        assert "AKIAIOSFODNN7EXAMPLE" not in out
        assert "[SECRET:aws_access_key#" in out and "retrying with key" in out
    finally:
        for h in list(logger.handlers):
            logger.removeHandler(h)
        logger.propagate = True


def test_setup_is_idempotent() -> None:
    logger = setup_logging(io.StringIO())
    try:
        setup_logging(io.StringIO())
        assert len(logger.handlers) == 1 and logger.propagate is False
    finally:
        for h in list(logger.handlers):
            logger.removeHandler(h)
        logger.propagate = True


def test_the_handler_follows_a_replaced_stderr(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    logger = setup_logging()
    try:
        replaced = io.StringIO()
        monkeypatch.setattr("sys.stderr", replaced)
        logging.getLogger("duckflow.x").warning("mail me at taro@example.com")
        assert "[PII:email#" in replaced.getvalue() and "taro@example.com" not in replaced.getvalue()
    finally:
        for h in list(logger.handlers):
            logger.removeHandler(h)
        logger.propagate = True
