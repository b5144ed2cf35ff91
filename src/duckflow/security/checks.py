"""Check-digit and plausibility tests the sanitizer uses to confirm numeric and token candidates."""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections import Counter


def luhn_valid(digits: str) -> bool:
    """True when `digits` (only 0-9) passes the Luhn mod-10 check (ISO/IEC 7812-1 annex B)."""
    if not digits.isdigit() or len(digits) < 2:
        return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def card_brand(digits: str) -> str | None:
    """The card scheme whose IIN range and length fit `digits`, or None.

    Ranges from the schemes' published IIN tables (Visa 4; Mastercard 51-55 and 2221-2720;
    Amex 34/37; Discover 6011, 644-649, 65; JCB 3528-3589; Diners 300-305, 36, 38-39;
    UnionPay 62).
    """
    n = len(digits)
    if digits.startswith("4") and n in (13, 16, 19):
        return "visa"
    two = int(digits[:2])
    four = int(digits[:4])
    if n == 16 and (51 <= two <= 55 or 2221 <= four <= 2720):
        return "mastercard"
    if n == 15 and two in (34, 37):
        return "amex"
    if 16 <= n <= 19 and (four == 6011 or 644 <= int(digits[:3]) <= 649 or two == 65):
        return "discover"
    if 16 <= n <= 19 and 3528 <= four <= 3589:
        return "jcb"
    if 14 <= n <= 19 and (300 <= int(digits[:3]) <= 305 or two in (36, 38, 39)):
        return "diners"
    if 16 <= n <= 19 and two == 62:
        return "unionpay"
    return None


def my_number_check_digit(first11: str) -> int:
    """Check digit of a Japanese individual number (マイナンバー, 12 digits).

    Formula from 「行政手続における特定の個人を識別するための番号の利用等に関する法律の規定
    による通知カード及び個人番号カード並びに情報提供ネットワークシステムによる特定個人情報の
    提供等に関する省令」(平成二十六年総務省令第八十五号) 第五条, the 算式 named by 施行令
    第八条 (e-Gov 法令検索): with P_n the n-th digit counted from the right of
    the first eleven digits, Q_n = n + 1 for 1 <= n <= 6 and n - 5 for 7 <= n <= 11,
    r = (sum of P_n * Q_n) mod 11; the check digit is 0 when r <= 1, otherwise 11 - r.
    """
    if len(first11) != 11 or not first11.isdigit():
        raise ValueError("a My Number body is exactly 11 digits")
    total = 0
    for n in range(1, 12):
        p = ord(first11[11 - n]) - 48
        q = n + 1 if n <= 6 else n - 5
        total += p * q
    r = total % 11
    return 0 if r <= 1 else 11 - r


def my_number_valid(digits: str) -> bool:
    """True when `digits` is 12 digits whose last one is the My Number check digit."""
    if len(digits) != 12 or not digits.isdigit():
        return False
    if len(set(digits)) == 1:
        return False
    return my_number_check_digit(digits[:11]) == ord(digits[11]) - 48


def shannon_entropy(value: str) -> float:
    """Bits per character of `value` (0.0 for the empty string)."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def char_classes(value: str) -> int:
    """How many of lower, upper, digit and other (non-space) characters `value` uses."""
    lower = upper = digit = other = 0
    for ch in value:
        if ch.islower():
            lower = 1
        elif ch.isupper():
            upper = 1
        elif ch.isdigit():
            digit = 1
        elif not ch.isspace():
            other = 1
    return lower + upper + digit + other


def jwt_like(token: str) -> bool:
    """True when the first segment of a dotted token decodes to a JSON object (a JOSE header)."""
    head = token.split(".", 1)[0]
    pad = "=" * (-len(head) % 4)
    try:
        raw = base64.urlsafe_b64decode(head + pad)
        obj = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return isinstance(obj, dict)
