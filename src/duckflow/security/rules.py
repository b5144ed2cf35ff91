"""Regex rules for the key and token formats people paste most, with cheap literal pre-filters.

Formats are taken from each vendor's public documentation of its key prefixes and lengths
(AWS IAM key ids, GitHub token prefixes, GitLab token prefixes, Slack token types, Stripe
key prefixes, OpenAI/Anthropic/Hugging Face key prefixes, Google API keys and OAuth tokens,
Twilio SIDs, SendGrid keys, npm and PyPI tokens, PEM/OpenSSH/PGP armour).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from duckflow.security.checks import char_classes, jwt_like

SECRET = "SECRET"
PII = "PII"

# Priorities: a higher one wins an overlap; among equals the longer span wins.
P_BLOCK = 100  # whole private-key blocks
P_FORMAT = 90  # a vendor prefix/format that cannot be mistaken
P_LIBRARY = 80  # detect-secrets plugin regexes
P_CONTEXT = 70  # credentials in URLs and Authorization headers
P_CHECKED = 60  # PII confirmed by a check digit
P_ASSIGN = 50  # high-entropy / password values in assignments
P_PII = 40  # e-mail, phone, address


@dataclass(frozen=True, slots=True)
class Candidate:
    """One possible finding before overlaps are resolved; offsets into the original text."""

    start: int
    end: int
    kind: str
    category: str
    priority: int


@dataclass(frozen=True)
class RegexRule:
    """A compiled pattern; `group` selects the secret part; `needles` gate it cheaply."""

    kind: str
    pattern: re.Pattern[str]
    priority: int = P_FORMAT
    category: str = SECRET
    group: int = 0
    needles: tuple[str, ...] = ()
    lower_needles: bool = False
    validate: Callable[[str], bool] | None = field(default=None)

    def find(self, text: str, lowered: str) -> Iterator[Candidate]:
        if self.needles:
            hay = lowered if self.lower_needles else text
            if not any(n in hay for n in self.needles):
                return
        for m in self.pattern.finditer(text):
            start, end = m.span(self.group)
            if start < 0 or end <= start:
                continue
            if self.validate is not None and not self.validate(m.group(self.group)):
                continue
            yield Candidate(start, end, self.kind, self.category, self.priority)


def _r(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags | re.ASCII)


def _random_enough(value: str) -> bool:
    return char_classes(value) >= 2 and not value.isalpha()


_PLACEHOLDER_PW = re.compile(r"^(?:%\(?\w*\)?s|\{\w*\}|\$\{?\w+\}?|<[^>]*>|\*+|x+|\.+)$", re.I)


def _url_password_ok(value: str) -> bool:
    return not _PLACEHOLDER_PW.match(value) and "%s" not in value and "{" not in value


# Boundaries: a token must not be glued to more token characters on either side.
_B = r"(?<![A-Za-z0-9_\-])"
_E = r"(?![A-Za-z0-9_\-])"

PEM_BLOCK = _r(
    r"-{4,5} ?BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)? ?-{4,5}"
    r"(?:.{0,20000}?-{4,5} ?END \1PRIVATE KEY(?: BLOCK)? ?-{4,5}"
    r"|(?:\\[nr]|[\sA-Za-z0-9+/=:,\-.])*)",
    re.S,
)

SECRET_RULES: tuple[RegexRule, ...] = (
    RegexRule("private_key", PEM_BLOCK, P_BLOCK, needles=("PRIVATE KEY",)),
    RegexRule(
        "private_key",
        _r(r"PuTTY-User-Key-File-\d: [^\n]*\n(?:[^\n]*\n){0,4}?Private-Lines: \d+\n(?:[A-Za-z0-9+/=]+\n?)+"),
        P_BLOCK,
        needles=("PuTTY-User-Key-File",),
    ),
    RegexRule("age_secret_key", _r(r"AGE-SECRET-KEY-1[0-9A-Z]{58}"), needles=("AGE-SECRET-KEY",)),
    RegexRule(
        "aws_access_key",
        _r(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])"),
        needles=("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "APKA", "A3T"),
    ),
    RegexRule("gcp_api_key", _r(_B + r"AIza[0-9A-Za-z_\-]{35}" + _E), needles=("AIza",)),
    RegexRule("google_oauth_secret", _r(_B + r"GOCSPX-[0-9A-Za-z_\-]{28}" + _E), needles=("GOCSPX-",)),
    RegexRule("google_oauth_token", _r(_B + r"ya29\.[0-9A-Za-z_\-]{20,}"), needles=("ya29.",)),
    RegexRule("google_oauth_token", _r(_B + r"1//0[0-9A-Za-z_\-]{30,}"), needles=("1//0",)),
    RegexRule(
        "google_oauth_client_id",
        _r(r"\b\d{6,}-[0-9a-z]{32}\.apps\.googleusercontent\.com\b"),
        needles=(".apps.googleusercontent.com",),
    ),
    RegexRule("github_token", _r(_B + r"gh[pousr]_[A-Za-z0-9]{36,255}" + _E), needles=("gh",)),
    RegexRule("github_token", _r(_B + r"github_pat_[A-Za-z0-9_]{50,255}" + _E), needles=("github_pat_",)),
    RegexRule(
        "gitlab_token",
        _r(_B + r"(?:glpat|gldt|glft|glsoat|glrt|glptt|glcbt|glimt|gloas|glagent|glffct)-[A-Za-z0-9_\-]{20,1024}" + _E),
        needles=("gl",),
    ),
    RegexRule("gitlab_token", _r(_B + r"GR1348941[A-Za-z0-9_\-]{20,50}" + _E), needles=("GR1348941",)),
    RegexRule("slack_token", _r(_B + r"xox[abposre]-(?:[0-9]+-)*[A-Za-z0-9\-]{10,}" + _E), needles=("xox",)),
    RegexRule("slack_token", _r(_B + r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+" + _E), needles=("xapp-",)),
    RegexRule(
        "slack_webhook",
        _r(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}"),
        needles=("hooks.slack.com",),
    ),
    RegexRule(
        "discord_webhook",
        _r(r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]{30,}"),
        needles=("/api/webhooks/",),
    ),
    RegexRule("stripe_key", _r(_B + r"(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,247}" + _E), needles=("_live_", "_test_")),
    RegexRule("stripe_key", _r(_B + r"whsec_[0-9A-Za-z]{24,}" + _E), needles=("whsec_",)),
    RegexRule("anthropic_key", _r(_B + r"sk-ant-[A-Za-z0-9]{2,12}-[A-Za-z0-9_\-]{20,}" + _E), P_FORMAT + 2, needles=("sk-ant-",)),
    RegexRule(
        "openai_key",
        _r(_B + r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}" + _E),
        P_FORMAT + 1,
        needles=("sk-",),
    ),
    RegexRule(
        "openai_key",
        _r(_B + r"sk-[A-Za-z0-9]{32,}(?:T3BlbkFJ[A-Za-z0-9]{20,})?" + _E),
        needles=("sk-",),
        validate=_random_enough,
    ),
    RegexRule("huggingface_token", _r(_B + r"hf_[A-Za-z]{34}" + _E), needles=("hf_",)),
    RegexRule("huggingface_token", _r(_B + r"api_org_[A-Za-z]{34}" + _E), needles=("api_org_",)),
    RegexRule("twilio_key", _r(_B + r"(?:AC|SK)[0-9a-f]{32}" + _E), needles=("AC", "SK")),
    RegexRule("sendgrid_key", _r(_B + r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E), needles=("SG.",)),
    RegexRule("npm_token", _r(_B + r"npm_[A-Za-z0-9]{36}" + _E), needles=("npm_",)),
    RegexRule("npm_token", _r(r"_authToken\s*=\s*([^\s\"']{8,})"), group=1, needles=("_authToken",)),
    RegexRule("pypi_token", _r(_B + r"pypi-AgE[A-Za-z0-9_\-]{50,}"), needles=("pypi-AgE",)),
    RegexRule("mailchimp_key", _r(_B + r"[0-9a-f]{32}-us\d{1,2}" + _E), needles=("-us",)),
    RegexRule("shopify_token", _r(_B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _E), needles=("shp",)),
    RegexRule("digitalocean_token", _r(_B + r"do[opr]_v1_[a-f0-9]{64}" + _E), needles=("_v1_",)),
    RegexRule("databricks_token", _r(_B + r"dapi[a-f0-9]{32}(?:-\d)?" + _E), needles=("dapi",)),
    RegexRule("groq_key", _r(_B + r"gsk_[A-Za-z0-9]{48,}" + _E), needles=("gsk_",)),
    RegexRule("xai_key", _r(_B + r"xai-[A-Za-z0-9]{60,}" + _E), needles=("xai-",)),
    RegexRule("replicate_token", _r(_B + r"r8_[A-Za-z0-9]{37}" + _E), needles=("r8_",)),
    RegexRule("notion_token", _r(_B + r"(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,})" + _E), needles=("secret_", "ntn_")),
    RegexRule("linear_key", _r(_B + r"lin_api_[A-Za-z0-9]{40}" + _E), needles=("lin_api_",)),
    RegexRule("postman_key", _r(_B + r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + _E), needles=("PMAK-",)),
    RegexRule("atlassian_token", _r(_B + r"ATATT3[A-Za-z0-9_\-=]{100,}" + _E), needles=("ATATT3",)),
    RegexRule("vault_token", _r(_B + r"hv[sbr]\.[A-Za-z0-9_\-]{24,}" + _E), needles=("hvs.", "hvb.", "hvr.")),
    RegexRule("doppler_token", _r(_B + r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}" + _E), needles=("dp.",)),
    RegexRule("mapbox_token", _r(_B + r"[ps]k\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}" + _E), P_FORMAT + 1, needles=("k.eyJ",)),
    RegexRule("facebook_token", _r(_B + r"EAA[A-Za-z0-9]{100,}" + _E), needles=("EAA",)),
    RegexRule("alibaba_key", _r(_B + r"LTAI[A-Za-z0-9]{12,20}" + _E), needles=("LTAI",), validate=_random_enough),
    RegexRule(
        "azure_client_secret",
        _r(r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
        needles=("Q~",),
    ),
    RegexRule(
        "azure_storage_key",
        _r(r"(?i)(?:AccountKey|SharedAccessKey|SharedSecretValue)\s*=\s*([A-Za-z0-9+/]{20,}={0,2})"),
        group=1,
        needles=("accountkey", "sharedaccesskey", "sharedsecretvalue"),
        lower_needles=True,
    ),
    RegexRule("azure_sas_token", _r(r"[?&]sig=([A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})"), group=1, needles=("sig=",)),
    RegexRule(
        "jwt",
        _r(_B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*" + _E),
        needles=("eyJ",),
        validate=jwt_like,
    ),
    RegexRule(
        "telegram_bot_token",
        _r(r"(?<![\w:])\d{8,10}:AA[0-9A-Za-z_\-]{33}" + _E),
        needles=(":AA",),
    ),
    RegexRule(
        "url_password",
        _r(r"\b[A-Za-z][A-Za-z0-9+.\-]{1,30}://[^\s:/@\"'<>]*:([^\s@/\"'<>]+)@[A-Za-z0-9\[]"),
        P_CONTEXT,
        group=1,
        needles=("://",),
        validate=_url_password_ok,
    ),
    RegexRule(
        "bearer_token",
        _r(r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)"),
        P_CONTEXT,
        group=1,
        needles=("bearer",),
        lower_needles=True,
        validate=_random_enough,
    ),
    RegexRule(
        "basic_auth",
        _r(r"(?i)\bauthorization\s*[:=]\s*[\"']?basic\s+([A-Za-z0-9+/]{8,}={0,2})"),
        P_CONTEXT,
        group=1,
        needles=("authorization",),
        lower_needles=True,
    ),
    RegexRule(
        "auth_header",
        _r(r"(?i)\bauthorization\s*[:=]\s*[\"']?(?:token|apikey|api-key|key|sso-key|digest)\s+([^\s\"',]{12,})"),
        P_CONTEXT,
        group=1,
        needles=("authorization",),
        lower_needles=True,
    ),
)


_NEAR_AWS_SECRET = _r(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def aws_secret_near_key_ids(text: str, key_ids: list[Candidate]) -> Iterator[Candidate]:
    """A 40-character secret access key within a few lines after an access key id (CSV, INI)."""
    for cand in key_ids:
        window_end = min(len(text), cand.end + 400)
        for m in _NEAR_AWS_SECRET.finditer(text, cand.end, window_end):
            value = m.group(0)
            if char_classes(value) >= 3:
                yield Candidate(m.start(), m.end(), "aws_secret_key", SECRET, P_FORMAT)
