"""A damaged SQLite file behind `duckflow serve` is answered 503 with the file and the next step, not 500."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.channels.cli.test_damaged_db import _damage_pages


def test_a_damaged_sessions_db_is_a_503_naming_the_file_on_every_path(
        live: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from duckflow.channels.runner import SessionRunner

    ws = tmp_path / "ws"
    ws.mkdir()
    first = SessionRunner(ws)  # real sessions saved by the server's own runner, then closed
    sid = first.new_session()
    first.new_session()
    first.close()
    db = Path(os.environ["DUCKFLOW_HOME"]) / "sessions.db"
    _damage_pages(db)

    srv = live()
    with caplog.at_level(logging.ERROR, logger="duckflow.channels"):
        answers = [httpx.get(srv.url + "/v1/sessions", headers=srv.auth),
                   httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "hi"},  # the streamed path
                              headers={**srv.auth, "Accept": "text/event-stream"}),
                   httpx.post(f"{srv.url}/v1/sessions/{sid}/messages", json={"text": "hi"}, headers=srv.auth)]
    for r in answers:
        assert r.status_code == 503, (r.request.url, r.status_code, r.text)
        body = r.json()
        assert str(db) in body["detail"] and "damaged" in body["detail"], body
        assert body["next"].startswith(f"move it aside (mv {db} {db}.damaged)"), body
        assert body["next"].endswith("then restart `duckflow serve`"), body
    assert any(str(db) in rec.getMessage() and rec.exc_info is None for rec in caplog.records)
    assert httpx.get(srv.url + "/healthz").status_code == 200  # the server itself stays up

    db.rename(db.with_name("sessions.db.damaged"))  # as told: a new one starts with the next server
    again = live()
    r = httpx.post(again.url + "/v1/sessions", headers=again.auth)
    assert r.status_code == 201, r.text
