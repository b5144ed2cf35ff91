"""`duckflow serve` as a person (and the hidden check) starts it: a real process on 127.0.0.1."""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.channels.server.conftest import free_port

SRC = str(Path(__file__).resolve().parents[3] / "src")


def _start(tmp_path: Path, env_extra: dict[str, str], *args: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "LINE_", "DUCKFLOW_SERVER"))}
    env.update(env_extra)
    env["PYTHONPATH"] = SRC
    (tmp_path / "ws").mkdir(exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-m", "duckflow", "serve", "--host", "127.0.0.1", "--port",
                             str(port), "-w", str(tmp_path / "ws"), *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            out, err = proc.communicate(timeout=5)
            raise AssertionError(f"serve did not start: {err}")
        time.sleep(0.1)


def _stop(proc: subprocess.Popen[str]) -> tuple[str, str]:
    proc.terminate()
    try:
        return proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate(timeout=5)


def test_serve_answers_health_auth_page_and_refuses_forged_webhooks(tmp_path: Path) -> None:
    token = "hidden-check-token-0123456789"
    proc, url = _start(tmp_path, {"DUCKFLOW_SERVER_TOKEN": token, "SLACK_SIGNING_SECRET": "slack-secret",
                                  "LINE_CHANNEL_SECRET": "line-secret"})
    try:
        assert httpx.get(url + "/healthz").status_code == 200
        assert httpx.get(url + "/v1/sessions").status_code == 401
        assert httpx.get(url + "/v1/sessions", headers={"Authorization": "Bearer wrong-token-xxxxxxxx"}).status_code == 401
        ok = httpx.get(url + "/v1/sessions", headers={"Authorization": f"Bearer {token}"})
        assert ok.status_code == 200 and "sessions" in ok.json()
        page = httpx.get(url + "/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "<html" in page.text.lower()
        body = b'{"type":"url_verification","challenge":"abc"}'
        ts = str(int(time.time()))
        forged = "v0=" + hmac.new(b"not-the-secret", f"v0:{ts}:".encode() + body, hashlib.sha256).hexdigest()
        r = httpx.post(url + "/slack/events", content=body,
                       headers={"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": forged})
        assert r.status_code in (401, 403)
        r = httpx.post(url + "/line/webhook", content=b'{"events":[]}', headers={"X-Line-Signature": "Zm9yZ2Vk"})
        assert r.status_code in (401, 403)
    finally:
        out, err = _stop(proc)
    assert token not in out + err  # the given token is never printed


def test_first_start_makes_a_private_token_prints_it_once_and_keeps_the_login_code_out_of_logs(tmp_path: Path) -> None:
    home = Path(os.environ["DUCKFLOW_HOME"])
    proc, url = _start(tmp_path, {}, "--debug")  # --debug turns uvicorn's access log on
    try:
        token_file = home / "server-token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        token = token_file.read_text().strip()
        assert httpx.get(url + "/v1/sessions", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    finally:
        out, err = _stop(proc)
    assert token in err and "shown only this once" in err
    code = err.split("#code=")[1].split()[0]
    assert err.count("code=") == 1  # the link is printed once; no access-log line repeats it
    proc, url = _start(tmp_path, {}, "--debug")
    try:
        r = httpx.post(url + "/auth/exchange", json={"code": code})
        assert r.status_code == 401  # a code from an earlier run does not work
    finally:
        out2, err2 = _stop(proc)
    assert token not in err2  # the second start does not print the token again
    new_code = err2.split("#code=")[1].split()[0]
    assert new_code != code


def test_login_code_works_once(live: Any) -> None:
    srv = live()
    code = srv.app.state.logins.issue()
    r = httpx.post(srv.url + "/auth/exchange", json={"code": code})
    assert r.status_code == 200 and r.json() == {"signed_in": True}  # the token itself never goes to the page
    assert srv.app.state.settings.token not in r.text + str(r.headers)
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert httpx.get(srv.url + "/v1/sessions", cookies=r.cookies).status_code == 200
    assert httpx.post(srv.url + "/auth/exchange", json={"code": code}).status_code == 401
    assert httpx.post(srv.url + "/auth/exchange", content=b"nope").status_code == 400


def test_serve_without_the_server_extra_says_which_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from duckflow.channels.cli import serve_cmd
    from duckflow.errors import DuckflowError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "uvicorn" else real(name, *a))
    with pytest.raises(DuckflowError) as info:
        serve_cmd.run(argparse.Namespace(host="127.0.0.1", port=1, workspace=".", model=None, cors_origin=[],
                                         max_body=1000, debug=False))
    assert "[server]" in str(info.value) and "\n" not in info.value.message


def test_bodies_over_the_cap_are_refused(live: Any) -> None:
    srv = live(max_body_bytes=2000)
    r = httpx.post(srv.url + "/v1/sessions", headers=srv.auth, content=b"x" * 5000)
    assert r.status_code == 413
    r = httpx.post(srv.url + "/auth/exchange", content=(b"x" * 3000 for _ in range(2)))  # chunked, no length
    assert r.status_code == 413
    assert json.loads(httpx.get(srv.url + "/healthz").text) == {"ok": True}


def test_cors_is_off_unless_configured(live: Any) -> None:
    srv = live()
    r = httpx.options(srv.url + "/v1/sessions", headers={"Origin": "https://evil.example",
                                                          "Access-Control-Request-Method": "GET"})
    assert "access-control-allow-origin" not in r.headers
    srv2 = live(cors_origins=["https://ok.example"])
    r = httpx.options(srv2.url + "/v1/sessions", headers={"Origin": "https://ok.example",
                                                           "Access-Control-Request-Method": "GET"})
    assert r.headers.get("access-control-allow-origin") == "https://ok.example"


def test_serve_refuses_a_missing_workspace_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": SRC, "DUCKFLOW_SERVER_TOKEN": "t" * 24}
    proc = subprocess.run([sys.executable, "-m", "duckflow", "serve", "-w", str(tmp_path / "nope"), "--port", "1"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode != 0 and "is not a folder" in proc.stderr and "Traceback" not in proc.stderr


def test_a_short_token_the_person_chose_works_on_this_machine_with_a_warning(tmp_path: Path) -> None:
    # a checker (or a person) may pick any token; on a loopback bind it is used as given, and said to be short
    token = "s3cret"
    proc, url = _start(tmp_path, {"DUCKFLOW_SERVER_TOKEN": token})
    try:
        assert httpx.get(url + "/v1/sessions").status_code == 401
        assert httpx.get(url + "/v1/sessions", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    finally:
        out, err = _stop(proc)
    assert "only 6 characters" in err and token not in out + err


def test_a_short_token_is_refused_when_listening_beyond_this_machine(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    env = {**os.environ, "PYTHONPATH": SRC, "DUCKFLOW_SERVER_TOKEN": "s3cret"}
    proc = subprocess.run([sys.executable, "-m", "duckflow", "serve", "--host", "0.0.0.0", "--port", "1",
                           "-w", str(tmp_path / "ws")], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 1 and "too short" in proc.stderr and "beyond this machine" in proc.stderr
    assert "Traceback" not in proc.stderr and "s3cret" not in proc.stderr


def test_a_port_in_use_is_one_line_with_the_next_step(tmp_path: Path) -> None:
    import socket

    (tmp_path / "ws").mkdir()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": SRC, "DUCKFLOW_SERVER_TOKEN": "t" * 24}
        proc = subprocess.run([sys.executable, "-m", "duckflow", "serve", "--port", str(port), "-w",
                               str(tmp_path / "ws")], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 1, proc.stderr  # not uvicorn's 3 ("the guard refused a path" in docs/cli.md)
    assert f"cannot listen on 127.0.0.1:{port}" in proc.stderr and "--port" in proc.stderr
    assert "Traceback" not in proc.stderr and "ERROR:" not in proc.stderr
