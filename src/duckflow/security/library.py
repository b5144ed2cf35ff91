"""detect-secrets' plugin regexes, used as a library with their offsets (imported on first use).

detect-secrets scans line by line and reports values without offsets; the sanitizer needs
offsets into the original text, so it takes each regex-based plugin's compiled `denylist`
and runs it over the whole text. Plugins are left out where their pattern is ours to judge
better: the keyword and entropy plugins (context-free, many false positives on source code,
replaced by `assign.py`), public IPs (not secrets) and the private-key marker (the sanitizer
masks the whole PEM block instead).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from duckflow.security.checks import char_classes, jwt_like
from duckflow.security.rules import P_LIBRARY, SECRET, Candidate

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
class LibraryPattern:
    kind: str
    pattern: re.Pattern[str]
    plugin: str


@lru_cache(maxsize=1)
def library_patterns() -> tuple[LibraryPattern, ...]:
    """The regexes of detect-secrets' regex plugins; empty when detect-secrets is missing."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:  # pragma: no cover - it is a core dependency
        return ()
    out: list[LibraryPattern] = []
    classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    for cls in classes:
        kind = _KINDS.get(cls.__name__)
        if kind is None or not issubclass(cls, RegexBasedDetector):
            continue
        patterns: list[re.Pattern[str]] = list(cls.denylist)
        for index, pattern in enumerate(patterns):
            if cls.__name__ == "AWSKeyDetector" and index == 1:
                out.append(LibraryPattern("aws_secret_key", pattern, cls.__name__))
            else:
                out.append(LibraryPattern(kind, pattern, cls.__name__))
    return tuple(out)


def _plausible(kind: str, value: str) -> bool:
    if kind == "jwt":
        return jwt_like(value)
    if kind == "artifactory_token":
        return char_classes(value) >= 3
    if kind in ("url_password",):
        return not (value.startswith(("%", "{", "$", "<")) or set(value) <= {"*", "x", "X"})
    return True


def find_library(text: str) -> Iterator[Candidate]:
    for lp in library_patterns():
        for m in lp.pattern.finditer(text):
            start, end = m.span()
            if m.re.groups:
                spans = [m.span(i) for i in range(1, m.re.groups + 1) if m.span(i)[0] >= 0]
                # the secret is the innermost non-empty group (Npm's regex nests two)
                spans = [s for s in spans if s[1] > s[0]]
                if spans:
                    start, end = min(spans, key=lambda s: s[1] - s[0])
            value = text[start:end].strip()
            if not value:
                continue
            start = text.index(value, start)
            end = start + len(value)
            # detect-secrets' patterns sometimes include the delimiters around the value
            while end > start and text[end - 1] in " \t\"'\n":
                end -= 1
            while start < end and text[start] in " \t\"'=:\n":
                start += 1
            if end > start and _plausible(lp.kind, text[start:end]):
                yield Candidate(start, end, lp.kind, SECRET, P_LIBRARY)
