"""How the server answers when its own state cannot be used: 503 with one line and the next step.

A damaged SQLite file (a torn write, a bad disk sector) or one that is not a database at all is
no bug of the request: the API answers `503 {"detail", "next"}` naming the damaged file and
what to do, as the CLI does (`store.sqlite.damaged_database_error`; the server keeps the file
open, so the new one starts when it restarts), and the console gets the same one line, not a
traceback.
"""

from __future__ import annotations

import json
import logging
import sqlite3

from duckflow.errors import DuckflowError

log = logging.getLogger("duckflow.channels")
STATE_ERRORS = (sqlite3.DatabaseError, DuckflowError)


def explain(exc: BaseException) -> DuckflowError:
    """The one-line error for a failure of the server's state (damaged, unusable or busy database)."""
    if isinstance(exc, DuckflowError):
        return exc
    from duckflow.store.sqlite import damaged_database_error

    damaged = damaged_database_error(exc)
    if damaged is not None:  # this process keeps the file open: a new one starts with the server
        return DuckflowError(damaged.message, hint=f"{damaged.hint}; then restart `duckflow serve`")
    return DuckflowError(f"a Duckflow database could not be used ({exc})",
                         hint="retry in a moment; if it persists, check the disk and the permissions "
                              "of DUCKFLOW_HOME")


def body(exc: BaseException) -> bytes:
    """The 503 body, logged once as one line."""
    err = explain(exc)
    log.error("%s (next: %s)", err.message, err.hint)
    return json.dumps({"detail": err.message, "next": err.hint}).encode()
