"""Generators of FAKE secrets and personal data in their real formats (never real credentials).

Each function takes a seeded `random.Random` and returns a value shaped like the real thing:
prefixes and lengths from the vendors' documentation, check digits/sums where the format has
one (Luhn for cards, the My Number check digit, CRC32 checksums in GitHub/npm tokens).
"""

from __future__ import annotations

import base64
import json
import random
import string
import zlib

from duckflow.security.checks import my_number_check_digit

B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
B64URL = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"


def pick(r: random.Random, alphabet: str, n: int) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


def _b62(n: int, width: int) -> str:
    out = ""
    while n:
        n, d = divmod(n, 62)
        out = B62[d] + out
    return out.rjust(width, "0")


def checksummed(r: random.Random, prefix: str, body_len: int = 30) -> str:
    """GitHub/npm style: random base62 body + 6-character base62 CRC32 of it."""
    body = pick(r, B62, body_len)
    return prefix + body + _b62(zlib.crc32(body.encode()) & 0xFFFFFFFF, 6)


def aws_access_key(r: random.Random) -> str:
    return r.choice(["AKIA", "ASIA"]) + pick(r, string.ascii_uppercase + "234567", 16)


def aws_secret_key(r: random.Random) -> str:
    while True:
        v = pick(r, B64, 40)
        if any(c.isdigit() for c in v) and any(c.isupper() for c in v) and any(c.islower() for c in v):
            return v


def gcp_api_key(r: random.Random) -> str:
    return "AIza" + pick(r, B64URL, 35)


def github_token(r: random.Random) -> str:
    kind = r.choice(["ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_"])
    if kind == "github_pat_":
        return "github_pat_" + pick(r, ALNUM, 22) + "_" + pick(r, ALNUM, 59)
    return checksummed(r, kind)


def gitlab_token(r: random.Random) -> str:
    return r.choice(["glpat-", "glpat-", "gldt-", "glrt-"]) + pick(r, B64URL.replace("-", ""), 20)


def slack_token(r: random.Random) -> str:
    t = r.choice(["xoxb", "xoxp", "xoxa", "xoxs"])
    return f"{t}-{r.randint(10**10, 10**12)}-{r.randint(10**10, 10**12)}-{pick(r, ALNUM, 24)}"


def slack_webhook(r: random.Random) -> str:
    return (f"https://hooks.slack.com/services/T{pick(r, string.ascii_uppercase + string.digits, 8)}"
            f"/B{pick(r, string.ascii_uppercase + string.digits, 10)}/{pick(r, ALNUM, 24)}")


def stripe_key(r: random.Random) -> str:
    return r.choice(["sk_live_", "rk_live_", "sk_test_"]) + pick(r, ALNUM, r.choice([24, 99]))


def openai_key(r: random.Random) -> str:
    style = r.choice(["proj", "legacy", "svcacct"])
    if style == "legacy":
        return "sk-" + pick(r, ALNUM, 20) + "T3BlbkFJ" + pick(r, ALNUM, 20)
    return f"sk-{style}-" + pick(r, B64URL, 74) + "T3BlbkFJ" + pick(r, B64URL, 74)


def anthropic_key(r: random.Random) -> str:
    return "sk-ant-api03-" + pick(r, B64URL, 93) + "AA"


def hf_token(r: random.Random) -> str:
    return "hf_" + pick(r, string.ascii_letters, 34)


def google_oauth(r: random.Random) -> str:
    k = r.choice(["secret", "access", "refresh"])
    if k == "secret":
        return "GOCSPX-" + pick(r, B64URL, 28)
    if k == "access":
        return "ya29." + pick(r, B64URL, 120)
    return "1//0" + pick(r, B64URL, 60)


def twilio(r: random.Random) -> str:
    return r.choice(["AC", "SK"]) + pick(r, HEX, 32)


def sendgrid(r: random.Random) -> str:
    return "SG." + pick(r, B64URL, 22) + "." + pick(r, B64URL, 43)


def npm_token(r: random.Random) -> str:
    return checksummed(r, "npm_")


def pypi_token(r: random.Random) -> str:
    body = base64.urlsafe_b64encode(bytes(r.getrandbits(8) for _ in range(110))).decode().rstrip("=")
    return "pypi-AgEIcHlwaS5vcmc" + body


def pem_key(r: random.Random, escaped: bool = False) -> str:
    label = r.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
                      "ENCRYPTED PRIVATE KEY", "DSA PRIVATE KEY", "PGP PRIVATE KEY BLOCK"])
    lines = [pick(r, B64, 64) for _ in range(r.randint(4, 12))] + [pick(r, B64, 20) + "=="]
    nl = "\\n" if escaped else "\n"
    return f"-----BEGIN {label}-----{nl}" + nl.join(lines) + f"{nl}-----END {label}-----"


def _b64url_json(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


def jwt(r: random.Random) -> str:
    header = {"alg": r.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}
    payload = {"sub": str(r.randint(1000, 99999)), "name": "Test User", "iat": r.randint(1_500_000_000, 1_800_000_000)}
    sig = pick(r, B64URL, r.choice([43, 86, 342]))
    return f"{_b64url_json(header)}.{_b64url_json(payload)}.{sig}"


WORDS = ["river", "maple", "Orbit", "Falcon", "quartz", "Sunset", "pepper", "Glacier", "velvet", "Nimbus"]


def password(r: random.Random) -> str:
    style = r.randint(0, 3)
    if style == 0:
        return pick(r, ALNUM + "!#%^*-_", r.randint(10, 24))
    if style == 1:
        return r.choice(WORDS) + str(r.randint(10, 9999)) + r.choice("!#$%&*?")
    if style == 2:
        return "-".join(r.choice(WORDS).lower() for _ in range(3)) + str(r.randint(1, 99))
    return pick(r, ALNUM, r.randint(12, 32))


def hex_secret(r: random.Random, n: int = 32) -> str:
    return pick(r, HEX, n)


def azure_storage_key(r: random.Random) -> str:
    return base64.b64encode(bytes(r.getrandbits(8) for _ in range(64))).decode()


def azure_sas_key(r: random.Random) -> str:
    return base64.b64encode(bytes(r.getrandbits(8) for _ in range(32))).decode()


# --- personal data -----------------------------------------------------------------------

FIRST = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "taro", "hanako"]
LAST = ["smith", "jones", "tanaka", "suzuki", "garcia", "mueller", "kim", "nguyen", "sato", "rossi"]
DOMAINS = ["example.com", "example.org", "mail.example.net", "corp.example.co.jp", "test.example.io"]


def email(r: random.Random) -> str:
    sep = r.choice([".", "_", "", "+"])
    local = r.choice(FIRST) + sep + r.choice(LAST)
    if sep == "+":
        local = r.choice(FIRST) + "+" + r.choice(["news", "work", "git"])
    return f"{local}{r.randint(1, 99) if r.random() < 0.3 else ''}@{r.choice(DOMAINS)}"


def phone(r: random.Random) -> str:
    d = lambda n: "".join(str(r.randint(0, 9)) for _ in range(n))  # noqa: E731
    styles = [
        lambda: f"03-{d(4)}-{d(4)}",
        lambda: f"06-{d(4)}-{d(4)}",
        lambda: f"0{r.choice('789')}0-{d(4)}-{d(4)}",
        lambda: f"0120-{d(3)}-{d(3)}",
        lambda: f"045-{d(3)}-{d(4)}",
        lambda: f"+81 {r.choice(['3', '90', '80', '6'])}-{d(4)}-{d(4)}",
        lambda: f"+81-90-{d(4)}-{d(4)}",
        lambda: f"0{r.choice('789')}0{d(8)}",
        lambda: f"+1 ({r.randint(201, 989)}) {r.randint(200, 999)}-{d(4)}",
        lambda: f"+1-{r.randint(201, 989)}-{r.randint(200, 999)}-{d(4)}",
        lambda: f"({r.randint(201, 989)}) {r.randint(200, 999)}-{d(4)}",
        lambda: f"{r.randint(201, 989)}-{r.randint(200, 999)}-{d(4)}",
        lambda: f"+44 20 {d(4)} {d(4)}",
        lambda: f"+49 30 {d(8)}",
        lambda: f"+33 1 {d(2)} {d(2)} {d(2)} {d(2)}",
        lambda: f"+1{r.randint(201, 989)}{r.randint(200, 999)}{d(4)}",
        lambda: f"+61 2 {d(4)} {d(4)}",
    ]
    return r.choice(styles)()


def _luhn_complete(body: str) -> str:
    for check in "0123456789":
        digits = body + check
        total = 0
        for i, ch in enumerate(reversed(digits)):
            v = int(ch)
            if i % 2 == 1:
                v = v * 2 - 9 if v * 2 > 9 else v * 2
            total += v
        if total % 10 == 0:
            return digits
    raise AssertionError("unreachable")


def card_digits(r: random.Random) -> str:
    brand = r.choice(["visa", "mc", "mc2", "amex", "jcb", "discover"])
    d = lambda n: "".join(str(r.randint(0, 9)) for _ in range(n))  # noqa: E731
    if brand == "visa":
        return _luhn_complete("4" + d(14))
    if brand == "mc":
        return _luhn_complete(str(r.randint(51, 55)) + d(13))
    if brand == "mc2":
        return _luhn_complete(str(r.randint(2221, 2720)) + d(11))
    if brand == "amex":
        return _luhn_complete(r.choice(["34", "37"]) + d(12))
    if brand == "jcb":
        return _luhn_complete(str(r.randint(3528, 3589)) + d(11))
    return _luhn_complete("6011" + d(11))


def card(r: random.Random) -> str:
    digits = card_digits(r)
    sep = r.choice([" ", "-", ""])
    if len(digits) == 15:
        return f"{digits[:4]}{sep}{digits[4:10]}{sep}{digits[10:]}"
    return sep.join(digits[i : i + 4] for i in range(0, 16, 4))


def my_number(r: random.Random) -> str:
    body = "".join(str(r.randint(0, 9)) for _ in range(11))
    digits = body + str(my_number_check_digit(body))
    sep = r.choice([" ", "-", ""])
    return f"{digits[:4]}{sep}{digits[4:8]}{sep}{digits[8:]}"


JP_PLACES = [("東京都", "千代田区丸の内"), ("大阪府", "大阪市北区梅田"), ("神奈川県", "横浜市西区みなとみらい"),
             ("北海道", "札幌市中央区北"), ("福岡県", "福岡市博多区博多駅前"), ("愛知県", "名古屋市中村区名駅")]
US_STREETS = ["Main Street", "Oak Ave", "Maple Avenue", "Sunset Blvd", "Park Road", "Elm St", "Lake Shore Drive"]
US_CITIES = [("Springfield", "IL"), ("Portland", "OR"), ("Austin", "TX"), ("Mountain View", "CA"), ("Boston", "MA")]


def jp_address(r: random.Random) -> str:
    pref, city = r.choice(JP_PLACES)
    zip_code = f"〒{r.randint(100, 999)}-{r.randint(0, 9999):04d}"
    street = f"{pref}{city}{r.randint(1, 9)}-{r.randint(1, 30)}-{r.randint(1, 20)}"
    return r.choice([f"{zip_code} {street}", street, f"{zip_code}　{street}"])


def us_address(r: random.Random) -> str:
    city, state = r.choice(US_CITIES)
    apt = r.choice(["", f", Apt {r.randint(1, 40)}", f" Suite {r.randint(100, 900)}"])
    return f"{r.randint(1, 9999)} {r.choice(US_STREETS)}{apt}, {city}, {state} {r.randint(10000, 99999)}"


def ssn(r: random.Random) -> str:
    area = r.choice([n for n in range(1, 900) if n != 666])
    return f"{area:03d}-{r.randint(1, 99):02d}-{r.randint(1, 9999):04d}"


_FW = str.maketrans("0123456789-", "０１２３４５６７８９－")


def fullwidth(value: str) -> str:
    return value.translate(_FW)
