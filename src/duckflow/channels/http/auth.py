"""Server access: the bearer token (env or a 0600 file, made on first start) and one-time login codes.

The token comes from `DUCKFLOW_SERVER_TOKEN`, else from `$DUCKFLOW_HOME/server-token` (created
with mode 0600 on first start, and only then printed). The web page gets it Jupyter-style: the
start-up line prints a link whose URL fragment holds a one-time code (a fragment never reaches
the server, so no access log sees it); the page trades the code for the token once.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import stat
import time
from pathlib import Path

from duckflow.errors import DuckflowError
from duckflow.paths import duckflow_home

TOKEN_ENV = "DUCKFLOW_SERVER_TOKEN"
MIN_TOKEN_LEN = 16


def token_path() -> Path:
    return duckflow_home() / "server-token"


def resolve_token(environ: dict[str, str] | None = None, *, loopback: bool = True) -> tuple[str, bool]:
    """(token, created_now). A token file readable by others is refused, not used.

    A token the person set themselves is used as given while the server listens on this machine
    only (`short_token_note` says when it is short); beyond it, a short one is refused: anyone on
    the network could guess it.
    """
    env = os.environ if environ is None else environ
    given = env.get(TOKEN_ENV, "").strip()
    if given:
        if len(given) < MIN_TOKEN_LEN and not loopback:
            raise DuckflowError(f"{TOKEN_ENV} is too short ({len(given)} characters) for a server listening "
                                "beyond this machine",
                                hint=f"use at least {MIN_TOKEN_LEN} random characters, or unset it to get one made")
        return given, False
    path = token_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        mode = path.stat().st_mode
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise DuckflowError(f"{path} can be read by other users (mode {oct(mode & 0o777)})",
                                hint=f"chmod 600 {path}, or delete it to get a new token") from None
        token = path.read_text(encoding="utf-8").strip()
        if len(token) < MIN_TOKEN_LEN:
            raise DuckflowError(f"{path} holds no usable token", hint="delete it to get a new one") from None
        return token, False
    token = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    return token, True


def short_token_note(token: str) -> str | None:
    """A warning for a short token the person chose (it is still used on a loopback bind)."""
    if len(token) >= MIN_TOKEN_LEN:
        return None
    return (f"warning: {TOKEN_ENV} has only {len(token)} characters; a local process could guess it. "
            f"Use at least {MIN_TOKEN_LEN} random characters, or unset it to get one made")


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback IP literals: a bind no other machine can reach."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def same(given: str, expected: str) -> bool:
    """Constant-time comparison of two secrets."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


class LoginCodes:
    """One-time codes the page trades for the token; each works once, within `ttl_s`."""

    def __init__(self, ttl_s: float = 24 * 3600) -> None:
        self.ttl_s = ttl_s
        self._codes: dict[str, float] = {}

    def issue(self) -> str:
        code = secrets.token_urlsafe(24)
        self._codes[code] = time.monotonic() + self.ttl_s
        return code

    def redeem(self, code: str) -> bool:
        now = time.monotonic()
        for known, until in list(self._codes.items()):
            if until < now:
                self._codes.pop(known, None)
            elif same(code, known):
                self._codes.pop(known, None)
                return True
        return False
