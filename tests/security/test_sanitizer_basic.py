"""Core sanitizer behaviour: masking, placeholders, restore, overlaps, offsets."""

from __future__ import annotations

import re

from duckflow.security.rules import SECRET, Candidate
from duckflow.security.sanitizer import Sanitizer, default_sanitizer, mask_text, resolve_overlaps

AWS_ID = "AKIAIOSFODNN7EXAMPLE"
GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def test_masks_aws_key_and_email_with_typed_numbered_placeholders() -> None:
    text = f"key {AWS_ID} mail bob@example.com and alice@example.org"
    masked = Sanitizer().mask(text)
    assert masked.text == "key [SECRET:aws_access_key#1] mail [PII:email#1] and [PII:email#2]"
    assert [f.kind for f in masked.findings] == ["aws_access_key", "email", "email"]
    for f in masked.findings:
        assert masked.mapping[f.placeholder] == text[f.start : f.end]


def test_same_value_same_placeholder_and_restore_round_trip() -> None:
    text = f"a={GH}\nb: {GH}\nc bob@example.com"
    s = Sanitizer()
    masked = s.mask(text)
    assert masked.text.count("[SECRET:github_token#1]") == 2
    assert GH not in masked.text
    assert Sanitizer.restore(masked.text, masked.mapping) == text
    assert s.restore(masked.text, {}) == masked.text


def test_shared_mapping_keeps_placeholders_stable_across_calls() -> None:
    mapping: dict[str, str] = {}
    s = Sanitizer()
    first = s.mask("mail bob@example.com", mapping)
    second = s.mask("again bob@example.com, new carol@example.net", mapping)
    assert first.text == "mail [PII:email#1]"
    assert second.text == "again [PII:email#1], new [PII:email#2]"
    echoed = "I wrote to [PII:email#2] and [PII:email#1]; [PII:email#9] is unknown"
    assert Sanitizer.restore(echoed, mapping) == (
        "I wrote to carol@example.net and bob@example.com; [PII:email#9] is unknown"
    )


def test_overlaps_resolved_by_priority_then_length() -> None:
    cands = [
        Candidate(0, 10, "generic", SECRET, 50),
        Candidate(2, 8, "specific", SECRET, 90),
        Candidate(8, 20, "long", SECRET, 50),
        Candidate(9, 12, "short", SECRET, 50),
    ]
    kept = resolve_overlaps(cands)
    assert [(c.kind, c.start, c.end) for c in kept] == [("specific", 2, 8), ("long", 8, 20)]


def test_url_password_wins_over_email_inside_it() -> None:
    text = "DATABASE_URL=postgres://admin:P4ssw0rd@db.example.com:5432/app"
    masked = Sanitizer().mask(text)
    assert "P4ssw0rd" not in masked.text
    assert masked.text.startswith("DATABASE_URL=postgres://admin:[SECRET:")
    assert "db.example.com:5432/app" in masked.text


def test_offsets_point_into_the_original_text_with_multibyte_characters() -> None:
    text = "連絡先: 山田 bob@example.com パスワード: hunter22 電話 090-1234-5678"
    masked = Sanitizer().mask(text)
    values = {f.kind: text[f.start : f.end] for f in masked.findings}
    assert values == {"email": "bob@example.com", "password": "hunter22", "phone": "090-1234-5678"}


def test_only_the_secret_part_is_masked() -> None:
    s = Sanitizer()
    assert s.mask('password = "s3cr3t!"').text == 'password = "[SECRET:password#1]"'
    assert s.mask("Authorization: Bearer abcdef1234567890ABCDEF").text == (
        "Authorization: Bearer [SECRET:bearer_token#1]"
    )
    # mask_text uses the shared default sanitizer, whose numbering is process-wide
    assert re.fullmatch(r'password = "\[SECRET:password#\d+\]"', mask_text('password = "s3cr3t!"'))


def test_code_that_handles_secrets_is_left_alone() -> None:
    code = (
        "token = get_token()\n"
        'secret = os.environ["X"]\n'
        'password_field = "password"\n'
        "def login(user: str, password: str) -> None:\n"
        "    self.password = password\n"
        "color = '#ff00aa'  # uuid 123e4567-e89b-12d3-a456-426614174000\n"
        'version = "1.2.3"\n'
    )
    assert mask_text(code) == code


def test_placeholders_are_not_masked_again() -> None:
    # nothing inside a placeholder is masked again; the placeholder itself is escaped (it is
    # literal text now), so restoring gives back exactly the once-masked text
    from duckflow.security.sanitizer import Sanitizer

    once = mask_text(f"x {AWS_ID} bob@example.com")
    twice = Sanitizer().mask(once)
    assert twice.findings == [] and twice.text == once.replace("[SECRET:", "[SECRET\\:").replace(
        "[PII:", "[PII\\:")
    assert Sanitizer.restore(twice.text, twice.mapping) == once


def test_default_sanitizer_is_cached() -> None:
    assert default_sanitizer() is default_sanitizer()


def test_one_instance_never_reuses_a_placeholder_for_another_value() -> None:
    s = Sanitizer()
    a = s.mask("bob@example.com")
    b = s.mask("carol@example.net and bob@example.com")
    assert a.text == "[PII:email#1]"
    assert b.text == "[PII:email#2] and [PII:email#1]"
    merged = {**a.mapping, **b.mapping}
    assert merged == {"[PII:email#1]": "bob@example.com", "[PII:email#2]": "carol@example.net"}
    assert b.mapping == merged
