"""Server access: the bearer token (env or a 0600 file, made on first start), one-time login codes, sign-in cookies.

The token comes from `DUCKFLOW_SERVER_TOKEN`, else from `$DUCKFLOW_HOME/server-token` (created
with mode 0600 on first start, and only then printed). The web page signs in Jupyter-style: the
start-up line prints a link whose URL fragment holds a one-time code (a fragment never reaches
the server, so no access log sees it); the page trades the code once (or the pasted token) for
a sign-in cookie (HttpOnly, SameSite=Strict: no script and no other site can use it) that every
tab of the browser then sends. The cookie is signed with a key made from the token, so a new
token signs every browser out; signing out revokes it. API clients keep sending the token.
"""

from __future__ import annotations

import hashlib
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


COOKIE = "duckflow_signin"
COOKIE_TTL_S = 30 * 24 * 3600  # a browser stays signed in for 30 days (or until it signs out)
PAGE_HEADER = "x-duckflow-page"  # a cookie-signed request that changes something must carry it (no form can)


class SignIns:
    """Sign-in cookies `v1.<issued>.<nonce>.<mac>`: HMAC-SHA256 keyed by the server's token.

    Signed-out nonces are kept (in `revoked_file` when given, this user only) until they expire."""

    def __init__(self, token: str, *, ttl_s: float = COOKIE_TTL_S, revoked_file: Path | None = None) -> None:
        self._key = hashlib.sha256(b"duckflow web sign-in\0" + token.encode("utf-8")).digest()
        self.ttl_s = ttl_s
        self.file = revoked_file
        self._revoked: dict[str, float] = {}  # nonce -> when it was issued
        self._read_at: float | None = None
        self._reread()

    def _reread(self) -> None:
        """The signed-out list again when its file changed (another worker process signed one out)."""
        try:
            mtime = self.file.stat().st_mtime if self.file is not None else None
        except OSError:
            mtime = None
        if mtime is None or mtime == self._read_at or self.file is None:
            return
        self._read_at = mtime
        for line in self.file.read_text("utf-8", "replace").splitlines():
            issued, _, nonce = line.partition(" ")
            try:
                self._revoked[nonce] = float(issued)
            except ValueError:
                continue

    def _mac(self, issued: str, nonce: str) -> str:
        return hmac.new(self._key, f"v1.{issued}.{nonce}".encode(), hashlib.sha256).hexdigest()

    def issue(self) -> str:
        issued, nonce = str(int(time.time())), secrets.token_urlsafe(16)
        return f"v1.{issued}.{nonce}.{self._mac(issued, nonce)}"

    def _parts(self, value: str | None) -> tuple[float, str] | None:
        """(issued, nonce) of a cookie this server signed and that is still good, else None."""
        parts = (value or "").split(".")
        if len(parts) != 4 or parts[0] != "v1" or not parts[1].isdigit():
            return None
        if not same(parts[3], self._mac(parts[1], parts[2])):
            return None
        issued = float(parts[1])
        self._reread()
        if not 0 <= time.time() - issued <= self.ttl_s or parts[2] in self._revoked:
            return None
        return issued, parts[2]

    def valid(self, value: str | None) -> bool:
        return self._parts(value) is not None

    def revoke(self, value: str | None) -> bool:
        """Sign this cookie out for good (also after a restart when a file is kept)."""
        found = self._parts(value)
        if found is None:
            return False
        now = time.time()
        self._revoked = {n: t for n, t in self._revoked.items() if now - t <= self.ttl_s}
        self._revoked[found[1]] = found[0]
        if self.file is not None:
            fd = os.open(self.file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.writelines(f"{int(t)} {n}\n" for n, t in self._revoked.items())
        return True


def cookie_from(header: str) -> str | None:
    """The sign-in cookie's value from a `Cookie:` header (None when absent)."""
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name == COOKIE:
            return value.strip().strip('"')
    return None


def allowed(headers: dict[str, str], method: str, token: str, signins: SignIns) -> bool:
    """A request's access: `Authorization: Bearer TOKEN`, or the sign-in cookie (for a request that
    changes something, with the page's own header as well). Lower-case header names."""
    scheme, _, given = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and given and same(given.strip(), token):
        return True
    if not signins.valid(cookie_from(headers.get("cookie", ""))):
        return False
    return method in ("GET", "HEAD") or headers.get(PAGE_HEADER) == "1"
