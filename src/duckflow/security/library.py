"""detect-secrets' plugin regexes, used as a library with their offsets (imported on first use).

detect-secrets scans line by line and reports values without offsets; the sanitizer needs
offsets into the original text, so it takes each regex-based plugin's compiled `denylist`
and runs it over the whole text. Plugins are left out where their pattern is ours to judge
better: the keyword and entropy plugins (context-free, many false positives on source code,
replaced by `assign.py`), public IPs (not secrets) and the private-key marker (the sanitizer
masks the whole PEM block instead).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from duckflow._lazyre import LazyPattern, Regex
from duckflow.security.checks import char_classes, jwt_like
from duckflow.security.rules import (
    P_LIBRARY,
    SECRET,
    Candidate,
    Hay,
    _url_password_ok,
    inside_string_literal,
)

_KINDS: dict[str, str] = {
    "ArtifactoryDetector": "artifactory_token",
    "AWSKeyDetector": "aws_access_key",
    "AzureStorageKeyDetector": "azure_storage_key",
    "BasicAuthDetector": "url_password",
    "CloudantDetector": "cloudant_key",
    "DiscordBotTokenDetector": "discord_token",
    "GitHubTokenDetector": "github_token",
    "GitLabTokenDetector": "gitlab_token",
    "IbmCloudIamDetector": "ibm_cloud_key",
    "IbmCosHmacDetector": "ibm_cos_key",
    "JwtTokenDetector": "jwt",
    "MailchimpDetector": "mailchimp_key",
    "NpmDetector": "npm_token",
    "OpenAIDetector": "openai_key",
    "PypiTokenDetector": "pypi_token",
    "SendGridDetector": "sendgrid_key",
    "SlackDetector": "slack_token",
    "SoftlayerDetector": "softlayer_key",
    "SquareOAuthDetector": "square_secret",
    "StripeDetector": "stripe_key",
    "TelegramBotTokenDetector": "telegram_bot_token",
    "TwilioKeyDetector": "twilio_key",
}


@dataclass(frozen=True)
class Gate:
    """A cheap test before a plugin regex runs: literal needles, and/or a fast regex whose
    hits select the lines the (slower) plugin regex is run on. `keyword_lines`: run only
    on lines where a secret-sounding name is assigned (shared with the assignment scan)."""

    needles: tuple[str, ...] = ()
    lower: bool = False
    lines: Regex | None = None
    keyword_lines: bool = False


# Assignment-style plugins (Cloudant, IBM, SoftLayer) need a keyword and an operator.
_KEYWORD_LINES = Gate(keyword_lines=True)
_GATES: dict[tuple[str, int], Gate] = {
    ("ArtifactoryDetector", 0): Gate(lines=LazyPattern(r"AKC[a-zA-Z0-9]{10}")),
    ("ArtifactoryDetector", 1): Gate(lines=LazyPattern(r"AP[0-9A-F][a-zA-Z0-9]{8}")),
    ("AWSKeyDetector", 0): Gate(lines=LazyPattern(r"A(?:KIA|SIA|BIA|CCA|3T)[A-Z0-9]{16}")),
    ("AWSKeyDetector", 1): Gate(needles=("aws",), lower=True, lines=LazyPattern("aws")),
    ("AzureStorageKeyDetector", 0): Gate(needles=("AccountKey=",)),
    ("BasicAuthDetector", 0): Gate(needles=("://",)),
    ("CloudantDetector", 0): _KEYWORD_LINES,
    ("CloudantDetector", 1): _KEYWORD_LINES,
    ("CloudantDetector", 2): Gate(needles=("cloudant.com",), lower=True),
    ("CloudantDetector", 3): Gate(needles=("cloudant.com",), lower=True),
    ("DiscordBotTokenDetector", 0): Gate(lines=LazyPattern(r"\.[a-zA-Z0-9_\-]{6}\.[a-zA-Z0-9_\-]{27}")),
    ("GitHubTokenDetector", 0): Gate(lines=LazyPattern(r"gh[pousr]_")),
    ("GitLabTokenDetector", 0): Gate(lines=LazyPattern(r"gl(?:pat|dt|ft|soat|rt)-")),
    ("GitLabTokenDetector", 1): Gate(needles=("GR1348941",)),
    ("GitLabTokenDetector", 2): Gate(needles=("glcbt-",)),
    ("GitLabTokenDetector", 3): Gate(needles=("glimt-",)),
    ("GitLabTokenDetector", 4): Gate(needles=("glptt-",)),
    ("GitLabTokenDetector", 5): Gate(needles=("glagent-",)),
    ("GitLabTokenDetector", 6): Gate(needles=("gloas-",)),
    ("IbmCloudIamDetector", 0): _KEYWORD_LINES,
    ("IbmCosHmacDetector", 0): Gate(needles=("secret",), lower=True, keyword_lines=True),
    ("JwtTokenDetector", 0): Gate(needles=("eyJ",)),
    ("MailchimpDetector", 0): Gate(lines=LazyPattern(r"-us[0-9]")),
    ("NpmDetector", 0): Gate(needles=("_authToken",)),
    ("OpenAIDetector", 0): Gate(needles=("T3BlbkFJ",)),
    ("PypiTokenDetector", 0): Gate(needles=("pypi-AgE",)),
    ("PypiTokenDetector", 1): Gate(needles=("pypi-AgE",)),
    ("SendGridDetector", 0): Gate(needles=("SG.",)),
    ("SlackDetector", 0): Gate(lines=LazyPattern(r"xox[abposr]-")),
    ("SlackDetector", 1): Gate(needles=("hooks.slack.com",)),
    ("SoftlayerDetector", 0): _KEYWORD_LINES,
    ("SoftlayerDetector", 1): Gate(needles=("api.softlayer.com",)),
    ("SquareOAuthDetector", 0): Gate(needles=("sq0csp-",)),
    ("StripeDetector", 0): Gate(needles=("k_live_",)),
    ("TelegramBotTokenDetector", 0): Gate(lines=LazyPattern(r":AA[0-9A-Za-z_\-]{33}")),
}


@dataclass(frozen=True)
class LibraryPattern:
    kind: str
    pattern: Regex
    plugin: str
    gate: Gate | None = None


DATA = Path(__file__).parent / "data" / "detect_secrets_patterns.json"


def lift_patterns() -> dict[str, Any]:
    """The regex plugins' patterns read from the installed detect-secrets (the generator).

    Importing detect-secrets' plugins pulls in `requests` (its verification code, which we
    never call): ~0.1 s and 8 MiB on every start. So the patterns are lifted once, into
    `data/detect_secrets_patterns.json`, by `python -m duckflow.security.library`, and a test
    checks that the file still equals what the installed detect-secrets has.
    """
    from importlib.metadata import version

    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    plugins: list[dict[str, Any]] = []
    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    for cls in sorted(classes, key=lambda c: c.__name__):
        if cls.__name__ not in _KINDS or not issubclass(cls, RegexBasedDetector):
            continue
        plugins.append({"plugin": cls.__name__,
                        "patterns": [{"pattern": p.pattern, "flags": int(p.flags)} for p in cls.denylist]})
    return {"source": f"detect-secrets {version('detect-secrets')} (Yelp, Apache-2.0), "
                      "detect_secrets/plugins/*.py: each RegexBasedDetector's denylist",
            "generated_by": "python -m duckflow.security.library", "plugins": plugins}


@lru_cache(maxsize=1)
def library_patterns() -> tuple[LibraryPattern, ...]:
    """The regexes of detect-secrets' regex plugins, from the lifted data file."""
    data = json.loads(DATA.read_text(encoding="utf-8"))
    out: list[LibraryPattern] = []
    for plugin in data["plugins"]:
        name = plugin["plugin"]
        for index, item in enumerate(plugin["patterns"]):
            pattern = LazyPattern(item["pattern"], item["flags"] & ~re.UNICODE)
            kind = "aws_secret_key" if name == "AWSKeyDetector" and index == 1 else _KINDS[name]
            out.append(LibraryPattern(kind, pattern, name, _GATES.get((name, index))))
    return tuple(out)


def _plausible(kind: str, value: str) -> bool:
    if len(set(value)) <= 6 or any(h in value for h in ("(?", "\\s", ".*", ".+", "[^")):
        return False  # ACxxxxxxxx placeholders, or a regular expression in source code
    if kind == "url_password":
        return _url_password_ok(value, in_code=False)
    if kind == "jwt":
        return jwt_like(value)
    if kind == "artifactory_token":
        return char_classes(value) >= 3
    if kind in ("url_password",):
        return not (value.startswith(("%", "{", "$", "<")) or set(value) <= {"*", "x", "X"})
    return True


def _line_windows(text: str, hay: str, gate: Regex) -> list[tuple[int, int]]:
    windows: list[tuple[int, int]] = []
    for m in gate.finditer(hay):
        a = text.rfind("\n", 0, m.start()) + 1
        if windows and a < windows[-1][1]:
            continue
        b = text.find("\n", m.end())
        windows.append((a, len(text) if b < 0 else b))
    return windows


def find_library(text: str, lowered: str | None = None, hay: Hay | None = None) -> Iterator[Candidate]:
    if lowered is None or len(lowered) != len(text):  # must be offset-aligned with `text`
        lowered = text.encode("ascii", "replace").lower().decode("ascii")
    hay = hay or Hay(text, lowered)
    window_cache: dict[tuple[int, bool], list[tuple[int, int]]] = {}
    whole = [(0, len(text))]
    for lp in library_patterns():
        gate = lp.gate
        windows = whole
        if gate is not None:
            if gate.needles and not hay.any(gate.needles, gate.lower):
                continue
            if gate.keyword_lines:
                windows = hay.key_lines()
            elif gate.lines is not None:
                key = (id(gate.lines), gate.lower)
                if key not in window_cache:
                    window_cache[key] = _line_windows(text, lowered if gate.lower else text, gate.lines)
                windows = window_cache[key]
        for a, b in windows:
            yield from _matches(lp, text, a, b)


def _matches(lp: LibraryPattern, text: str, a: int, b: int) -> Iterator[Candidate]:
    for m in lp.pattern.finditer(text, a, b):
        start, end = m.span()
        if m.re.groups:
            spans = [m.span(i) for i in range(1, m.re.groups + 1)]
            # the secret is the innermost non-empty group (Npm's regex nests two)
            spans = [sp for sp in spans if sp[1] > sp[0] >= 0]
            if spans:
                start, end = min(spans, key=lambda sp: sp[1] - sp[0])
        # detect-secrets' patterns sometimes include the delimiters around the value
        while end > start and text[end - 1] in " \t\"'\n":
            end -= 1
        while start < end and text[start] in " \t\"'=:\n":
            start += 1
        if lp.kind == "url_password" and inside_string_literal(text, start):
            scheme = text.rfind("://", 0, start)
            user = text[scheme + 3 : start - 1] if scheme >= 0 else ""
            if text[start:end] == user or not _url_password_ok(text[start:end], in_code=True):
                continue  # a documentation example in code (user:password@, app:app@)
        if end > start and _plausible(lp.kind, text[start:end]):
            yield Candidate(start, end, lp.kind, SECRET, P_LIBRARY)


if __name__ == "__main__":  # regenerate the lifted patterns from the installed detect-secrets
    DATA.parent.mkdir(exist_ok=True)
    DATA.write_text(json.dumps(lift_patterns(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {DATA}")
