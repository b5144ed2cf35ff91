"""Slack request signatures: `v0=` HMAC-SHA256 over `v0:{timestamp}:{raw body}`, 300 s window.

Format from Slack's "Verifying requests from Slack" documentation; stdlib only, so the check
works (and fails closed) whether or not the `[slack]` extra is installed.
"""

from __future__ import annotations

import hashlib
import hmac
import time

WINDOW_S = 300


def slack_signature(secret: str, timestamp: str, body: bytes) -> str:
    base = b"v0:" + timestamp.encode("ascii") + b":" + body
    return "v0=" + hmac.new(secret.encode("utf-8"), base, hashlib.sha256).hexdigest()


def check_slack(secret: str, timestamp: str | None, signature: str | None, body: bytes,
                now: float | None = None) -> str | None:
    """None when the request is genuine and fresh; otherwise why it is refused."""
    if not timestamp or not signature:
        return "missing X-Slack-Request-Timestamp or X-Slack-Signature"
    try:
        ts = int(timestamp)
    except ValueError:
        return "bad timestamp"
    current = time.time() if now is None else now
    if abs(current - ts) > WINDOW_S:
        return "timestamp outside the 300-second window (replayed or clock skew)"
    expected = slack_signature(secret, timestamp, body)
    if not hmac.compare_digest(expected.encode("utf-8"), signature.encode("utf-8", "replace")):
        return "signature does not match"
    return None
