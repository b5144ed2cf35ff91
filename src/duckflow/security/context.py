"""Secrets recognised by their context: credentials in URLs, on command lines, in cookies,
Mailchimp keys (found from their suffix) and AWS secret keys near a key id or the word "aws"."""

from __future__ import annotations

import re
from collections.abc import Iterator

from duckflow._lazyre import LazyPattern, Regex
from duckflow.security.checks import char_classes
from duckflow.security.rules import (
    _E,
    _TOKEN_CHARS,
    P_CONTEXT,
    P_FORMAT,
    SECRET,
    Candidate,
    Hay,
    _r,
    _random_enough,
    _url_password_ok,
    inside_string_literal,
)

# Credentials in URLs: found from the literal "://" (a scheme-first regex is ten times slower).
_URL_CREDS = _r(r"://([^\s:/@\"'<>]*):([^\s@/\"'<>]+)@[A-Za-z0-9\[]")
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")


def find_url_passwords(text: str) -> Iterator[Candidate]:
    """`scheme://user:password@host`: only the password is reported."""
    if "://" not in text:
        return
    for m in _URL_CREDS.finditer(text):
        i = m.start()
        while i > 0 and m.start() - i <= 30 and text[i - 1] in _SCHEME_CHARS:
            i -= 1
        if i == m.start() or not text[i].isalpha():
            continue
        quoted = inside_string_literal(text, i)
        if not _url_password_ok(m.group(2), in_code=quoted) or quoted and m.group(2) == m.group(1):
            continue  # (in code, user:user@ is an example too)
        yield Candidate(m.start(2), m.end(2), "url_password", SECRET, P_CONTEXT)


# Passwords on command lines people paste: curl -u user:pw, mysql -pPW, docker login -p PW,
# redis-cli -a PW, sshpass -p PW, --password PW.
_CLI: tuple[tuple[tuple[str, ...], Regex], ...] = (
    (("curl", "wget", "http "), _r(r"(?:curl|wget|http)\b[^\n]*?\s(?:-u|--user)[ =]?[\"']?[^\s:\"']+:([^\s\"']+)")),
    (("mysql",), _r(r"mysql(?:dump|admin)?\b[^\n]*?\s-p([^\s\"']+)")),
    (("login",), _r(r"(?:docker|podman|nerdctl|helm|buildah|skopeo)\b[^\n]*?\blogin\b[^\n]*?\s(?:-p|--password)[ =]([^\s\"']+)")),
    (("redis-cli",), _r(r"redis-cli\b[^\n]*?\s-a\s+([^\s\"']+)")),
    (("sshpass",), _r(r"sshpass\s+-p\s*([^\s\"']+)")),
    (("--pass", "--token", "--api", "--secret", "--client-secret"),
     _r(r"--(?:password|passwd|pass|token|api-key|apikey|secret|client-secret)(?:\s+|=)[\"']?([^\s\"'-][^\s\"']*)")),
)


def _lines_with(text: str, needle: str) -> Iterator[tuple[int, int]]:
    i = text.find(needle)
    while i >= 0:
        a = text.rfind("\n", 0, i) + 1
        b = text.find("\n", i)
        b = len(text) if b < 0 else b
        yield a, b
        i = text.find(needle, b)


def find_cli_passwords(text: str, hay: Hay | None = None) -> Iterator[Candidate]:
    """Secrets given as command-line options; only the value is reported."""
    hay = hay or Hay(text, text)
    for needles, rx in _CLI:
        for needle in needles:
            if not hay.has(needle):
                continue
            for a, b in _lines_with(text, needle):
                for m in rx.finditer(text, a, b):
                    value = m.group(1)
                    if len(value) >= 4 and _url_password_ok(value) and not value.startswith("$"):
                        yield Candidate(m.start(1), m.end(1), "password", SECRET, P_CONTEXT)


_COOKIE_LINE = _r(r"(?i)\b(?:set-)?cookie\s*:[^\n]*")
_COOKIE_PAIR = _r(r"([A-Za-z0-9_.\-]+)=([^;\s,\"'\\]{12,})(?![^;\s,\"'])")


def find_cookies(text: str, hay: Hay | None = None) -> Iterator[Candidate]:
    """Values in `Cookie:` / `Set-Cookie:` headers that look like session identifiers."""
    hay = hay or Hay(text, text.lower())
    if not hay.has("cookie", lower=True):
        return
    for line in _COOKIE_LINE.finditer(hay.lowered):
        for m in _COOKIE_PAIR.finditer(text, line.start(), line.end()):
            value = m.group(2)
            name = m.group(1).lower()
            if name in ("path", "domain", "expires", "max-age", "samesite"):
                continue
            if _random_enough(value) or re.fullmatch(r"[0-9a-fA-F]{16,}", value):
                yield Candidate(m.start(2), m.end(2), "cookie", SECRET, P_CONTEXT)


_MAILCHIMP = _r(r"-us\d{1,2}" + _E)
_HEX32 = LazyPattern(r"[0-9a-f]{32}")


def find_mailchimp(text: str) -> Iterator[Candidate]:
    """Mailchimp keys (32 hex + `-us` + datacenter), found from the rare `-usN` suffix backwards."""
    for m in _MAILCHIMP.finditer(text):
        start = m.start() - 32
        if start >= 0 and _HEX32.fullmatch(text, start, m.start()) and (
            start == 0 or text[start - 1] not in _TOKEN_CHARS
        ):
            yield Candidate(start, m.end(), "mailchimp_key", SECRET, P_FORMAT)


_NEAR_AWS_SECRET = _r(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def aws_secret_near_key_ids(text: str, key_ids: list[Candidate], hay: Hay | None = None) -> Iterator[Candidate]:
    """A 40-character secret access key close to an access key id (CSV, INI) or to the word
    "aws" (same line or the two after it), however it is written."""
    windows = [(c.end, min(len(text), c.end + 400)) for c in key_ids]
    lowered = hay.lowered if hay is not None else text.lower()
    if (hay.has("aws", lower=True) if hay is not None else "aws" in lowered):
        i = lowered.find("aws")
        while i >= 0:
            end = i
            for _ in range(3):
                nl = text.find("\n", end + 1)
                end = len(text) if nl < 0 else nl
            windows.append((i, end))
            i = lowered.find("aws", end)
    for a, b in windows:
        for m in _NEAR_AWS_SECRET.finditer(text, a, b):
            value = m.group(0)
            # base64 with / or + (as ~70 % of real keys are), or anything mixed near a key id
            if char_classes(value) >= 3 and (not value.isalnum() or bool(key_ids)):
                yield Candidate(m.start(), m.end(), "aws_secret_key", SECRET, P_FORMAT)
