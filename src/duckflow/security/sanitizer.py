"""The sanitizer: masks secrets and personal data with typed, numbered, restorable placeholders.

    masked = Sanitizer().mask("key AKIAIOSFODNN7EXAMPLE mail bob@example.com")
    masked.text      # 'key [SECRET:aws_access_key#1] mail [PII:email#1]'
    masked.findings  # [Finding(kind, start, end, placeholder), ...]  offsets into the input
    Sanitizer.restore(masked.text, masked.mapping) == original

The mapping (placeholder -> original value) never leaves the machine. Within one Sanitizer
the same value always gets the same placeholder and numbers count on per kind, so the
mappings of several calls can be merged; passing one `mapping` to several `mask()` calls
scopes the numbering to it instead (one conversation, say).
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from duckflow._lazyre import LazyPattern
from duckflow.security.assign import find_assignments
from duckflow.security.context import (
    aws_secret_near_key_ids,
    find_cli_passwords,
    find_cookies,
    find_mailchimp,
    find_url_passwords,
)
from duckflow.security.pii import find_pii
from duckflow.security.rules import SCAN_RULES, SECRET, Candidate, Hay, find_run_tokens

PLACEHOLDER_RE = LazyPattern(r"\[(SECRET|PII):([a-z0-9_]+)#(\d+)\]")
# Placeholder-like text already in the input is escaped so it can never collide with a real
# placeholder: `[PII:email#1]` is sent as `[PII\:email#1]`, `[PII\:email#1]` as
# `[PII\\:email#1]`, and so on; restore() removes one backslash again.
_TOKEN_RE = LazyPattern(r"\[(SECRET|PII)(\\*):([a-z0-9_]+)#(\d+)\]")
_PARTIAL_RE = LazyPattern(
    r"\[(?:S(?:E(?:C(?:R(?:E(?:T(?P<a>\\*(?::[a-z0-9_]*(?:#\d*)?)?)?)?)?)?)?)?"
    r"|P(?:I(?:I(?P<b>\\*(?::[a-z0-9_]*(?:#\d*)?)?)?)?)?)?"
)

_REGISTRY_LIMIT = 100_000
Detector = Callable[[str, str], Iterable[Candidate]]


@dataclass(frozen=True, slots=True)
class Finding:
    """One masked span: `kind` (e.g. `aws_access_key`), offsets into the original text."""

    kind: str
    start: int
    end: int
    placeholder: str

    @property
    def category(self) -> str:
        """`SECRET` or `PII`."""
        return self.placeholder[1:].split(":", 1)[0]

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "start": self.start, "end": self.end, "placeholder": self.placeholder}


@dataclass
class Masked:
    """The masked text, what was found, and the local mapping placeholder -> original."""

    text: str
    findings: list[Finding] = field(default_factory=list)
    mapping: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {"text": self.text, "findings": [f.to_dict() for f in self.findings]}


def _library(text: str, lowered: str, hay: Hay | None = None) -> Iterable[Candidate]:
    from duckflow.security.library import find_library

    return find_library(text, lowered, hay)


def _formats(text: str, lowered: str, hay: Hay | None = None) -> Iterator[Candidate]:
    hay = hay or Hay(text, lowered)
    aws_ids: list[Candidate] = []
    for rule in SCAN_RULES:
        if rule.needles and not hay.any(rule.needles, rule.lower_needles):
            continue  # what find() checks first, without starting its generator
        for cand in rule.find(hay):
            if cand.kind == "aws_access_key":
                aws_ids.append(cand)
            yield cand
    yield from find_run_tokens(text)
    yield from aws_secret_near_key_ids(text, aws_ids, hay)
    yield from find_mailchimp(text)
    yield from find_url_passwords(text)
    yield from find_cli_passwords(text, hay)
    yield from find_cookies(text, hay)


def _pii(text: str, lowered: str, hay: Hay | None = None) -> Iterable[Candidate]:
    return find_pii(text)


def _assignments(text: str, lowered: str, hay: Hay | None = None) -> Iterable[Candidate]:
    return find_assignments(text, lowered, hay)


DEFAULT_DETECTORS: tuple[Detector, ...] = (_formats, _library, _assignments, _pii)
_HAY_AWARE = frozenset(DEFAULT_DETECTORS)


def ascii_lower(text: str) -> str:
    """`text` with ASCII letters lower-cased and every other character kept in place.

    Same length as `text`, so offsets found in it hold for `text` (`str.lower()` can change
    the length of some non-ASCII strings and is slower on them).
    """
    if text.isascii():
        return text.lower()
    return text.encode("ascii", "replace").lower().decode("ascii")


def resolve_overlaps(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Keep non-overlapping candidates: higher priority first, then the longer span, then earlier."""
    ordered = sorted(candidates, key=lambda c: (-c.priority, -(c.end - c.start), c.start))
    starts: list[int] = []
    kept: list[Candidate] = []
    for cand in ordered:
        i = bisect.bisect_right(starts, cand.start)
        if i > 0 and kept[i - 1].end > cand.start:
            continue
        if i < len(kept) and kept[i].start < cand.end:
            continue
        starts.insert(i, cand.start)
        kept.insert(i, cand)
    return kept


class Sanitizer:
    """Finds secrets and PII and replaces them with placeholders like `[SECRET:jwt#1]`.

    `detectors` are callables `(text, lowered_text) -> Iterable[Candidate]`; the defaults
    cover vendor key formats, detect-secrets' plugins, secret assignments and PII.
    `allow` lists exact values never to mask (a project's known-public ids, say).
    """

    def __init__(
        self,
        detectors: Iterable[Detector] | None = None,
        *,
        allow: Iterable[str] = (),
        pii: bool = True,
    ) -> None:
        chosen = tuple(DEFAULT_DETECTORS if detectors is None else detectors)
        if not pii:
            chosen = tuple(d for d in chosen if d is not _pii)
        self.detectors = chosen
        self.allow = frozenset(allow)
        self._lock = threading.Lock()
        self._by_value: dict[str, str] = {}
        self._counters: dict[str, int] = {}

    def scan(self, text: str) -> list[Candidate]:
        """The resolved findings (without placeholders), in text order."""
        if not text:
            return []
        lowered = ascii_lower(text)
        found: list[Candidate] = []
        hay = Hay(text, lowered)
        for detector in self.detectors:
            if detector in _HAY_AWARE:
                found.extend(detector(text, lowered, hay))  # type: ignore[call-arg]
            else:
                found.extend(detector(text, lowered))
        if self.allow:
            found = [c for c in found if text[c.start : c.end] not in self.allow]
        if "[SECRET:" in text or "[PII:" in text:
            # never mask inside a placeholder written earlier
            spans = [m.span() for m in _TOKEN_RE.finditer(text)]
            starts = [a for a, _ in spans]

            def clear(c: Candidate) -> bool:
                i = bisect.bisect_left(starts, c.end)
                return i == 0 or spans[i - 1][1] <= c.start

            found = [c for c in found if clear(c)]
        return resolve_overlaps(found)

    def mask(self, text: str, mapping: dict[str, str] | None = None) -> Masked:
        """Mask `text` (see `_mask`); placeholder-like text already in it is escaped."""
        masked = self._mask(text, mapping)
        if "[SECRET" in masked.text or "[PII" in masked.text:
            masked.text = _escape_literals(text, masked)
        return masked

    def _mask(self, text: str, mapping: dict[str, str] | None = None) -> Masked:
        """Mask `text`; `Masked.mapping` holds the placeholders used in it.

        Without `mapping`, placeholders come from this Sanitizer's own registry: within one
        instance the same value always gets the same placeholder and a placeholder never
        stands for two values, so mappings of separate calls can be merged safely. With a
        `mapping` (placeholder -> value, e.g. one per conversation), numbering follows that
        mapping instead and it is extended in place.
        """
        candidates = self.scan(text)
        if mapping is None:
            with self._lock:
                if len(self._by_value) > _REGISTRY_LIMIT:
                    self._by_value.clear()  # counters keep counting: no placeholder is reused
                return self._apply(text, candidates, self._by_value, self._counters, {})
        by_value = {value: ph for ph, value in mapping.items()}
        counters: dict[str, int] = {}
        for ph in mapping:
            m = PLACEHOLDER_RE.fullmatch(ph)
            if m:
                counters[m.group(2)] = max(counters.get(m.group(2), 0), int(m.group(3)))
        return self._apply(text, candidates, by_value, counters, mapping)

    @staticmethod
    def _apply(
        text: str,
        candidates: list[Candidate],
        by_value: dict[str, str],
        counters: dict[str, int],
        mapping: dict[str, str],
    ) -> Masked:
        parts: list[str] = []
        findings: list[Finding] = []
        pos = 0
        for cand in candidates:
            value = text[cand.start : cand.end]
            placeholder = by_value.get(value)
            if placeholder is None:
                counters[cand.kind] = counters.get(cand.kind, 0) + 1
                category = "SECRET" if cand.category == SECRET else "PII"
                placeholder = f"[{category}:{cand.kind}#{counters[cand.kind]}]"
                by_value[value] = placeholder
            mapping[placeholder] = value
            parts.append(text[pos : cand.start])
            parts.append(placeholder)
            pos = cand.end
            findings.append(Finding(cand.kind, cand.start, cand.end, placeholder))
        parts.append(text[pos:])
        return Masked("".join(parts), findings, mapping)

    @staticmethod
    def restore(text: str, mapping: dict[str, str]) -> str:
        """Put the original values back for placeholders in `mapping` (others stay as they are)
        and un-escape placeholder-like text that was in the original."""
        return restore_text(text, mapping)


def _escape_literals(original: str, masked: Masked) -> str:
    """The masked text rebuilt with every placeholder-like token of the original escaped."""
    if not _TOKEN_RE.search(original):
        return masked.text
    parts: list[str] = []
    pos = 0

    def literal(chunk: str) -> str:
        return _TOKEN_RE.sub(lambda m: f"[{m.group(1)}{m.group(2)}\\:{m.group(3)}#{m.group(4)}]",
                             chunk)

    for f in masked.findings:
        parts.append(literal(original[pos : f.start]))
        parts.append(f.placeholder)
        pos = f.end
    parts.append(literal(original[pos:]))
    return "".join(parts)


def restore_text(text: str, mapping: dict[str, str]) -> str:
    """restore() as a function: originals for known placeholders, one escape level removed."""
    if "[SECRET" not in text and "[PII" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        if m.group(2):
            return f"[{m.group(1)}{m.group(2)[1:]}:{m.group(3)}#{m.group(4)}]"
        return mapping.get(m.group(0), m.group(0))

    return _TOKEN_RE.sub(one, text)


def partial_placeholder_start(text: str) -> int:
    """Where a possibly unfinished placeholder starts at the end of `text` (len(text) if none),
    so a stream can hold that tail back until it is complete."""
    i = text.rfind("[")
    if i < 0 or len(text) - i > 120 or not _PARTIAL_RE.fullmatch(text, i):
        return len(text)
    return i


@lru_cache(maxsize=1)
def default_sanitizer() -> Sanitizer:
    """The shared default Sanitizer (one placeholder registry for the whole process)."""
    return Sanitizer()


def mask_text(text: str) -> str:
    """Masked text with the default sanitizer; the mapping is discarded."""
    return default_sanitizer().mask(text).text
