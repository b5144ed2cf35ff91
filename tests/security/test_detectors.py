"""Each detector on realistic inputs (public documentation examples and generated fakes),
and ordinary code that must come through unchanged."""

from __future__ import annotations

import pytest

from duckflow.security.sanitizer import Sanitizer

S = Sanitizer()

# (text, secret value that must disappear, expected kind)
POSITIVES = [
    ("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "aws_access_key"),
    ('aws_secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"', "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_key"),
    ("AKIAIOSFODNN7EXAMPLE,wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_key"),
    ("key=AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe", "gcp_api_key"),
    ("GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "github_token"),
    ("token: github_pat_11ABCDEFG0123456789abc_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456", "github_pat_11ABCDEFG0123456789abc_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456", "github_token"),
    ("gitlab: glpat-xxxxXXXX1234yyyyZZZZ", "glpat-xxxxXXXX1234yyyyZZZZ", "gitlab_token"),
    ("SLACK_BOT_TOKEN=xoxb-2048913485-4817203764821-Zx7ahE5YpQmBnVc3LkR9sT2w", "xoxb-2048913485-4817203764821-Zx7ahE5YpQmBnVc3LkR9sT2w", "slack_token"),
    ("hook https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "slack_webhook"),
    ("stripe.api_key = 'sk_test_4eC39HqLyjWDarjtT1zdp7dc'", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "stripe_key"),
    ("rk_live_51H8gYkLrT3xQz0aBcDeFgHiJ", "rk_live_51H8gYkLrT3xQz0aBcDeFgHiJ", "stripe_key"),
    ("OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9oPq2rSt5uVw8x", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9oPq2rSt5uVw8x", "openai_key"),
    ("use 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 now", "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", "openai_key"),
    ("x-api-key: sk-ant-api03-Zk4jN0s9Qw1Er2Ty3Ui4Op5As6Df7Gh8Jk9Lz0Xc1Vb2Nm3Qw4Er5Ty6Ui7Op8As9Df0Gh1Jk2Lz3Xc4Vb5Nm6Qw7Er8Ty9Ui0Op1-AbCdEfAA", "sk-ant-api03-Zk4jN0s9Qw1Er2Ty3Ui4Op5As6Df7Gh8Jk9Lz0Xc1Vb2Nm3Qw4Er5Ty6Ui7Op8As9Df0Gh1Jk2Lz3Xc4Vb5Nm6Qw7Er8Ty9Ui0Op1-AbCdEfAA", "anthropic_key"),
    ("HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "huggingface_token"),
    ('"client_secret": "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"', "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", "google_oauth_secret"),
    ("Authorization: Bearer ya29.a0AfH6SMBx3kQ9vLrT2yZ8nW5pC1dE7fG4hJ6kL0mN2oP4qR6sT8uV", "ya29.a0AfH6SMBx3kQ9vLrT2yZ8nW5pC1dE7fG4hJ6kL0mN2oP4qR6sT8uV", "google_oauth_token"),
    ("account AC2f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4 ok", "AC2f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4", "twilio_key"),
    ("SENDGRID_API_KEY=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", "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", "sendgrid_key"),
    ("//registry.npmjs.org/:_authToken=npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "npm_token"),
    ("password = pypi-AgEIcHlwaS5vcmcCJGFiY2RlZjEyLTM0NTYtNzg5MC1hYmNkLWVmMTIzNDU2Nzg5MAACKlszLCJhYmNkZWYiXQ", "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZjEyLTM0NTYtNzg5MC1hYmNkLWVmMTIzNDU2Nzg5MAACKlszLCJhYmNkZWYiXQ", "pypi_token"),
    ("DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net",
     "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==", "azure_storage_key"),
    ("jwt=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
     "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "jwt"),
    ("mongodb+srv://app:S3cr3tPa55@cluster0.ab1cd.mongodb.net/prod", "S3cr3tPa55", "url_password"),
    ("redis://:hunter22pass@cache.internal:6379/0", "hunter22pass", "url_password"),
    ("amqp://guest:Gu3stPa55w0rd@mq.example.org:5672/", "Gu3stPa55w0rd", "url_password"),
    ("mysql://root:r00tpw!@db:3306/shop", "r00tpw!", "url_password"),
    ("curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==' https://x", "dXNlcjpwYXNzd29yZDEyMw==", "basic_auth"),
    ("Authorization: token 0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567", "auth_header"),
    ("DB_PASSWORD=correct-horse-battery-9", "correct-horse-battery-9", "password"),
    ('{"password": "Tr0ub4dor&3"}', "Tr0ub4dor&3", "password"),
    ("  password: s3cr3tValue", "s3cr3tValue", "password"),
    ("SECRET_KEY = 'django-insecure-8f#k2!x@q9z$w1v&u7t^s5r*p3o(n)m'", "django-insecure-8f#k2!x@q9z$w1v&u7t^s5r*p3o(n)m", "secret"),
    ("export API_KEY=9f86d081884c7d659a2feaa0c55ad015", "9f86d081884c7d659a2feaa0c55ad015", "api_key"),
    ("$ mysql -u root -pS3cretPw shop", "S3cretPw", "password"),
    ("docker login -u ci -p Zq8#pL2mW9 registry.example.com", "Zq8#pL2mW9", "password"),
    ("パスワード：Hikari2024!", "Hikari2024!", "password"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAC3NzaC1lZDI1NTE5AAAAIHV\n-----END OPENSSH PRIVATE KEY-----",
     "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ", "private_key"),
    ('"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\\nBKcwggSjAgEAAoIBAQC7\\n-----END PRIVATE KEY-----\\n"',
     "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "private_key"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n(truncated)", "MIIEpAIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "private_key"),
    ("mail me: taro.yamada+work@example.co.jp", "taro.yamada+work@example.co.jp", "email"),
    ("tel +81 90-1234-5678", "+81 90-1234-5678", "phone"),
    ("電話 03-1234-5678", "03-1234-5678", "phone"),
    ("フリーダイヤル 0120-123-456", "0120-123-456", "phone"),
    ("携帯 09012345678", "09012345678", "phone"),
    ("call +1 (415) 555-2671", "+1 (415) 555-2671", "phone"),
    ("phone: +14155552671", "+14155552671", "phone"),
    ("+44 20 7946 0958", "+44 20 7946 0958", "phone"),
    ("card 4111 1111 1111 1111 exp 12/29", "4111 1111 1111 1111", "credit_card"),
    ("amex 3782-822463-10005", "3782-822463-10005", "credit_card"),
    ("cc=5555555555554444", "5555555555554444", "credit_card"),
    ("マイナンバー：123456789018", "123456789018", "my_number"),
    ("個人番号 1234-5678-9018", "1234-5678-9018", "my_number"),
    ("〒100-0005 東京都千代田区丸の内1-9-2", "〒100-0005 東京都千代田区丸の内1-9-2", "address"),
    ("Ship to 1600 Amphitheatre Parkway, Mountain View, CA 94043.", "1600 Amphitheatre Parkway, Mountain View, CA 94043", "address"),
]


@pytest.mark.parametrize(("text", "secret", "kind"), POSITIVES, ids=[p[2] + f"-{i}" for i, p in enumerate(POSITIVES)])
def test_secret_is_masked_with_its_kind(text: str, secret: str, kind: str) -> None:
    masked = S.mask(text)
    assert secret not in masked.text, masked.text
    assert kind in {f.kind for f in masked.findings}, masked.findings
    assert Sanitizer.restore(masked.text, masked.mapping) == text


NEGATIVES = [
    "token = get_token()",
    'secret = os.environ["X"]',
    "password_field = forms.CharField(widget=forms.PasswordInput)",
    "def connect(host: str, password: str | None = None) -> Connection:",
    "    self.password = password",
    "api_key = settings.API_KEY",
    "if token is None:\n    raise AuthError('missing token')",
    '"integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUR9qgsk2tbpf2VgQ=="',
    'hash = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"',
    "id = '123e4567-e89b-12d3-a456-426614174000'",
    "color: #1e90ff; background: #FFF;",
    'version = "2.14.1"  # released 2024-03-15',
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "ORDER_TOTAL = 1234567890123  # cents",
    "x = 0x7fffffffffffffff",
    "ip = '192.168.10.254'",
    "PNG = b'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='",
    "timestamp_ms = 1716460800000",
    "key = cache_key(user.id)",
    "password_hash = bcrypt.hashpw(password.encode(), salt)",
    "TOKEN_EXPIRY_MINUTES=15\nPASSWORD_MIN_LENGTH=12",
    "url = f'https://{user}:{password}@{host}/db'",
    "dsn = 'postgres://%s:%s@%s/%s' % (user, pw, host, db)",
    "@app.route('/login', methods=['POST'])",
    "Decimal('+35236450.6')",
    "tokens = tokenizer.tokenize(source)",
    "matrix = a @ b.T",
]


@pytest.mark.parametrize("code", NEGATIVES)
def test_ordinary_code_comes_through_unchanged(code: str) -> None:
    masked = S.mask(code)
    assert masked.text == code, masked.findings


# More inputs shaped like what people paste (session tokens, cookies, headers, prose, URLs).
MORE = [
 ("aws_session_token = IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDexample0123456789abcdefghijAbCdEf", "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDexample0123456789abcdefghijAbCdEf"),
 ("heroku_api_key: 01234567-89ab-cdef-0123-456789abcdef", "01234567-89ab-cdef-0123-456789abcdef"),
 ('"api-key": "a1b2c3d4e5f6g7h8i9j0"', "a1b2c3d4e5f6g7h8i9j0"),
 ("ACCESS_TOKEN='EAACEdEose0cBAHBQYuHjbuK4bVZBXHzZCwBl5AZDZD'", "EAACEdEose0cBAHBQYuHjbuK4bVZBXHzZCwBl5AZDZD"),
 ("passwd: hunter2", "hunter2"),
 ("pass=Summer2024!", "Summer2024!"),
 ("set PGPASSWORD=pgS3cret", "pgS3cret"),
 ("$env:AZURE_CLIENT_SECRET = \"abc8Q~dEfGhIjKlMnOpQrStUvWxYz0123456789ab\"", "abc8Q~dEfGhIjKlMnOpQrStUvWxYz0123456789ab"),
 ("my password is Tr0ub4dor&3", "Tr0ub4dor&3"),
 ("the wifi password: sunflower22", "sunflower22"),
 ("api key = 5f4dcc3b5aa765d61d8327deb882cf99", "5f4dcc3b5aa765d61d8327deb882cf99"),
 ("Here is my OpenAI key sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH", "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH"),
 ("git remote add origin https://oauth2:glpat-AbCdEf1234567890xyz@gitlab.com/g/p.git", "glpat-AbCdEf1234567890xyz"),
 ("https://user:p%40ssw0rd@example.com", "p%40ssw0rd"),
 ("DATABASE_URL=postgres://u:p4ss@localhost/db", "p4ss"),
 ("SMTP_PASSWORD=\"app specific pw\"", "app specific pw"),
 ('{"auth": {"username": "bob", "password": "b0bpass!"}}', "b0bpass!"),
 ("token: 'xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAxMjMtMTIzNDU2Nzg5MDEyMy0xMjM0NTY3ODkwMTIz'", "xoxp-1-Mi0yLTEyMzQ1Njc4OTAxMjMtMTIzNDU2Nzg5MDEyMy0xMjM0NTY3ODkwMTIz"),
 ("Cookie: sessionid=8f3b2c1d9e7a6f5b4c3d2e1f0a9b8c7d; csrftoken=Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe", "8f3b2c1d9e7a6f5b4c3d2e1f0a9b8c7d"),
 ("Set-Cookie: session=eyJ1c2VyX2lkIjo0Mn0.ZmFrZXNpZw.abcdefghijklmnop; HttpOnly", "eyJ1c2VyX2lkIjo0Mn0.ZmFrZXNpZw.abcdefghijklmnop"),
 ("Contact: (555) 234-5678", "(555) 234-5678"),
 ("電話番号は090-1234-5678です", "090-1234-5678"),
 ("TEL:03(1234)5678", "03(1234)5678"),
 ("john.smith@company.com", "john.smith@company.com"),
 ("Card: 4532015112830366", "4532015112830366"),
 ("VISA 4532-0151-1283-0366 exp 11/27 cvv 123", "4532-0151-1283-0366"),
 ("my number 1234-5678-9018", "1234-5678-9018"),
 ("〒530-0001 大阪府大阪市北区梅田3丁目1番1号", "大阪府大阪市北区梅田3丁目1番1号"),
 ("住所：東京都渋谷区道玄坂1-2-3 渋谷ビル5F", "東京都渋谷区道玄坂1-2-3"),
 ("123 Main St, Springfield, IL 62701", "123 Main St, Springfield, IL 62701"),
 ("mobile: +81 80 1234 5678", "+81 80 1234 5678"),
 ("+886 2 2345 6789", "+886 2 2345 6789"),
 ("private_key = 'e331b6d69882b4cb4ea581d88e0b604039a3de5967688d3dcffdd2270c0fd109'", "e331b6d69882b4cb4ea581d88e0b604039a3de5967688d3dcffdd2270c0fd109"),
 ("ssh-keygen output: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5EmxO2ec8uPY6oAoGCCqGSM49\n-----END EC PRIVATE KEY-----", "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5EmxO2ec8uPY6oAoGCCqGSM49"),
 ("slack: https://hooks.slack.com/workflows/T01ABCDEF/A02BCDEFG/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIjKlMnOpQrStUvWx"),
 ("discord https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrSt", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-AbCdEfGhIjKlMnOpQrSt"),
 ("bot token 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"),
 ("aws_secret_access_key=je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY", "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"),
 ("password='p4$$w0rd'", "p4$$w0rd"),
 ("PASSWORD=\"\"", None),
 ("SECRET=${SECRET_FROM_VAULT}", None),
 ("key: AIzaSyB-1234567890abcdefghijklmnopqrstu", "AIzaSyB-1234567890abcdefghijklmnopqrstu"),
 ("npm config set //registry.npmjs.org/:_authToken 00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"),
 ("HF token: hf_jKlMnOpQrStUvWxYzAbCdEfGhIjKlMnOpQ", "hf_jKlMnOpQrStUvWxYzAbCdEfGhIjKlMnOpQ"),
 ("X-Auth-Token: 7c9e6679742540de944be07fc1f90ae7", "7c9e6679742540de944be07fc1f90ae7"),
 ("api_secret=7c9e6679742540de944be07fc1f90ae7", "7c9e6679742540de944be07fc1f90ae7"),
 ("dsn=https://abc123def456@o123456.ingest.sentry.io/789", None),
]


@pytest.mark.parametrize(("text", "secret"), MORE, ids=[f"more-{i}" for i in range(len(MORE))])
def test_more_realistic_inputs(text: str, secret: str | None) -> None:
    out = S.mask(text).text
    if secret is None:
        assert out == text
    else:
        assert secret not in out, out


def test_private_key_blocks_short_elided_and_marker_constants() -> None:
    short = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\n"
    masked = Sanitizer().mask(short)
    assert masked.text == "[SECRET:private_key#1]\n" and masked.findings[0].end == len(short) - 1
    elided = "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----"
    assert "BEGIN" not in S.mask(elided).text
    code = '_SK_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n_SK_END = b"-----END OPENSSH PRIVATE KEY-----"'
    assert S.mask(code).text == code


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("DATABASE_URL=mysql://root:password@localhost/db", "password@"),
        ("DB_PASSWORD=password", "=password"),
        ("amqp://guest:guest@localhost:5672/", "guest:guest"),
        ("Authorization: Bearer abc123xyz9", "abc123xyz9"),
        ("HF_TOKEN=hf_abcDEF123ghiJKL456mnoPQR789stuVWX0", "hf_abcDEF123ghiJKL456mnoPQR789stuVWX0"),
        ("1600 Pennsylvania Avenue NW, Washington, DC 20500", "1600 Pennsylvania"),
    ],
)
def test_weak_or_short_values_outside_code_are_still_masked(text: str, secret: str) -> None:
    assert secret not in S.mask(text).text


@pytest.mark.parametrize(
    "code",
    [
        'url = "postgres://user:password@host/db"  # documentation example',
        "    response did not include a valid Bearer access_token",
        "            credentials=s3_credentials,",
        "re.compile(r'pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,}')",
        '    "batch_1_day_max_input_tokens": batch_1_day_max_input_tokens,',
        '__slots__ = "_borrowers", "_total_tokens", "_wait_queue"',
        '    "win32cred": "types-pywin32",',
        "        private_key: Ed25519PrivateKey,",
        '    ("OPENAI_API_KEY", "openai:gpt-4o-mini"),',
        '    Act("create", "compose.yml", "DATABASE_URL: postgresql://app:app@db:5432/app\\n"),',
        "    only the password is reported.",
    ],
)
def test_third_party_code_shapes_are_not_secrets(code: str) -> None:
    assert S.mask(code).text == code


def test_bare_my_number_needs_a_cue_or_its_own_line() -> None:
    assert S.mask("123456789018\n").text.startswith("[PII:my_number#")
    assert S.mask("マイナンバー 123456789018").text.endswith("]")
    assert S.mask("total = 123456789018\n").text == "total = 123456789018\n"
    assert S.mask("123456789012\n").text == "123456789012\n"  # wrong check digit


@pytest.mark.parametrize("phone", ["電話：０９０－１８２６－０９８０", "携帯 ０８０ー１２３４ー５６７８"])
def test_a_my_number_is_masked_when_the_text_also_has_full_width_digits(phone: str) -> None:
    """Full-width digits anywhere in a text made the PII pass read a digits-normalised copy, in
    which the ー of マイナンバー became a dash: the My Number next to its label came through."""
    text = f"{phone}\nマイナンバーは 761947445406 でお願いします。\n"
    masked = Sanitizer().mask(text).text
    assert "761947445406" not in masked and "my_number" in masked
    assert "マイナンバーは" in masked  # the label itself is kept
    csv = f"{phone}\n氏名,マイナンバー,部署\n田中,761947445406,開発\n"
    assert "761947445406" not in Sanitizer().mask(csv).text  # a column named マイナンバー too
