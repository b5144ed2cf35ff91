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

from duckflow._lazyre import LazyPattern, Regex
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


# Found in the lower-cased text: a secret word inside a name, then an assignment operator.
KEY_SEP = LazyPattern(
    r"((?:pass|pwd|secret|token|key|cred|auth)[a-z0-9_\-]*)[\"'`]?\]?[ \t]*"
    r"(:=|=>|=(?![=>~])|:(?![:/\\])|[ \t]is[ \t]+(?!not\b))[ \t]*",
    re.ASCII,
)


_LONG_VALUE = LazyPattern(r"[\"']?[A-Za-z0-9_\-]{24}")


class Hay:
    """The text, its offset-aligned ASCII-lower-cased copy, and which needles occur in them.

    Several rules share needles; each `in` scan of a large text costs about as much as a
    regex scan, so every needle is looked for once per text.
    """

    __slots__ = ("text", "lowered", "_seen", "_keys", "_key_lines")

    def __init__(self, text: str, lowered: str) -> None:
        self.text = text
        self.lowered = lowered
        self._seen: dict[tuple[str, bool], bool] = {}
        self._keys: list[re.Match[str]] | None = None
        self._key_lines: list[tuple[int, int]] | None = None

    def key_matches(self) -> list[re.Match[str]]:
        """Matches of KEY_SEP in the lower-cased text (secret-sounding name + operator)."""
        if self._keys is None:
            self._keys = list(KEY_SEP.finditer(self.lowered))
        return self._keys

    def key_lines(self) -> list[tuple[int, int]]:
        """Lines where a KEY_SEP match is followed by a long value (24+ token characters),
        as (start, end) offsets: where detect-secrets' keyword-style plugins can match."""
        if self._key_lines is None:
            out: list[tuple[int, int]] = []
            text = self.text
            for m in self.key_matches():
                if out and m.start() < out[-1][1]:
                    continue
                if not _LONG_VALUE.match(text, m.end()):
                    continue
                a = text.rfind("\n", 0, m.start()) + 1
                b = text.find("\n", m.end())
                out.append((a, len(text) if b < 0 else b))
            self._key_lines = out
        return self._key_lines

    def has(self, needle: str, lower: bool = False) -> bool:
        key = (needle, lower)
        found = self._seen.get(key)
        if found is None:
            found = needle in (self.lowered if lower else self.text)
            self._seen[key] = found
        return found

    def any(self, needles: tuple[str, ...], lower: bool = False) -> bool:
        """Whether one of `needles` occurs: `has` for each in turn, inlined (the rules ask this
        ~70 times per text, so a call and a generator each were most of a short text's scan)."""
        seen = self._seen
        hay = self.lowered if lower else self.text
        for needle in needles:
            key = (needle, lower)
            found = seen.get(key)
            if found is None:
                found = needle in hay
                seen[key] = found
            if found:
                return True
        return False


@dataclass(frozen=True)
class RegexRule:
    """A compiled pattern; `group` selects the secret part; `needles` gate it cheaply."""

    kind: str
    pattern: Regex
    priority: int = P_FORMAT
    category: str = SECRET
    group: int = 0
    needles: tuple[str, ...] = ()
    lower_needles: bool = False
    validate: Callable[[str], bool] | None = field(default=None)
    # characters that may not touch the match on its left (checked here, not in the regex:
    # a leading look-behind would stop the regex engine's fast literal/charset scan)
    not_after: frozenset[str] = frozenset()
    # made only of [A-Za-z0-9_-] for its first 16+ characters: found through token runs
    run_anchored: bool = False
    # the pattern's own literal start: while the pattern is not compiled yet, a text without it
    # cannot match, so it is not compiled for that text (once compiled, its prefix scan is as fast)
    prefix: str = ""

    def find(self, hay: Hay) -> Iterator[Candidate]:
        if self.needles and not hay.any(self.needles, self.lower_needles):
            return
        pattern = self.pattern
        if self.prefix and isinstance(pattern, LazyPattern) and not pattern.is_compiled and not hay.has(self.prefix):
            return
        text = hay.text
        for m in self.pattern.finditer(text):
            if self.not_after and m.start() > 0 and text[m.start() - 1] in self.not_after:
                continue
            start, end = m.span(self.group)
            if start < 0 or end <= start:
                continue
            if self.validate is not None and not self.validate(m.group(self.group)):
                continue
            yield Candidate(start, end, self.kind, self.category, self.priority)


def _r(pattern: str, flags: int = 0) -> Regex:
    return LazyPattern(pattern, flags | re.ASCII)


def _jwt_ok(token: str) -> bool:
    """A JOSE header that decodes to JSON, or (sloppy fixtures) a real-looking signature."""
    return jwt_like(token) or len(token.rsplit(".", 1)[-1]) >= 16


def _bearer_ok(value: str) -> bool:
    """A token after "Bearer", not the next word of a sentence ("bearer authentication.")."""
    has_digit = any(ch.isdigit() for ch in value)
    return _random_enough(value) and (has_digit or len(value) >= 20 and char_classes(value) >= 3)


def _random_enough(value: str) -> bool:
    return char_classes(value) >= 2 and not value.isalpha()


_PLACEHOLDER_PW = LazyPattern(r"^(?:%\(?\w*\)?s|\{\w*\}|\$\{?\w+\}?|<[^>]*>|\*+|x+|\.+)$", re.I)


def inside_string_literal(text: str, pos: int) -> bool:
    """Whether `pos` sits inside a quoted string on its line (an odd number of quotes before it)."""
    line = text[text.rfind("\n", 0, pos) + 1 : pos]
    return any((line.count(q) - line.count("\\" + q)) % 2 == 1 for q in ('"', "'", "`"))


_DOC_PASSWORDS = frozenset({"pass", "password", "passwd", "pwd", "secret", "pw"})


def _url_password_ok(value: str, *, in_code: bool = True) -> bool:
    """Not a template; inside a quoted string in code also not a documentation example
    (`"postgres://user:password@host"`), which is masked in .env files, logs and chat."""
    if in_code and value.lower() in _DOC_PASSWORDS:
        return False
    return not _PLACEHOLDER_PW.match(value) and "%s" not in value and "{" not in value


# Boundaries: a token must not be glued to more token characters on either side.
_E = r"(?![A-Za-z0-9_\-])"
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _t(kind: str, pattern: str, needles: tuple[str, ...], priority: int = P_FORMAT,
       validate: Callable[[str], bool] | None = None) -> RegexRule:
    """A token rule: literal-first pattern, bounded by non-token characters on both sides.

    A needle that is the pattern's own literal start is dropped: the regex engine's prefix
    scan is as fast as `in`, so checking both would scan the text twice.
    """
    prefix = ""
    if len(needles) == 1 and pattern.startswith(re.escape(needles[0])):
        prefix, needles = needles[0], ()
    anchored = not any(c in pattern for c in ("\\.", "/", "\\$", "+", "=", "%"))
    return RegexRule(kind, _r(pattern + _E), priority, needles=needles, validate=validate,
                     not_after=_TOKEN_CHARS, run_anchored=anchored, prefix=prefix)

PEM_BLOCK = _r(
    r"-{4,5} ?BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)? ?-{4,5}"
    r"(?:.{0,20000}?-{4,5} ?END \1PRIVATE KEY(?: BLOCK)? ?-{4,5}"
    r"|(?:\\[nr]|\s)+[A-Za-z0-9+/=]{40,}(?:\\[nr]|[\sA-Za-z0-9+/=:,\-.])*)",
    re.S,
)

_PEM_BODY = LazyPattern(r"[A-Za-z0-9+/=]{24,}")
_PEM_MARKERS = LazyPattern(r"-{4,5} ?(?:BEGIN|END) [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)? ?-{4,5}")
_PEM_BODY_CHARS = LazyPattern(r"(?:\\[nr]|[\sA-Za-z0-9+/=:,\-.])+")


def _pem_has_body(block: str) -> bool:
    """A key block (even a short or elided one), not BEGIN/END markers as constants in code."""
    body = _PEM_MARKERS.sub("", block)
    if _PEM_BODY.search(body):
        return True
    has_end = len(_PEM_MARKERS.findall(block)) >= 2
    return has_end and bool(body.strip()) and _PEM_BODY_CHARS.fullmatch(body) is not None


SECRET_RULES: tuple[RegexRule, ...] = (
    RegexRule("private_key", PEM_BLOCK, P_BLOCK, needles=("PRIVATE KEY",), validate=_pem_has_body),
    RegexRule(
        "private_key",
        _r(r"PuTTY-User-Key-File-\d: [^\n]*\n(?:[^\n]*\n){0,4}?Private-Lines: \d+\n(?:[A-Za-z0-9+/=]+\n?)+"),
        P_BLOCK,
        needles=("PuTTY-User-Key-File",),
    ),
    _t("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", ("AGE-SECRET-KEY",)),
    RegexRule(
        "aws_access_key",
        _r(r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA|PKA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])"),
        not_after=frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
    ),
    _t("gcp_api_key", r"AIza[0-9A-Za-z_\-]{35}", ("AIza",)),
    _t("google_oauth_secret", r"GOCSPX-[0-9A-Za-z_\-]{28}", ("GOCSPX-",)),
    _t("google_oauth_token", r"ya29\.[0-9A-Za-z_\-]{20,}", ("ya29.",)),
    _t("google_oauth_token", r"1//0[0-9A-Za-z_\-]{30,}", ("1//0",)),
    RegexRule(
        "google_oauth_client_id",
        _r(r"\d{6,}-[0-9a-z]{32}\.apps\.googleusercontent\.com\b"),
        needles=(".apps.googleusercontent.com",),
    ),
    _t("github_token", r"gh[pousr]_[A-Za-z0-9]{36,255}", ()),
    _t("github_token", r"github_pat_[A-Za-z0-9_]{50,255}", ("github_pat_",)),
    _t(
        "gitlab_token",
        r"gl(?:pat|dt|ft|soat|rt|ptt|cbt|imt|oas|agent|ffct)-[A-Za-z0-9_\-]{20,1024}",
        (),
    ),
    _t("gitlab_token", r"GR1348941[A-Za-z0-9_\-]{20,50}", ("GR1348941",)),
    _t("slack_token", r"xox[abposre]-(?:[0-9]+-)*[A-Za-z0-9\-]{10,}", ("xox",)),
    _t("slack_token", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", ("xapp-",)),
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
    _t("stripe_key", r"[spr]k_(?:live|test)_[0-9A-Za-z]{16,247}", ("k_live_", "k_test_")),
    _t("stripe_key", r"whsec_[0-9A-Za-z]{24,}", ("whsec_",)),
    _t("anthropic_key", r"sk-ant-[A-Za-z0-9]{2,12}-[A-Za-z0-9_\-]{20,}", ("sk-ant-",), P_FORMAT + 2),
    _t("openai_key", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}", ("sk-",), P_FORMAT + 1),
    _t("openai_key", r"sk-[A-Za-z0-9]{32,}", ("sk-",), validate=_random_enough),
    _t("huggingface_token", r"hf_[A-Za-z0-9]{30,40}", ("hf_",), validate=_random_enough),
    _t("huggingface_token", r"api_org_[A-Za-z0-9]{30,40}", ("api_org_",), validate=_random_enough),
    _t("twilio_key", r"AC[0-9a-f]{32}", ("AC",)),
    _t("twilio_key", r"SK[0-9a-f]{32}", ("SK",)),
    _t("sendgrid_key", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}", ("SG.",)),
    _t("npm_token", r"npm_[A-Za-z0-9]{36}", ("npm_",)),
    RegexRule("npm_token", _r(r"_authToken(?:\s*=\s*|\s+)([^\s\"']{8,})"), group=1, needles=("_authToken",),
              validate=lambda v: "(" not in v and "\\" not in v),
    RegexRule("pypi_token", _r(r"pypi-AgE[A-Za-z0-9_\-]{32,}"), needles=("pypi-AgE",), not_after=_TOKEN_CHARS),
    _t("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", ()),
    _t("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}", ("_v1_",)),
    _t("databricks_token", r"dapi[a-f0-9]{32}(?:-\d)?", ("dapi",)),
    _t("groq_key", r"gsk_[A-Za-z0-9]{48,}", ("gsk_",)),
    _t("xai_key", r"xai-[A-Za-z0-9]{60,}", ("xai-",)),
    _t("replicate_token", r"r8_[A-Za-z0-9]{37}", ("r8_",)),
    _t("notion_token", r"secret_[A-Za-z0-9]{43}", ("secret_",), validate=_random_enough),
    _t("notion_token", r"ntn_[A-Za-z0-9]{40,}", ("ntn_",)),
    _t("linear_key", r"lin_api_[A-Za-z0-9]{40}", ("lin_api_",)),
    _t("postman_key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", ("PMAK-",)),
    _t("atlassian_token", r"ATATT3[A-Za-z0-9_\-=]{100,}", ("ATATT3",)),
    _t("vault_token", r"hv[sbr]\.[A-Za-z0-9_\-]{24,}", ()),
    _t("doppler_token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}", ("dp.",)),
    _t("mapbox_token", r"[ps]k\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}", ("k.eyJ",), P_FORMAT + 1),
    _t("facebook_token", r"EAA[A-Za-z0-9]{100,}", ("EAA",)),
    _t("alibaba_key", r"LTAI[A-Za-z0-9]{12,20}", ("LTAI",), validate=_random_enough),
    _t("mailgun_key", r"key-[0-9a-zA-Z]{32}", ("key-",), validate=_random_enough),
    _t("square_token", r"sq0atp-[0-9A-Za-z_\-]{22,}", ("sq0atp-",)),
    _t("square_token", r"sq0csp-[0-9A-Za-z_\-]{40,}", ("sq0csp-",)),
    _t("square_token", r"EAAA[A-Za-z0-9_\-]{56,76}", ("EAAA",), validate=_random_enough),  # access tokens
    _t("heroku_key", r"HRKU-[A-Za-z0-9_\-]{30,}", ("HRKU-",)),
    _t("dropbox_token", r"sl\.[A-Za-z0-9_\-]{130,}", ("sl.",)),
    _t("newrelic_key", r"NRA[KI]-[A-Z0-9]{27}", ("NRA",)),
    _t("sentry_token", r"sntr[ys]s_[A-Za-z0-9+/=_]{40,}", ("sntr",)),
    _t("terraform_token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}", (".atlasv1.",)),
    _t("supabase_token", r"sbp_[a-f0-9]{40}", ("sbp_",)),
    _t("figma_token", r"figd_[A-Za-z0-9_\-]{40,}", ("figd_",)),
    _t("grafana_token", r"gl(?:sa|c)_[A-Za-z0-9_+/=]{32,}", ()),
    _t("pulumi_token", r"pul-[a-f0-9]{40}", ("pul-",)),
    _t("rubygems_key", r"rubygems_[a-f0-9]{48}", ("rubygems_",)),
    _t("dockerhub_token", r"dckr_pat_[A-Za-z0-9_\-]{27,}", ("dckr_pat_",)),
    _t("sonarqube_token", r"sq[pua]_[a-f0-9]{40}", ()),
    _t("perplexity_key", r"pplx-[A-Za-z0-9]{40,}", ("pplx-",)),
    _t("airtable_token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", ("pat",)),
    _t("hubspot_token", r"pat-(?:na|eu)\d-[a-f0-9\-]{36}", ("pat-",)),
    _t("razorpay_key", r"rzp_(?:live|test)_[A-Za-z0-9]{14,}", ("rzp_",)),
    _t("flutterwave_key", r"FLWSECK(?:_TEST)?-[a-h0-9]{32}-X", ("FLWSECK",)),
    _t("planetscale_token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-=.]{32,}", ("pscale_",)),
    _t("contentful_token", r"CFPAT-[A-Za-z0-9_\-]{43}", ("CFPAT-",)),
    _t("dynatrace_token", r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}", ("dt0c01.",)),
    _t("shippo_token", r"shippo_(?:live|test)_[a-f0-9]{40}", ("shippo_",)),
    _t("easypost_key", r"EZ[AT]K[A-Za-z0-9]{54}", ()),
    _t("prefect_key", r"pnu_[A-Za-z0-9]{36}", ("pnu_",)),
    _t("readme_key", r"rdme_[a-z0-9]{70}", ("rdme_",)),
    _t("fly_token", r"fo1_[A-Za-z0-9_\-]{43}", ("fo1_",)),
    _t("oauth_token", r"AQ[A-Za-z0-9_\-]{150,}", ("AQ",), validate=_random_enough),
    _t("twitter_bearer", r"A{22}[A-Za-z0-9%]{80,}", ("AAAAAAAAAAAAAAAAAAAAA",)),
    _t("tencent_key", r"AKID[A-Za-z0-9]{32}", ("AKID",)),
    _t("braintree_token", r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}", ("access_token$",)),
    _t("resend_key", r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}", ("re_",)),
    _t("api_key", r"sk-[a-f0-9]{32}", ("sk-",)),
    RegexRule(
        "azure_client_secret",
        _r(r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
        needles=("Q~",),
        not_after=frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~.-"),
    ),
    RegexRule(
        "azure_storage_key",
        _r(r"(?i)(?:AccountKey|SharedAccessKey|SharedSecretValue)\s*=\s*([A-Za-z0-9+/]{20,}={0,2})"),
        group=1,
        needles=("accountkey", "sharedaccesskey", "sharedsecretvalue"),
        lower_needles=True,
    ),
    RegexRule("azure_sas_token", _r(r"sig=([A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})"), group=1, needles=("sig=",),
              not_after=_TOKEN_CHARS),
    _t("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*", ("eyJ",), validate=_jwt_ok),
    RegexRule(
        "telegram_bot_token",
        _r(r"\d{8,10}:AA[0-9A-Za-z_\-]{30,40}" + _E),
        needles=(":AA",),
        not_after=frozenset("0123456789:"),
    ),
    RegexRule(
        "bearer_token",
        _r(r"(?i)bearer\s+([A-Za-z0-9\-._~+/]{8,}=*)"),
        P_CONTEXT,
        group=1,
        needles=("bearer",),
        lower_needles=True,
        validate=_bearer_ok,
        not_after=_TOKEN_CHARS,
    ),
    RegexRule(
        "basic_auth",
        _r(r"(?i)authorization\s*[:=]\s*[\"']?basic\s+([A-Za-z0-9+/]{8,}={0,2})"),
        P_CONTEXT,
        group=1,
        needles=("authorization",),
        lower_needles=True,
    ),
    RegexRule(
        "auth_header",
        _r(r"(?i)authorization\s*[:=]\s*[\"']?(?:token|apikey|api-key|key|sso-key|digest)\s+([^\s\"',]{12,})"),
        P_CONTEXT,
        group=1,
        needles=("authorization",),
        lower_needles=True,
    ),
)

# Token rules whose match starts a run of 16+ token characters are tried only where such a
# run starts, all at once (one anchored alternation), instead of each scanning the text.
RUN_RULES: tuple[RegexRule, ...] = tuple(
    sorted((r for r in SECRET_RULES if r.run_anchored), key=lambda r: -r.priority)
)
SCAN_RULES: tuple[RegexRule, ...] = tuple(r for r in SECRET_RULES if not r.run_anchored)
_RUN = LazyPattern(r"[A-Za-z0-9_\-]{16,}")
_RUN_ALTERNATION = LazyPattern(
    "|".join(f"(?P<r{i}>{r.pattern.pattern})" for i, r in enumerate(RUN_RULES)), re.ASCII
)


def literal_head(pattern: str) -> str:
    """The literal text every match of `pattern` starts with ('' when it starts with a class,
    a group or an escape; a last literal that a quantifier may repeat zero times is left out)."""
    head = ""
    for ch in pattern:
        if ch in ".^$*+?{}[]\\|()":
            if ch in "*+?{" and head:
                head = head[:-1]
            return head
        head += ch
    return head


# The few token runs of a short text are tried rule by rule, each rule only where the run starts
# with the rule's literal head (so most rules are never compiled); the alternation (all rules in
# one pattern, slower to compile than the few a short text needs) is compiled once the process
# has met many runs, and then serves every text. Both find the same first rule that matches.
_HEADS: tuple[str, ...] = tuple(literal_head(r.pattern.pattern) for r in RUN_RULES)
_BY_FIRST: dict[str, tuple[tuple[RegexRule, str], ...]] = {
    c: tuple((r, h) for r, h in zip(RUN_RULES, _HEADS, strict=True) if not h or h[0] == c)
    for c in {h[0] for h in _HEADS if h}
}
_HEADLESS: tuple[tuple[RegexRule, str], ...] = tuple((r, h) for r, h in zip(RUN_RULES, _HEADS, strict=True) if not h)
_RULE_BY_RULE_RUNS = 2000  # runs met before the alternation pays for its compile
_RULE_BY_RULE_CHARS = 50_000  # a longer text goes to the alternation at once
_runs_met = 0


def _accept(rule: RegexRule, m: re.Match[str] | None) -> bool:
    return m is not None and len(set(m.group(0))) > 8 and (rule.validate is None or rule.validate(m.group(0)))


def run_tokens_rule_by_rule(text: str) -> Iterator[Candidate]:
    global _runs_met
    for run in _RUN.finditer(text):
        _runs_met += 1
        a = run.start()
        for rule, head in _BY_FIRST.get(text[a], _HEADLESS):
            if head and not text.startswith(head, a):
                continue
            mm = rule.pattern.match(text, a)
            if mm is not None and _accept(rule, mm):
                yield Candidate(a, mm.end(), rule.kind, rule.category, rule.priority)
                break


def run_tokens_alternation(text: str) -> Iterator[Candidate]:
    for run in _RUN.finditer(text):
        a = run.start()
        m = _RUN_ALTERNATION.match(text, a)
        if m is None:
            continue
        first = next(int(k[1:]) for k, v in m.groupdict().items() if v is not None)
        for rule in RUN_RULES[first:]:  # the first alternative, or a later one if it fails validation
            mm = m if rule is RUN_RULES[first] else rule.pattern.match(text, a)
            if mm is not None and _accept(rule, mm):
                yield Candidate(a, mm.end(), rule.kind, rule.category, rule.priority)
                break


def find_run_tokens(text: str) -> Iterator[Candidate]:
    if _RUN_ALTERNATION.is_compiled or _runs_met >= _RULE_BY_RULE_RUNS or len(text) > _RULE_BY_RULE_CHARS:
        return run_tokens_alternation(text)
    return run_tokens_rule_by_rule(text)
