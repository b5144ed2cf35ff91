"""Detectors for personal data: e-mail, phone numbers, payment cards, My Number, postal addresses.

Numbers that are personal data only in context (a bare 0312345678, a 12-digit My Number, a
postal code without 〒) are reported only after a word that names them (電話/TEL, マイナンバー/
個人番号, 郵便番号) or, for My Number, in a CSV/TSV column whose header names it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from duckflow._lazyre import LazyPattern, Regex
from duckflow.security.checks import card_brand, luhn_valid, my_number_valid
from duckflow.security.rules import P_CHECKED, P_PII, PII, Candidate

_LOCAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-'")
_EMAIL_DOMAIN = LazyPattern(
    r"@((?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24})(?![A-Za-z0-9\-]|\.[A-Za-z0-9])",
    re.ASCII,
)


def find_emails(text: str) -> Iterator[Candidate]:
    """Addresses found from each '@' outwards, so long identifiers are never re-scanned."""
    if "@" not in text:
        return
    for m in _EMAIL_DOMAIN.finditer(text):
        at = m.start()
        i = at
        while i > 0 and at - i < 64 and text[i - 1] in _LOCAL_CHARS:
            i -= 1
        while i < at and text[i] in ".'-+":
            i += 1
        if i == at or text[at - 1] == ".":
            continue
        if i > 0 and text[i - 1] in _LOCAL_CHARS:
            continue  # a local part longer than 64 characters is not an address
        if text[max(0, i - 3) : i] == "://":
            continue  # URL user info (https://key@host), not a mailbox
        yield Candidate(i, m.end(), "email", PII, P_PII)


def _digits(s: str) -> str:
    return "".join(ch for ch in s if ch.isdigit())


# International numbers: "+" country code, then groups; 8-15 digits in all (ITU-T E.164).
_PHONE_INTL = LazyPattern(
    r"\+\d{1,3}(?:[ .\-]?\(0?\d{1,4}\))?(?:[ .\-]?\d{1,5}){1,5}(?![\w\-]|\.\d)",
    re.ASCII,
)
# Japanese domestic numbers (総務省 電気通信番号計画): 0 + area/mobile code, 10 or 11 digits.
_PHONE_JP = LazyPattern(
    r"(?:0\d{1,4}([- .])\d{1,4}\1\d{3,4}|\(0\d{1,4}\)\s?\d{1,4}-\d{4}|0\d{1,4}\(\d{1,4}\)\d{4}|0[5789]0\d{8})(?![\w\-.])",
    re.ASCII,
)
# A domestic number written without separators (0312345678) is a phone only after a word that
# says so (電話, TEL, FAX, 携帯, phone) a few characters before it.
_PHONE_JP_BARE = LazyPattern(r"0\d{9,10}(?![\w\-.]|\.\d)", re.ASCII)
_PHONE_CONTEXT = LazyPattern(r"(?i)(?:電話|携帯|連絡先|tel|fax|phone|mobile)")
# North American numbers (NANP): [1-](NXX) NXX-XXXX, NXX-NXX-XXXX, NXX.NXX.XXXX, NXX NXX XXXX.
_PHONE_US = LazyPattern(
    r"(?:1[-. ])?(?:\([2-9]\d{2}\)\s?|[2-9]\d{2}([-. ]))[2-9]\d{2}(?(1)\1|[-. ])\d{4}(?![\w\-.]|\.\d)",
    re.ASCII,
)
# US Social Security numbers: AAA-GG-SSSS, area not 000/666/9xx, group not 00, serial not 0000
# (SSA, "Social Security Number Randomization").
_SSN = LazyPattern(r"(?!000|666|9)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w\-]|\.\d)", re.ASCII)
# Full-width digits and signs, as typed in Japanese text, mapped one-to-one to ASCII.
_FULLWIDTH = str.maketrans("０１２３４５６７８９－‐−ー（）＋　", "0123456789----()+ ")
_HAS_FULLWIDTH_DIGIT = LazyPattern("[０-９]")


_GROUP_SPLIT = LazyPattern(r"[ .\-()]+")
_WORDISH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_NOT_BEFORE_INTL = _WORDISH | frozenset(")]+")
_NOT_BEFORE_NUM = _WORDISH | frozenset("-.+/")
_NOT_BEFORE_CARD = _WORDISH | frozenset("-.")


def _free(text: str, start: int, banned: frozenset[str]) -> bool:
    """The match is not glued to a word or number on its left (checked outside the regex)."""
    return start == 0 or text[start - 1] not in banned


# Every numeric PII pattern lies inside a run of digits and separators; one cheap scan finds
# those runs and the precise patterns only look inside them.
_NUMERIC = LazyPattern(r"\d[\d \-.()]{3,40}\d")
Windows = list[tuple[int, int]]


def numeric_windows(text: str) -> Windows:
    """Spans of digit runs (with a leading `+`/`(`), each extended by one character so the
    patterns' look-aheads see what follows."""
    out: Windows = []
    n = len(text)
    for m in _NUMERIC.finditer(text):
        a = m.start()
        while a > 0 and text[a - 1] in "+(" and m.start() - a < 2:
            a -= 1
        out.append((a, min(n, m.end() + 1)))
    return out


def _in_windows(rx: Regex, text: str, windows: Windows, min_len: int) -> Iterator[re.Match[str]]:
    for a, b in windows:
        if b - a >= min_len:
            yield from rx.finditer(text, a, b)


def find_phones(text: str, windows: Windows | None = None) -> Iterator[Candidate]:
    windows = numeric_windows(text) if windows is None else windows
    if "+" in text:
        for m in _in_windows(_PHONE_INTL, text, windows, 8):
            if not _free(text, m.start(), _NOT_BEFORE_INTL):
                continue
            n = len(_digits(m.group(0)))
            grouped = any(c in m.group(0) for c in " -.(")
            if len(_GROUP_SPLIT.split(m.group(0))[-1]) < 2:
                continue  # "+35236450.6" is a decimal, not a number with a 1-digit group
            if (8 if grouped else 10) <= n <= 15:
                yield Candidate(m.start(), m.end(), "phone", PII, P_PII)
    for m in _in_windows(_PHONE_JP, text, windows, 10):
        if _free(text, m.start(), _NOT_BEFORE_NUM) and len(_digits(m.group(0))) in (10, 11):
            yield Candidate(m.start(), m.end(), "phone", PII, P_PII)
    for m in _in_windows(_PHONE_US, text, windows, 12):
        if _free(text, m.start(), _NOT_BEFORE_NUM):
            yield Candidate(m.start(), m.end(), "phone", PII, P_PII)
    for m in _in_windows(_PHONE_JP_BARE, text, windows, 10):
        if _free(text, m.start(), _NOT_BEFORE_NUM) and _PHONE_CONTEXT.search(
                text, max(0, m.start() - 16), m.start()):
            yield Candidate(m.start(), m.end(), "phone", PII, P_PII)


def find_ssns(text: str, windows: Windows | None = None) -> Iterator[Candidate]:
    windows = numeric_windows(text) if windows is None else windows
    for m in _in_windows(_SSN, text, windows, 11):
        if _free(text, m.start(), _NOT_BEFORE_NUM):
            yield Candidate(m.start(), m.end(), "ssn", PII, P_PII)


_CARD = LazyPattern(
    r"(?:"
    r"\d{4}([ \-])\d{4}\1\d{4}\1\d{4}(?:\1\d{1,3})?"  # 4-4-4-4(-1..3)
    r"|3[47]\d{2}([ \-])\d{6}\2\d{5}"  # Amex 4-6-5
    r"|3\d{3}([ \-])\d{6}\3\d{4}"  # Diners 4-6-4
    r"|\d{15,16}"  # unseparated: only the common lengths (Amex 15, the rest 16)
    r")(?![\w\-]|\.\d)",
    re.ASCII,
)


def find_cards(text: str, windows: Windows | None = None) -> Iterator[Candidate]:
    windows = numeric_windows(text) if windows is None else windows
    for m in _in_windows(_CARD, text, windows, 13):
        if not _free(text, m.start(), _NOT_BEFORE_CARD):
            continue
        digits = _digits(m.group(0))
        if card_brand(digits) and luhn_valid(digits):
            yield Candidate(m.start(), m.end(), "credit_card", PII, P_CHECKED)


# A bare 12-digit number is a My Number only with a word that says so close before it, or
# alone on its line.
_MY_NUMBER_CONTEXT = LazyPattern(
    r"(?i)(?:マイナンバー|個人番号|my[ _\-]?number|kojin[ _\-]?bango|individual[ _\-]number)"
)
_MY_NUMBER = LazyPattern(r"\d{4}([ \-]?)\d{4}\1\d{4}(?![\w\-]|\.\d|[ \-]\d)", re.ASCII)


def _csv_column_named(text: str, start: int, end: int, headers: dict[int, str]) -> bool:
    """The value at start:end is a whole cell of a CSV/TSV column whose header names it."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start : None if line_end < 0 else line_end]
    sep = "\t" if "\t" in line else "," if "," in line else None
    if sep is None:
        return False
    before = text[line_start:start]
    column = before.count(sep)
    cell = line.split(sep)[column] if column < line.count(sep) + 1 else ""
    if cell.strip().strip("\"'").strip() != text[start:end]:
        return False
    block = text.rfind("\n\n", 0, line_start)
    block = 0 if block < 0 else block + 2
    if block not in headers:
        head_end = text.find("\n", block)
        headers[block] = text[block : None if head_end < 0 else head_end]
    header = headers[block].split(sep)
    return column < len(header) and bool(_MY_NUMBER_CONTEXT.search(header[column]))


def find_my_numbers(text: str, windows: Windows | None = None, words: str | None = None) -> Iterator[Candidate]:
    """`words`: the text as written, when `text` is its digits-normalised copy (same length): the
    context is read there, since the normalisation turns the ー of マイナンバー into a dash."""
    windows = numeric_windows(text) if windows is None else windows
    words = text if words is None else words
    headers: dict[int, str] = {}
    for m in _in_windows(_MY_NUMBER, text, windows, 12):
        if not _free(text, m.start(), _NOT_BEFORE_CARD) or not my_number_valid(_digits(m.group(0))):
            continue
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        alone = not text[line_start : m.start()].strip() and not text[m.end() : None if line_end < 0 else line_end].strip()
        if (m.group(1) or alone
                or _MY_NUMBER_CONTEXT.search(words, max(0, m.start() - 60), m.start())
                or _csv_column_named(words, m.start(), m.end(), headers)):
            yield Candidate(m.start(), m.end(), "my_number", PII, P_CHECKED)


# A Japanese postal code after the word 郵便番号 (with 〒 it is part of an address, below).
_POSTAL_JP = LazyPattern(r"郵便番号[ \t　]*[:：]?[ \t　]*(\d{3}-\d{4}|\d{7})(?![\w\-]|\.\d)")


def find_postal_codes(text: str) -> Iterator[Candidate]:
    if "郵便番号" not in text:
        return
    for m in _POSTAL_JP.finditer(text):
        yield Candidate(m.start(1), m.end(1), "postal_code", PII, P_PII)


_PREFS = (
    "北海道|青森県|岩手県|宮城県|秋田県|山形県|福島県|茨城県|栃木県|群馬県|埼玉県|千葉県|東京都|"
    "神奈川県|新潟県|富山県|石川県|福井県|山梨県|長野県|岐阜県|静岡県|愛知県|三重県|滋賀県|京都府|"
    "大阪府|兵庫県|奈良県|和歌山県|鳥取県|島根県|岡山県|広島県|山口県|徳島県|香川県|愛媛県|高知県|"
    "福岡県|佐賀県|長崎県|熊本県|大分県|宮崎県|鹿児島県|沖縄県"
)
_JP_NUM = r"[0-9０-９一二三四五六七八九十]+"
_JP_STREET = (
    rf"(?:{_PREFS})[^\s\d０-９、。,\"'<>]{{1,20}}?(?:市|区|郡|町|村)[^\s\"'<>、。,]{{0,30}}?"
    rf"{_JP_NUM}(?:(?:丁目|番地|番|号|条|線|[\-－‐ー−の])[東西南北]?{_JP_NUM})*(?:号|番地|番|丁目)?"
    r"(?:[ 　]?[^\s\"'<>、。,]{1,30}?[0-9０-９]{2,4}(?:号室)?)?"
)
_JP_ADDRESS = LazyPattern(
    rf"〒\s?[0-9０-９]{{3}}[\-－‐ー−][0-9０-９]{{4}}(?:[ 　]*{_JP_STREET}|[ 　]*(?:{_PREFS})[^\n\"'<>]{{0,40}})?"
    rf"|{_JP_STREET}"
)
_US_SUFFIX = (
    r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|"
    r"Terrace|Ter|Parkway|Pkwy|Highway|Hwy|Circle|Cir|Square|Sq|Trail|Trl)"
)
_US_ADDRESS = LazyPattern(
    r"\d{1,6}(?: [NSEW]\.?)?(?: [A-Z][A-Za-z0-9'\-]*){1,4} " + _US_SUFFIX + r"\.?(?: (?:N|S|E|W|NE|NW|SE|SW)\.?)?"
    r"(?:,? (?:Apt|Apartment|Suite|Ste|Unit|Fl|Floor|#) ?[A-Za-z0-9\-]+)?"
    r",?(?: [A-Z][A-Za-z]+){1,3},? [A-Z]{2},? \d{5}(?:-\d{4})?\b"
)
_US_ZIP = LazyPattern(r"\d{5}(?:-\d{4})?(?![\w\-])", re.ASCII)
_US_STATE = LazyPattern(r"[A-Z]{2},? $")


def find_addresses(text: str, windows: Windows | None = None) -> Iterator[Candidate]:
    if "〒" in text or any(p in text for p in ("都", "道", "府", "県")):
        for m in _JP_ADDRESS.finditer(text):
            yield Candidate(m.start(), m.end(), "address", PII, P_PII)
    windows = numeric_windows(text) if windows is None else windows
    for a, b in windows:
        z = _US_ZIP.match(text, a, b)
        if z is None or not _free(text, a, _WORDISH) or not _US_STATE.search(text, max(0, a - 5), a):
            continue
        line_start = max(text.rfind("\n", 0, z.start()) + 1, z.start() - 160)
        for m in _US_ADDRESS.finditer(text, line_start, z.end()):
            if m.end() == z.end() and _free(text, m.start(), _WORDISH):
                yield Candidate(m.start(), m.end(), "address", PII, P_PII)
                break


def find_pii(text: str) -> Iterator[Candidate]:
    yield from find_emails(text)
    numeric = text
    if not text.isascii() and _HAS_FULLWIDTH_DIGIT.search(text):
        numeric = text.translate(_FULLWIDTH)  # same length: offsets still index `text`
    windows = numeric_windows(numeric)
    yield from find_phones(numeric, windows)
    yield from find_ssns(numeric, windows)
    yield from find_cards(numeric, windows)
    yield from find_my_numbers(numeric, windows, text)
    yield from find_postal_codes(numeric)
    yield from find_addresses(text, windows if numeric is text else None)
