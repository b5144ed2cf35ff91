"""LINE webhook signatures: X-Line-Signature = base64(HMAC-SHA256(channel secret, raw body)).

Format from the LINE Messaging API reference ("Verifying signatures"); stdlib only, constant-time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac


def line_signature(secret: str, body: bytes) -> str:
    return base64.b64encode(hmac.new(secret.encode("utf-8"), body, hashlib.sha256).digest()).decode("ascii")


def check_line(secret: str | None, signature: str | None, body: bytes) -> str | None:
    """None when the body was signed with the secret; otherwise why it is refused (fails closed)."""
    if not secret:
        return "LINE_CHANNEL_SECRET is not set"
    if not signature:
        return "missing X-Line-Signature"
    expected = line_signature(secret, body)
    if not hmac.compare_digest(expected.encode("ascii"), signature.encode("utf-8", "replace")):
        return "signature does not match"
    return None
