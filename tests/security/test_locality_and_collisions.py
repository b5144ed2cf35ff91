"""What counts as local, PII the sanitizer used to miss, and placeholders that cannot collide."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from duckflow.llm.openai_compat import OpenAICompatModel
from duckflow.llm.provider import is_local_url
from duckflow.llm.sanitize import PlaceholderRestorer, mask_messages
from duckflow.llm.types import Message, complete
from duckflow.security.checks import my_number_valid
from duckflow.security.sanitizer import Sanitizer
from tests.helpers.fakeserver import FakeServer, Reply, openai_stream


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:11434", "http://127.5.6.7/v1", "http://[::1]:8000/v1", "http://localhost:1234",
    "http://LOCALHOST/v1", "http://[::ffff:127.0.0.1]/v1", "unix:///run/ollama.sock",
    "http+unix://%2Frun%2Fllm.sock/v1",
])
def test_local_urls(url: str) -> None:
    assert is_local_url(url)


@pytest.mark.parametrize("url", [
    "https://127.attacker.example/v1", "http://api.openai.com.localhost/v1", "http://0.0.0.0:8000",
    "http://localhost.attacker.com/v1", "http://127.0.0.1.nip.io/v1", "https://api.openai.com/v1",
    "http://[::2]/v1", "http://10.0.0.1/v1", "", "not a url", "http://[bad/v1", "//localhost/x",
])
def test_not_local_urls(url: str) -> None:
    assert not is_local_url(url.replace("//localhost/x", "localhost"))


def test_a_lookalike_base_url_is_treated_as_cloud_and_masked() -> None:
    for base in ("https://127.attacker.example/v1", "http://api.openai.com.localhost/v1"):
        model = OpenAICompatModel("gpt", base_url=base)
        assert model.is_local is False


def _my_number(base: str) -> str:
    return next(base + str(d) for d in range(10) if my_number_valid(base + str(d)))


MN = [_my_number(b) for b in ("12345678901", "98765432109", "11112222333", "05012345678")]


@pytest.mark.parametrize("text, secret", [
    ("携帯: 070.1234.5678", "070.1234.5678"),
    ("電話 0312345678 まで", "0312345678"),
    ("TEL:0312345678", "0312345678"),
    ("Tel 0662345678", "0662345678"),
    ("郵便番号 150-0002", "150-0002"),
    ("郵便番号：１５０−０００２", "１５０−０００２"),
    (f"マイナンバー: {MN[0]}", MN[0]),
    (f"個人番号 {MN[1]}", MN[1]),
])
def test_pii_that_used_to_be_missed(text: str, secret: str) -> None:
    assert secret not in Sanitizer().mask(text).text


def test_my_numbers_in_a_csv_column_so_named() -> None:
    rows = "".join(f"{i},山田太郎{i},営業部第二課東京支店,{m},yamada{i}-note\n" for i, m in enumerate(MN))
    for sep in (",", "\t"):
        csv = ("社員ID,氏名,部署,マイナンバー,備考\n" + rows).replace(",", sep)
        out = Sanitizer().mask(csv).text
        assert not any(m in out for m in MN), out
    # the same numbers in a column named otherwise stay (a 12-digit id is not a My Number)
    other = "社員ID,氏名,部署,注文番号,備考\n" + rows
    assert all(m in Sanitizer().mask(other).text for m in MN[2:])


@pytest.mark.parametrize("text", [
    '"password", "scram-sha-256",',
    'auth_methods = ["password", "scram-sha-256", "md5"]',
    "version 0312345678",
    "build 070.1234.5678.9",
    "id 150-0002",
])
def test_no_false_positives(text: str) -> None:
    assert Sanitizer().mask(text).text == text


def test_a_literal_placeholder_and_a_real_value_both_round_trip() -> None:
    text = "mail [PII:email#1] and bob@example.com, [[PII:email#1]] [PII\\:email#1]"
    s = Sanitizer()
    masked = s.mask(text)
    assert "bob@example.com" not in masked.text
    assert Sanitizer.restore(masked.text, masked.mapping) == text
    conv: dict[str, str] = {}
    first = s.mask("[PII:email#1]", conv)
    second = s.mask("bob@example.com", conv)
    assert Sanitizer.restore(first.text, conv) == "[PII:email#1]"
    assert Sanitizer.restore(second.text, conv) == "bob@example.com"


_PIECES = st.sampled_from([
    "bob@example.com", "alice@example.org", "[PII:email#1]", "[PII:email#2]", "[SECRET:jwt#1]",
    "[PII\\:email#1]", "[PII\\\\:email#1]", "[", "]", "\\", "#1]", "[PII", ":email", " ",
    "AKIAQ3EGRSTUVWXYZ7AB", "090-1234-5678", "電話 0312345678", "[[", "]]", "x", "\n",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES | st.text(max_size=6), max_size=12))
def test_restore_of_mask_is_the_identity(pieces: list[str]) -> None:
    text = "".join(pieces)
    s = Sanitizer()
    masked = s.mask(text)
    assert Sanitizer.restore(masked.text, masked.mapping) == text
    conv: dict[str, str] = {}
    parts = [s.mask(p, conv).text for p in pieces]
    assert [Sanitizer.restore(p, conv) for p in parts] == pieces


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=10), st.integers(min_value=1, max_value=7))
def test_streamed_restore_is_the_identity_whatever_the_chunking(pieces: list[str], size: int) -> None:
    text = "".join(pieces)
    masked = mask_messages([Message("user", text)])
    sent = masked.messages[0].content
    restorer = PlaceholderRestorer(masked.mapping)
    out = "".join(restorer.feed(sent[i:i + size]) for i in range(0, len(sent), size))
    assert out + restorer.flush() == text


async def test_a_cloud_reply_echoing_both_placeholders_restores_each(server: FakeServer) -> None:
    text = "literal [PII:email#1] real bob@example.com"
    masked = mask_messages([Message("user", text)]).messages[0].content
    server.queue("/v1/chat/completions", Reply(chunks=openai_stream([masked[:13], masked[13:]])))
    model = OpenAICompatModel("gpt", base_url=f"{server.url}/v1", is_local=False)
    resp = await complete(model, [Message("user", text)])
    sent = server.requests[0].body.decode()
    assert "bob@example.com" not in sent
    assert resp.text == text


def test_sanitize_command_masks_the_missed_pii() -> None:
    proc = subprocess.run([sys.executable, "-m", "duckflow", "sanitize"], text=True,
                          input="電話 0312345678 郵便番号 150-0002\n", capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "0312345678" not in proc.stdout and "150-0002" not in proc.stdout
