"""Writes the labelled positive corpus (positives.jsonl) from seeded generators of FAKE values.

Run `python tests/security/corpus/generate.py` to regenerate; the output is deterministic.
Each line: {"id", "context", "text", "labels": [{"kind", "value"}]} — every labelled value
must be masked; anything else found in the text is counted as an unexpected finding.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fakes as F  # noqa: E402

OUT = Path(__file__).resolve().parent / "positives.jsonl"


class Doc:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.labels: list[dict[str, str]] = []

    def t(self, text: str) -> Doc:
        self.parts.append(text)
        return self

    def v(self, kind: str, value: str) -> Doc:
        self.parts.append(value)
        self.labels.append({"kind": kind, "value": value})
        return self

    @property
    def text(self) -> str:
        return "".join(self.parts)


Gen = Callable[[random.Random], str]
SECRETS: list[tuple[str, str, Gen]] = [
    # (kind, env-style name, generator)
    ("aws_access_key", "AWS_ACCESS_KEY_ID", F.aws_access_key),
    ("aws_secret_key", "AWS_SECRET_ACCESS_KEY", F.aws_secret_key),
    ("gcp_api_key", "GOOGLE_API_KEY", F.gcp_api_key),
    ("github_token", "GITHUB_TOKEN", F.github_token),
    ("gitlab_token", "GITLAB_TOKEN", F.gitlab_token),
    ("slack_token", "SLACK_BOT_TOKEN", F.slack_token),
    ("slack_webhook", "SLACK_WEBHOOK_URL", F.slack_webhook),
    ("stripe_key", "STRIPE_SECRET_KEY", F.stripe_key),
    ("openai_key", "OPENAI_API_KEY", F.openai_key),
    ("anthropic_key", "ANTHROPIC_API_KEY", F.anthropic_key),
    ("huggingface_token", "HF_TOKEN", F.hf_token),
    ("google_oauth", "GOOGLE_CLIENT_SECRET", F.google_oauth),
    ("twilio_key", "TWILIO_ACCOUNT_SID", F.twilio),
    ("sendgrid_key", "SENDGRID_API_KEY", F.sendgrid),
    ("npm_token", "NPM_TOKEN", F.npm_token),
    ("pypi_token", "PYPI_TOKEN", F.pypi_token),
    ("jwt", "SESSION_JWT", F.jwt),
    ("password", "DB_PASSWORD", F.password),
    ("api_key", "API_KEY", F.hex_secret),
    ("secret", "CLIENT_SECRET", lambda r: F.pick(r, F.ALNUM, 32)),
    ("token", "AUTH_TOKEN", lambda r: F.pick(r, F.B64URL, 40)),
]
BENIGN_ENV = ["DEBUG=true", "PORT=8080", "LOG_LEVEL=info", "DATABASE_HOST=db.internal", "NODE_ENV=production",
              "WORKERS=4", "TIMEOUT_SECONDS=30", "FEATURE_FLAGS=search,export", "REGION=ap-northeast-1",
              "CACHE_TTL=600", "TOKEN_EXPIRY_MINUTES=15", "PASSWORD_MIN_LENGTH=12", "SECRET_NAME=prod/db"]
BENIGN_CODE = ["token = get_token()", 'secret = os.environ["APP_SECRET"]', "password_field = form.password",
               "if not password:", "    raise ValueError('password required')", "api_key = settings.API_KEY",
               "key = cache_key(user.id)", "session_token_ttl = 3600", 'color = "#1e90ff"',
               'request_id = "3f2c1a9e-8b7d-4c6e-9f10-2a3b4c5d6e7f"', 'version = "2.14.1"']


def conn_string(r: random.Random, d: Doc) -> None:
    scheme = r.choice(["postgres", "postgresql", "mysql", "mongodb+srv", "redis", "rediss", "amqp", "amqps", "https"])
    user = r.choice(["admin", "app", "svc_user", "deploy", ""] if scheme.startswith("redis") else ["admin", "app", "svc_user"])
    host = r.choice(["db.example.com", "cluster0.ab1cd.mongodb.net", "10.0.3.7", "cache.internal", "mq.example.org"])
    d.t(f"{scheme}://{user}:").v("url_password", F.password(r).replace("@", "x").replace("/", "x").replace(":", "x"))
    d.t(f"@{host}" + r.choice([":5432/app", "/prod?retryWrites=true", ":6379/0", "/", ":3306/shop"]))


def env_file(r: random.Random) -> Doc:
    d = Doc()
    lines = r.sample(BENIGN_ENV, 4)
    for kind, name, gen in r.sample(SECRETS, 6):
        lines.append(f"__SECRET__{kind}|{name}|{SECRETS.index((kind, name, gen))}")
    r.shuffle(lines)
    for line in lines:
        if line.startswith("__SECRET__"):
            kind, name, idx = line[10:].split("|")
            prefix = r.choice(["", "export "])
            quote = r.choice(["", '"', "'"]) if kind != "slack_webhook" else ""
            d.t(f"{prefix}{name}={quote}").v(kind, SECRETS[int(idx)][2](r)).t(f"{quote}\n")
        else:
            d.t(line + "\n")
    d.t("DATABASE_URL=")
    conn_string(r, d)
    d.t("\n")
    return d


def yaml_config(r: random.Random) -> Doc:
    d = Doc()
    d.t("app:\n  name: billing\n  port: 8443\ndatabase:\n  host: db.example.com\n  user: billing\n  password: ")
    d.v("password", F.password(r)).t("\n")
    kind, name, gen = r.choice(SECRETS[:17])
    d.t(f"integrations:\n  {name.lower()}: ").v(kind, gen(r)).t("\n")
    d.t("  webhook_secret: \"").v("secret", F.pick(r, F.ALNUM, 32)).t("\"\n")
    d.t("  client_id: 1234567890-abc.apps.example.com\nsmtp:\n  from: ").v("email", F.email(r)).t("\n")
    d.t("  api_key: ").v("api_key", F.hex_secret(r, 40)).t("\n")
    d.t("cache:\n  url: ")
    conn_string(r, d)
    d.t("\n  ttl: 300\n")
    return d


def json_config(r: random.Random) -> Doc:
    d = Doc()
    if r.random() < 0.4:
        d.t('{\n  "type": "service_account",\n  "project_id": "demo-project-123",\n  "private_key_id": "')
        d.t(F.hex_secret(r, 40)).t('",\n  "private_key": "').v("private_key", F.pem_key(r, escaped=True))
        d.t('\\n",\n  "client_email": ').t('"').v("email", f"svc-{r.randint(1, 99)}@demo-project-123.iam.gserviceaccount.com")
        d.t('",\n  "client_id": "1234567890",\n  "token_uri": "https://oauth2.googleapis.com/token"\n}\n')
        return d
    d.t('{\n  "service": "orders",\n  "retries": 3,\n')
    for kind, _name, gen in r.sample(SECRETS, 4):
        key = {"password": "password", "api_key": "apiKey", "secret": "clientSecret", "token": "accessToken"}.get(
            kind, r.choice(["token", "key", "secret", "credentials"]) if kind not in ("slack_webhook",) else "webhook")
        d.t(f'  "{key}": "').v(kind, gen(r)).t('",\n')
    d.t('  "owner": "').v("email", F.email(r)).t('",\n  "color": "#ff8800"\n}\n')
    return d


def python_code(r: random.Random) -> Doc:
    d = Doc()
    d.t("import os\n\nfrom myapp import client\n\n")
    d.t(r.choice(BENIGN_CODE) + "\n")
    d.t("SECRET_KEY = 'django-insecure-").v("secret", F.pick(r, F.ALNUM + "!@#%^&*(-_=+)", 40)).t("'\n")
    kind, _name, gen = r.choice(SECRETS[:17])
    d.t("client = Client(api_key=\"").v(kind, gen(r)).t("\")\n")
    d.t(r.choice(BENIGN_CODE) + "\n")
    d.t("conn = psycopg.connect(\"")
    conn_string(r, d)
    d.t("\")\n")
    d.t("headers = {\"Authorization\": \"Bearer ").v("bearer_token", F.pick(r, F.B64URL, 40)).t("\"}\n")
    d.t("def login(user, password=None):\n    return client.auth(user, password)\n")
    d.t("login('deploy', password=\"").v("password", F.password(r)).t("\")\n")
    return d


def js_code(r: random.Random) -> Doc:
    d = Doc()
    d.t("const config = {\n  region: 'us-east-1',\n  accessKeyId: '").v("aws_access_key", F.aws_access_key(r))
    d.t("',\n  secretAccessKey: '").v("aws_secret_key", F.aws_secret_key(r)).t("',\n};\n")
    d.t("const stripe = require('stripe')('").v("stripe_key", F.stripe_key(r)).t("');\n")
    d.t("const token = await getToken();\nconst apiKey = process.env.API_KEY;\n")
    d.t("fetch(url, { headers: { Authorization: `Bearer ").v("jwt", F.jwt(r)).t("` } });\n")
    return d


def shell(r: random.Random) -> Doc:
    d = Doc()
    d.t("$ curl -H 'Authorization: Bearer ").v("openai_key", F.openai_key(r)).t("' https://api.example.com/v1/models\n")
    d.t("$ git clone https://x-access-token:").v("github_token", F.github_token(r)).t("@github.com/acme/app.git\n")
    d.t("$ export HF_TOKEN=").v("huggingface_token", F.hf_token(r)).t("\n")
    d.t("$ mysql -u root --password=").v("password", F.password(r)).t(" shop\n")
    d.t("$ docker login -u deploy -p ").v("password", F.password(r)).t(" registry.example.com\n")
    d.t("$ curl -u admin:").v("password", F.pick(r, F.ALNUM, 14)).t(" https://jenkins.example.com/api/json\n")
    return d


def logs(r: random.Random) -> Doc:
    d = Doc()
    ts = f"2025-05-{r.randint(10, 28)}T0{r.randint(0, 9)}:14:33.892Z"
    d.t(f"{ts} INFO request id=9f1c2e user=").v("email", F.email(r)).t(" path=/api/orders status=200 ms=41\n")
    d.t(f"{ts} DEBUG outgoing headers: {{'Authorization': 'Bearer ").v("jwt", F.jwt(r)).t("'}\n")
    d.t(f"{ts} ERROR failed to connect to ")
    conn_string(r, d)
    d.t(": timeout after 30s\n")
    d.t(f"{ts} WARN sms fallback to ").v("phone", F.phone(r)).t(" for order 48213\n")
    kind, name, gen = r.choice(SECRETS[:17])
    d.t(f"{ts} DEBUG env {name}=").v(kind, gen(r)).t("\n")
    d.t(f"{ts} INFO version=3.2.1 commit=9fceb02d0ae598e95dc970b74767f19372d61af8 uuid=6f1e2d3c-4b5a-4c7d-8e9f-0a1b2c3d4e5f\n")
    return d


def chat_en(r: random.Random) -> Doc:
    d = Doc()
    d.t("hey, the deploy is failing. I'm using this key: ")
    kind, _name, gen = r.choice(SECRETS[:17])
    d.v(kind, gen(r)).t(" — can you check?\n")
    d.t("Also my card ").v("credit_card", F.card(r)).t(" was charged twice, call me at ").v("phone", F.phone(r))
    d.t(" or mail ").v("email", F.email(r)).t(".\n")
    d.t("Ship it to ").v("address", F.us_address(r)).t(" please.\n")
    d.t("the admin password is ").v("password", F.password(r)).t("\n")
    return d


def chat_ja(r: random.Random) -> Doc:
    d = Doc()
    d.t("お疲れさまです。本番のパスワード: ").v("password", F.password(r)).t(" です。\n")
    d.t("マイナンバーは ").v("my_number", F.my_number(r)).t(" でお願いします。\n")
    d.t("住所: ").v("address", F.jp_address(r)).t("\n電話番号: ").v("phone", F.phone(r)).t("\n")
    d.t("メール: ").v("email", F.email(r)).t("\n")
    d.t("APIキー: ").v("gcp_api_key", F.gcp_api_key(r)).t(" を設定しました。\n")
    return d


def ini_files(r: random.Random) -> Doc:
    d = Doc()
    d.t("[default]\naws_access_key_id = ").v("aws_access_key", F.aws_access_key(r))
    d.t("\naws_secret_access_key = ").v("aws_secret_key", F.aws_secret_key(r)).t("\nregion = us-west-2\n\n")
    d.t("# ~/.npmrc\n//registry.npmjs.org/:_authToken=").v("npm_token", F.npm_token(r)).t("\n\n")
    d.t("# ~/.pypirc\n[pypi]\nusername = __token__\npassword = ").v("pypi_token", F.pypi_token(r)).t("\n\n")
    d.t("DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey=").v("azure_storage_key", F.azure_storage_key(r))
    d.t(";EndpointSuffix=core.windows.net\n")
    d.t("Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=")
    d.v("azure_storage_key", F.azure_sas_key(r)).t("\n")
    d.t("Server=tcp:acme.database.windows.net,1433;Database=shop;User ID=app;Password=").v("password", F.password(r).replace(";", "x"))
    d.t(";Encrypt=true;\n")
    return d


def compose_k8s(r: random.Random) -> Doc:
    d = Doc()
    d.t("services:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_USER: app\n      POSTGRES_PASSWORD: ")
    d.v("password", F.password(r)).t("\n      - SENDGRID_API_KEY=").v("sendgrid_key", F.sendgrid(r)).t("\n")
    d.t("---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ndata:\n  password: ")
    import base64

    d.v("password", base64.b64encode(F.password(r).encode()).decode()).t("\n  slack-token: ").v("slack_token", F.slack_token(r)).t("\n")
    d.t("  gitlab_token: ").v("gitlab_token", F.gitlab_token(r)).t("\n")
    return d


def records(r: random.Random) -> Doc:
    d = Doc()
    d.t("id,name,email,phone,card,zip\n")
    for i in range(r.randint(2, 5)):
        d.t(f"{1000 + i},{r.choice(F.FIRST).title()} {r.choice(F.LAST).title()},").v("email", F.email(r)).t(",")
        d.v("phone", F.phone(r)).t(",").v("credit_card", F.card(r)).t(f",{r.randint(10000, 99999)}\n")
    d.t("顧客: 山田太郎 個人番号 ").v("my_number", F.my_number(r).replace(" ", "").replace("-", "")).t("\n")
    return d


def pem_file(r: random.Random) -> Doc:
    d = Doc()
    d.t("Here is the deploy key, don't share it:\n\n").v("private_key", F.pem_key(r)).t("\n\nand the public one is in the repo.\n")
    return d


def issue_text(r: random.Random) -> Doc:
    d = Doc()
    d.t("## Bug\nStarting the worker fails with\n```\nsqlalchemy.exc.OperationalError: could not connect to ")
    conn_string(r, d)
    d.t("\n```\nConfig I used (`settings.py`):\n```python\nANTHROPIC_API_KEY = \"").v("anthropic_key", F.anthropic_key(r))
    d.t("\"\nGOOGLE_OAUTH = \"").v("google_oauth", F.google_oauth(r)).t("\"\n")
    d.t("TWILIO = \"").v("twilio_key", F.twilio(r)).t("\"\nTWILIO_AUTH_TOKEN = \"").v("token", F.hex_secret(r, 32)).t("\"\n```\n")
    d.t("Slack alerts go to ").v("slack_webhook", F.slack_webhook(r)).t("\n")
    return d


def misc_formats(r: random.Random) -> Doc:
    d = Doc()
    d.t("<?php\ndefine( 'DB_PASSWORD', '").v("password", F.password(r).replace("'", "x")).t("' );\n")
    d.t("define( 'AUTH_KEY', '").v("api_key", F.pick(r, F.ALNUM + "!#%^*-_", 48)).t("' );\n?>\n")
    d.t('<configuration>\n  <add key="StripeApiKey" value="').v("stripe_key", F.stripe_key(r)).t('" />\n')
    d.t('  <add key="SmtpPassword" value="').v("password", F.password(r).replace('"', "x")).t('" />\n')
    d.t("  <password>").v("password", F.password(r).replace("<", "x").replace(">", "x")).t("</password>\n</configuration>\n")
    d.t("jdbc:postgresql://db.example.com:5432/app?user=app&password=").v("password", F.pick(r, F.ALNUM, 14)).t("&ssl=true\n")
    d.t("spring.datasource.password=").v("password", F.password(r)).t("\n")
    d.t("SSN: ").v("ssn", F.ssn(r)).t(" (applicant)\n")
    d.t("電話：").v("phone", F.fullwidth(F.phone(r).replace("+81 ", "0").replace("+81-", "0"))).t("\n")
    d.t("Toll free: ").v("phone", f"1-800-{r.randint(200, 999)}-{r.randint(1000, 9999)}").t("\n")
    d.t("request to https://api.example.com/v2/items?api_key=").v("api_key", F.hex_secret(r, 32)).t("&page=2\n")
    return d


CONTEXTS: dict[str, Callable[[random.Random], Doc]] = {
    "env": env_file, "yaml": yaml_config, "json": json_config, "python": python_code, "js": js_code,
    "shell": shell, "log": logs, "chat_en": chat_en, "chat_ja": chat_ja, "ini": ini_files,
    "compose_k8s": compose_k8s, "records": records, "pem": pem_file, "issue": issue_text,
    "misc": misc_formats,
}


def build(seed: int = 20260401, per_context: int = 12) -> list[dict[str, object]]:
    r = random.Random(seed)
    out: list[dict[str, object]] = []
    for name, fn in CONTEXTS.items():
        for i in range(per_context):
            doc = fn(r)
            out.append({"id": f"{name}-{i:02d}", "context": name, "text": doc.text, "labels": doc.labels})
    return out


def benign_tricky(seed: int = 7) -> str:
    """Ordinary files full of things that look random but are not secrets (lockfiles, ids)."""
    import base64
    import hashlib
    import uuid

    r = random.Random(seed)
    out: list[str] = []
    for i in range(400):
        name = f"pkg-{i}"
        digest = base64.b64encode(hashlib.sha512(name.encode()).digest()).decode()
        out.append(f'    "node_modules/{name}": {{\n      "version": "{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 99)}",')
        out.append(f'      "resolved": "https://registry.npmjs.org/{name}/-/{name}-1.2.3.tgz",')
        out.append(f'      "integrity": "sha512-{digest}",')
        out.append('      "dev": true\n    },')
    for i in range(300):
        h = hashlib.sha256(f"wheel{i}".encode()).hexdigest()
        out.append(f'    {{file = "pkg_{i}-1.0.{i}-py3-none-any.whl", hash = "sha256:{h}"}},')
        out.append(f"example.com/mod{i} v1.{i}.0 h1:{base64.b64encode(hashlib.sha256(str(i).encode()).digest()).decode()}")
        out.append(f'checksum = "{hashlib.sha256(f"crate{i}".encode()).hexdigest()}"')
    for i in range(300):
        out.append(f"  --accent-{i}: #{r.randrange(16**6):06x}; /* {uuid.UUID(int=r.getrandbits(128), version=4)} */")
        out.append(f"commit {hashlib.sha1(str(i).encode()).hexdigest()}  Merge: {hashlib.sha1(str(i + 1).encode()).hexdigest()[:7]}")
        out.append(f"PNG_FIXTURE_{i} = b'{base64.b64encode(bytes(r.getrandbits(8) for _ in range(48))).decode()}'")
        out.append(f"    assert parse_version('{r.randint(1, 20)}.{r.randint(0, 99)}.{r.randint(0, 999)}rc{r.randint(1, 5)}') > BASE")
        out.append(f"ORDER_TOTAL_{i} = {r.randint(10**9, 10**13)}  # cents, 2024-0{r.randint(1, 9)}-{r.randint(10, 28)}")
        out.append(f"    token = tokenizer.next_token()  # {r.choice(['NAME', 'OP', 'NUMBER'])}")
        out.append(f"    password_field_{i} = forms.CharField(widget=forms.PasswordInput, max_length=128)")
        out.append(f'    secret = os.environ["APP_SECRET_{i}"]')
        out.append(f"    api_key = settings.get('api_key_{i}')")
        out.append(f"    if not token_is_valid(token): raise AuthError('bad token {i}')")
        out.append(f"    ip = '10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}'  # port {r.randint(1024, 65535)}")
        out.append(f"    checksum_{i} = 0x{r.getrandbits(64):016x}")
        out.append(f"    key = f'{{prefix}}:{{user_id}}:{i}'")
        out.append(f"    cache_key = 'user:{r.randint(1, 10**6)}:profile'")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    (OUT.parent / "benign_tricky.txt").write_text(benign_tricky(), encoding="utf-8")
    docs = build()
    with OUT.open("w", encoding="utf-8") as fh:
        for doc in docs:
            fh.write(json.dumps(doc, ensure_ascii=False) + "\n")
    n = sum(len(d["labels"]) for d in docs)  # type: ignore[arg-type]
    print(f"wrote {len(docs)} documents with {n} labelled values to {OUT}")
