"""Secrets assigned to secret-sounding names (`password = "..."`, `API_KEY=...`, `"token": "..."`).

Only the value is reported, so `password = ` stays readable. The name decides how strict the
value test is: a password may be short and plain; a token or key must look random. Code that
merely handles secrets (`token = get_token()`, `secret = os.environ["X"]`, `password_field`,
`password: str`) is not a secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from duckflow._lazyre import LazyPattern, Regex
from duckflow.security.checks import char_classes, shannon_entropy
from duckflow.security.rules import P_ASSIGN, SECRET, Candidate, Hay

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$")
_QUOTED = LazyPattern(r"[bBrRuU]{0,2}([\"'`])((?:\\.|(?!\1)[^\\\n]){1,400})\1")
_BARE = LazyPattern(r"(?:[^\s\"'`,;&<>()\[\]{}]|&(?![A-Za-z_][\w.\-]*=)){1,400}")
_WORD_SPLIT = LazyPattern(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_JP_KEY = LazyPattern(
    r"(?:パスワード|暗証番号|パスフレーズ|トークン|シークレット|API\s?キー|アクセスキー|秘密鍵)"
    r"\s*(?:[:：=＝]|は)\s*([!-~]{4,200})"
)

_PASSWORD_WORDS = frozenset({"password", "passwd", "passphrase", "passcode", "pwd", "pass", "pw"})
_KEY_QUALIFIERS = frozenset(
    {
        "api", "access", "secret", "private", "auth", "account", "signing", "encryption",
        "master", "client", "app", "application", "license", "licence", "service", "subscription",
        "shared", "consumer", "session", "storage", "admin", "deploy", "hmac", "jwt", "aes",
        "crypto", "cipher", "webhook", "bot", "x", "openai", "anthropic", "stripe", "sendgrid",
        "mailgun", "twilio", "google", "gcp", "azure", "aws", "github", "slack", "firebase",
        "maps", "algolia", "pusher", "sentry", "datadog", "dd", "newrelic", "cloudflare",
    }
)
_TRAILING_OK = frozenset({"value", "val", "str", "string", "b64", "base64", "hex", "raw", "plain",
                          "plaintext", "literal", "enc", "encrypted", "hash", "digest", "salt"})
# Values that are never a secret, whatever the name.
_PLACEHOLDERS = frozenset(
    {
        "none", "null", "nil", "undefined", "true", "false", "empty", "default", "required",
        "optional", "string", "str", "bytes", "int", "bool", "any", "text", "secretstr",
        "password", "passwd", "redacted", "masked", "hidden", "self", "cls", "is", "not",
        "the", "a", "an", "and", "or", "if", "else", "for", "in",
    }
)
_ENV_PLACEHOLDERS = frozenset({"none", "null", "nil", "undefined", "true", "false", "empty"})
# For tokens and keys also words that only name the thing (a password may well be "secret").
_TOKEN_PLACEHOLDERS = _PLACEHOLDERS | {"secret", "token", "apikey", "api_key", "key", "example",
                                       "sample", "dummy", "test", "todo", "tbd"}
_TEMPLATE = LazyPattern(r"^(?:\$\{?[\w.\-]+\}?|%\(?\w*\)?[sdr]|\{\{?[^{}]*\}?\}|<[^<>]*>|\*{3,}|[xX]{4,}|\.{3,}|_+)$")
_EXPRESSION = LazyPattern(
    r"^(?:[A-Za-z_][\w]*\.)+[A-Za-z_]\w*$"  # attribute access: settings.SECRET_KEY
    r"|^(?:os|env|process|config|settings|self|cls|request|args|opts|options|kwargs)\b"
)


# Names of algorithms and authentication methods: a value made only of these (and numbers) names
# a method — `"password", "scram-sha-256"` lists PostgreSQL auth methods — it is no secret.
_ALGORITHM_WORDS = frozenset({
    "scram", "sha", "sha1", "sha2", "sha3", "md5", "md4", "aes", "gcm", "cbc", "ctr", "ecb", "rsa",
    "dsa", "ecdsa", "ed25519", "ed448", "hmac", "utf", "tls", "ssl", "bcrypt", "scrypt", "argon2",
    "argon2id", "argon2i", "pbkdf2", "crypt", "trust", "peer", "ident", "ldap", "radius", "cert",
    "gss", "sspi", "pam", "bsd", "reject", "plain", "digest", "basic", "bearer", "ntlm", "kerberos",
    "oauth", "oauth2", "oidc", "saml", "totp", "hotp", "chacha20", "poly1305", "x509", "pkcs",
    "pkcs1", "pkcs8", "pkcs12", "des", "3des", "blowfish", "whirlpool", "blake2b", "blake2s",
    "blake3", "murmur3", "xxhash", "crc32", "md5crypt", "sha256crypt", "sha512crypt", "pss",
    "oaep",
})


def _names_a_method(value: str) -> bool:
    parts = [p for p in re.split(r"[-_.+/ ]", value.lower()) if p]
    if len(parts) == 1 and not any(ch.isdigit() for ch in parts[0]):
        return False  # one plain word ("trust") may well be a (weak) password
    return bool(parts) and any(p in _ALGORITHM_WORDS for p in parts) and all(
        p in _ALGORITHM_WORDS or p.isdigit() for p in parts)


def _words(name: str) -> list[str]:
    name = name.strip("$.-_")
    return [w.lower() for w in _WORD_SPLIT.findall(name) if not w.isdigit()]


def classify_name(name: str) -> str | None:
    """The kind of secret a name suggests (`password`, `token`, `api_key`, …) or None."""
    words = _words(name)
    while words and words[-1] in _TRAILING_OK and len(words) > 1:
        words.pop()
    if not words:
        return None
    last = words[-1]
    prev = words[-2] if len(words) > 1 else ""
    if last in _PASSWORD_WORDS or last.endswith(("password", "passwd", "passphrase")):
        return "password"
    if last in ("secret", "secrets") or last.endswith("secret"):
        return "secret"
    if last in ("token", "tokens") or last.endswith("token"):
        return "token"
    if last in ("credential", "credentials", "creds", "cred"):
        return "credential"
    if last in ("apikey", "accesskey", "secretkey", "privatekey", "authkey", "masterkey", "signingkey"):
        return "private_key" if last == "privatekey" else "api_key"
    if last in ("key", "keys"):
        if prev == "secret":
            return "secret"
        if prev == "private":
            return "private_key"
        if prev in _KEY_QUALIFIERS:
            return "api_key"
        return "key"  # bare `key = ...`: only strong random values count
    return None


_WORDY = LazyPattern(r"_*[A-Za-z]+(?:[_\-.][A-Za-z]+)*_*[.,;:!?]?")  # identifiers, words, Types
# parts of names: "types-pywin32", "admin_api_keys", "openai:gpt-4o-mini", "claude-3-5-haiku"
_NAME_PARTS = LazyPattern(r"[a-z]{2,}\d{0,3}|[a-z]?\d{1,2}[a-z]?")
_REGEX_HINTS = ("(?", "\\s", "\\d", "\\w", "[^", ".*", ".+", "\\b")
_NAME_WORDS = ("password", "passwd", "secret", "token", "apikey", "api_key", "credential")


def _looks_random(value: str, *, min_len: int, min_entropy: float) -> bool:
    """A token or key, not a name, a word, a path, a URL, a type or a regular expression."""
    if len(value) < min_len or any(ch.isspace() for ch in value):
        return False
    if _WORDY.fullmatch(value):
        return False  # an identifier, a word or a CamelCase type name: no digits at all
    parts = re.split(r"[-_.:/]", value)
    if len(parts) > 1 and all(_NAME_PARTS.fullmatch(p) for p in parts if p):
        return False  # lower-case words joined by - _ . : / (package, model and attribute names)
    if "://" in value or value.startswith(("urn:", "$")) or "()" in value:
        return False
    if value.startswith(("/", "./", "~/")) and value.count("/") > 1 and "=" not in value:
        return False  # a path
    if any(h in value for h in _REGEX_HINTS) or "[" in value and "]" in value:
        return False  # a regular expression
    if char_classes(value) < 2 and not re.fullmatch(r"[0-9a-f]{16,}", value):
        return False
    if len(set(value)) <= 4:
        return False  # xxxxxxxx, 00000000-0000: placeholders
    return shannon_entropy(value) >= min_entropy


_IDENTIFIER = LazyPattern(r"[A-Za-z_][A-Za-z_]*")
_IDENTIFIER_DIGITS = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*")
_PROSE_WORDS = frozenset({"enter", "your", "please", "the", "is", "for", "password", "a", "an", "my", "not",
                          "no", "this", "that", "some", "secret", "here", "new", "old", "same"})


def _passphrase(v: str) -> bool:
    """A quoted multi-word password ("correct horse battery staple"), not a prompt or prose."""
    words = v.split()
    return (
        2 <= len(words) <= 8
        and len(v) <= 80
        and not v.rstrip().endswith((":", "?", ".", "!"))
        and not any(w.lower().strip(",") in _PROSE_WORDS for w in words)
    )


def value_is_secret(
    kind: str, value: str, *, quoted: bool, env_style: bool, end_of_line: bool, sep: str = "=",
    weak: bool = False, code: bool = True,
) -> bool:
    """Decide whether `value`, assigned to a name of `kind`, is a secret rather than code.

    Unquoted values are code unless the line reads like configuration: `KEY=value` in an
    env file, `key: value` in YAML. An unquoted word after ` = ` is a variable, after `: `
    in code a type. `weak` marks weaker evidence (two string literals side by side): then
    the value must hold a digit.
    """
    v = value.strip()
    words = _PLACEHOLDERS if kind == "password" else _TOKEN_PLACEHOLDERS
    if kind == "password" and env_style:
        words = _ENV_PLACEHOLDERS  # DB_PASSWORD=password in an .env file is a (weak) password
    if not v or v.lower() in words or _TEMPLATE.match(v) or _names_a_method(v):
        return False
    if "{" in v and "}" in v or "%s" in v or "%(" in v:
        return False  # a format string or template
    if weak and not any(ch.isdigit() for ch in v):
        return False
    lowered = v.lower()
    if not env_style and any(w in lowered for w in _NAME_WORDS) and _IDENTIFIER_DIGITS.fullmatch(v):
        return False  # "challengePassword", "refresh_token": a name, not a value
    if not quoted and sep in (":", "is"):
        v = v.rstrip(".,;:!?")  # the end of a sentence, not of the value
        if not v:
            return False
    config_like = env_style or sep in (":", "is")
    if not quoted and (_EXPRESSION.match(v) or v.endswith((":", ","))):
        return False
    if not quoted and v[0] == "$":
        return False  # a shell variable, or a price
    if not quoted and not (kind == "password" and config_like) and v[0] in "-+*/=!?|\\#":
        return False
    if any(h in v for h in _REGEX_HINTS):
        return False  # a regular expression
    if kind == "password":
        if quoted and " " in v.strip() and _passphrase(v):
            return True
        if len(v) < 3 or len(v) > 200 or any(ch.isspace() for ch in v):
            return False
        if quoted or env_style:
            return True
        if _IDENTIFIER.fullmatch(v):
            if sep == "is":  # prose: "the password is hunter" is too vague, "is xpMSALjHEQ" is not
                return len(v) >= 8 and any(c.isupper() for c in v[1:]) and any(c.islower() for c in v)
            return sep == ":" and end_of_line and v[0].islower() and len(v) >= 6
        if sep == "=" and code and _IDENTIFIER_DIGITS.fullmatch(v):
            return False  # f(password=pw2): a variable
        return not v.isdigit() or len(v) >= 4
    if kind == "key":
        if re.fullmatch(r"[0-9a-fA-F]{32,}", v):
            return True  # 128+ bits of hex: a key, whatever its entropy estimate says
        return _looks_random(v, min_len=24, min_entropy=4.0)
    if v.isdigit():
        return False
    if not quoted and not env_style:
        if sep == "=" and code and _IDENTIFIER_DIGITS.fullmatch(v):
            return False  # a variable in code
        if sep in (":", "is") and (v[0].isupper() and _IDENTIFIER_DIGITS.fullmatch(v) or not any(c.isdigit() for c in v)):
            return False  # a type annotation, or prose
    return _looks_random(v, min_len=8, min_entropy=2.5)


def find_assignments(text: str, lowered: str, hay: Hay | None = None) -> Iterator[Candidate]:
    if len(lowered) != len(text):  # must be offset-aligned with `text`
        lowered = text.encode("ascii", "replace").lower().decode("ascii")
    hay = hay or Hay(text, lowered)
    n = len(text)
    for m in hay.key_matches():
        start = m.start()
        while start > 0 and text[start - 1] in _NAME_CHARS:
            start -= 1
        if start > 1 and text[start - 1] == " " and text[start - 2].isalpha():
            w = start - 1
            while w > 0 and text[w - 1].isalpha():
                w -= 1
            if text[w : start - 1].lower() in _KEY_QUALIFIERS:
                start = w  # "api key = ...", "access token: ..."
        name = text[start : m.end(1)]
        sep = m.group(2).strip()
        kind = classify_name(name)
        if kind is None:
            continue
        pos = m.end()
        q = _QUOTED.match(text, pos)
        if q is not None:
            vs, ve, quoted = q.start(2), q.end(2), True
        else:
            b = _BARE.match(text, pos)
            if b is None or (b.end() < n and text[b.end()] in "([."):
                continue  # nothing, or a call / subscript / attribute: code
            vs, ve, quoted = b.start(), b.end(), False
        value = text[vs:ve]
        line_start = text.rfind("\n", 0, start) + 1
        # KEY=value at the start of a line: .env, .properties, INI (Python code spaces its `=`)
        tight = not any(ch.isspace() for ch in m.group(0)[len(m.group(1)) :])
        lead = text[line_start:start]
        env_style = sep == "=" and (
            (name.isupper() or name.replace("_", "").isupper()) and lead.strip() in ("", "export", "set")
            or tight and lead in ("", "export ", "set ")  # unindented key=value (.properties)
        )
        if start > 0 and text[start - 1] in "?&;" and sep == "=":
            env_style = True  # a query string or a connection string: key=value;key=value
        eol = ve >= n or text[ve] in "\r\n" or text[ve:ve + 2] in (" #", "  ")
        # code: `x = y` (spaced) or a keyword argument `f(a, password=pw)`; not logfmt `k=v k2=v2`
        j = start - 1
        while j >= 0 and text[j] in " \t\r\n":
            j -= 1
        prev = text[j] if j >= 0 else ""
        code = sep == "=" and (not tight or prev in ("(", ","))
        if value_is_secret(kind, value, quoted=quoted, env_style=env_style, end_of_line=eol, sep=sep, code=code):
            out_kind = kind if kind != "key" else "api_key"
            if "aws" in name.lower() and len(value) == 40 and kind in ("secret", "api_key", "key"):
                out_kind = "aws_secret_key"
            yield Candidate(vs, ve, out_kind, SECRET, P_ASSIGN)
    yield from _pairs(text, hay)
    if any(w in text for w in ("パス", "暗証", "トークン", "シークレット", "キー", "秘密鍵")):
        for jm in _JP_KEY.finditer(text):
            value = jm.group(1)
            if value_is_secret("password", value, quoted=True, env_style=False, end_of_line=True):
                yield Candidate(jm.start(1), jm.end(1), "password", SECRET, P_ASSIGN)


# A secret-sounding name and its value as a pair of string literals or an XML element:
# define('DB_PASSWORD', 'x'); headers.set("X-Api-Key", "x"); <add key="ApiKey" value="x"/>;
# <password>x</password>.
_PAIR = LazyPattern(
    r"""(["'])([\w.\-]{0,40}(?:pass|pwd|secret|token|key|cred)[\w.\-]{0,40})\1[ \t]*,[ \t]*"""
    r"""(?:value[ \t]*=[ \t]*)?[bru]?(["'])([^"'\n]{3,300})\3"""
)
_XML_VALUE = LazyPattern(
    r"""key\s*=\s*(["'])([\w.\-]{0,40}(?:pass|pwd|secret|token|key|cred)[\w.\-]{0,40})\1\s+value\s*=\s*(["'])([^"'\n]{3,300})\3"""
)
_XML_ELEMENT = LazyPattern(r"<([\w:.\-]{0,40}(?:pass|pwd|secret|token|key|cred)[\w.\-]{0,40})>([^<>\s]{3,300})</\1>")


def _pairs(text: str, hay: Hay) -> Iterator[Candidate]:
    lowered = hay.lowered
    if not (hay.has("'") or hay.has('"')):
        rxs: tuple[Regex, ...] = ()
    else:
        rxs = (_PAIR, _XML_VALUE) if hay.has(",") else (_XML_VALUE,)
    for rx in rxs:
        for m in rx.finditer(lowered):
            kind = classify_name(text[m.start(2) : m.end(2)])
            value = text[m.start(4) : m.end(4)]
            weak = rx is _PAIR
            if kind and value_is_secret(kind, value, quoted=True, env_style=False, end_of_line=True, weak=weak):
                yield Candidate(m.start(4), m.end(4), "api_key" if kind == "key" else kind, SECRET, P_ASSIGN)
    if hay.has("</"):
        for m in _XML_ELEMENT.finditer(lowered):
            kind = classify_name(text[m.start(1) : m.end(1)])
            value = text[m.start(2) : m.end(2)]
            if kind and value_is_secret(kind, value, quoted=True, env_style=False, end_of_line=True):
                yield Candidate(m.start(2), m.end(2), "api_key" if kind == "key" else kind, SECRET, P_ASSIGN)
