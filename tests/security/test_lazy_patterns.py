"""The security patterns are compiled on first use: what that may never change is what is found."""

from __future__ import annotations

import subprocess
import sys

from duckflow._lazyre import LazyPattern
from duckflow.security.rules import Hay, _t


def test_a_token_rule_is_not_compiled_for_text_without_its_prefix_and_still_finds_the_token() -> None:
    rule = _t("stripe_key", r"whsec_[0-9A-Za-z]{24,}", ("whsec_",))
    assert rule.prefix == "whsec_" and isinstance(rule.pattern, LazyPattern)
    plain = "nothing to see here, whsec without the underscore"
    assert list(rule.find(Hay(plain, plain.lower()))) == []
    assert not rule.pattern.is_compiled  # the prefix gate answered: no compile
    text = "hook secret whsec_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3"
    found = list(rule.find(Hay(text, text.lower())))
    assert [(c.kind, text[c.start:c.end]) for c in found] == [("stripe_key", text[12:])]
    assert rule.pattern.is_compiled
    # once compiled, the regex itself decides (same result on the plain text)
    assert list(rule.find(Hay(plain, plain.lower()))) == []


def test_lazy_pattern_behaves_like_the_compiled_one() -> None:
    lazy = LazyPattern(r"(a)(b)?", 0)
    assert not lazy.is_compiled and lazy.groups == 2 and lazy.is_compiled
    assert lazy.sub("x", "aab") == "xx" and lazy.findall("ab a") == [("a", "b"), ("a", "")]
    assert lazy.fullmatch("ab") is not None and lazy.split("cabd") == ["c", "a", "b", "d"]


def test_a_fresh_process_masks_every_kind_on_its_first_text() -> None:
    """No pattern compiled yet (fresh process): the first text still gets every secret masked."""
    code = (
        "from duckflow.security.sanitizer import Sanitizer\n"
        "t = ('aws AKIAIOSFODNN7EXAMPLE gh ghp_' + 'a1B2c3D4e5F6g7H8i9J0a1B2c3D4e5F6g7H8' +"
        " ' stripe sk_live_' + 'a1B2c3D4e5F6g7H8i9J0' + ' mail bob@example.com'"
        " ' url https://user:s3cr3tPassw0rd@db.example.com/x')\n"
        "print(Sanitizer().mask(t).text)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True).stdout
    for placeholder in ("[SECRET:aws_access_key#1]", "[SECRET:github_token#1]", "[SECRET:stripe_key#1]",
                        "[PII:email#1]", "[SECRET:url_password#1]"):
        assert placeholder in out, out
    assert "AKIA" not in out and "ghp_" not in out and "s3cr3t" not in out


def test_rule_by_rule_and_the_alternation_find_the_same_tokens() -> None:
    """Short texts are scanned rule by rule (few patterns compiled), long ones through the one
    alternation: on the whole labelled corpus both find exactly the same candidates."""
    import json
    from pathlib import Path

    from duckflow.security.rules import (
        RUN_RULES,
        literal_head,
        run_tokens_alternation,
        run_tokens_rule_by_rule,
    )

    corpus = Path(__file__).resolve().parent / "corpus"
    texts = [json.loads(line)["text"] for line in (corpus / "positives.jsonl").read_text().splitlines() if line]
    benign = (corpus / "benign_tricky.txt").read_text()
    texts += [benign[i:i + 4000] for i in range(0, len(benign), 4000)]
    found = 0
    for text in texts:
        one = [(c.start, c.end, c.kind) for c in run_tokens_rule_by_rule(text)]
        assert one == [(c.start, c.end, c.kind) for c in run_tokens_alternation(text)], text[:200]
        found += len(one)
    assert found > 50
    for rule in RUN_RULES:  # every head is a true prefix of what the rule matches
        head = literal_head(rule.pattern.pattern)
        assert rule.pattern.pattern.startswith(head)
    assert literal_head(r"A{22}x") == "" and literal_head(r"ab?c") == "a" and literal_head(r"[sp]k_") == ""
