"""Check digits: Luhn for cards, the My Number check digit; and the log filter."""

from __future__ import annotations

import io
import logging

import pytest

from duckflow.security.checks import card_brand, luhn_valid, my_number_check_digit, my_number_valid
from duckflow.security.logfilter import SanitizingFilter
from duckflow.security.sanitizer import Sanitizer

# Weights of the 11 body digits, left to right, from 総務省令第八十五号 第五条:
# Q_n = n + 1 (n <= 6), n - 5 (n >= 7), n counted from the right.
WEIGHTS = [6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2]


def _reference_check(body: str) -> int:
    r = sum(int(d) * w for d, w in zip(body, WEIGHTS, strict=True)) % 11
    return 0 if r <= 1 else 11 - r


@pytest.mark.parametrize("number", ["4111111111111111", "5555555555554444", "378282246310005", "6011111111111117", "3530111333300000"])
def test_luhn_accepts_valid_test_card_numbers(number: str) -> None:
    assert luhn_valid(number)
    assert card_brand(number) is not None


@pytest.mark.parametrize("number", ["4111111111111112", "5555555555554445", "378282246310006", "1234567812345678", "", "4", "41111x1111111111"])
def test_luhn_rejects_invalid_numbers(number: str) -> None:
    assert not luhn_valid(number)


def test_card_brand_needs_a_known_range() -> None:
    assert card_brand("4111111111111111") == "visa"
    assert card_brand("378282246310005") == "amex"
    assert card_brand("9111111111111111") is None


def test_my_number_check_digit_worked_example() -> None:
    # 1*6+2*5+3*4+4*3+5*2+6*7+7*6+8*5+9*4+0*3+1*2 = 212; 212 mod 11 = 3; 11 - 3 = 8
    assert my_number_check_digit("12345678901") == 8
    assert my_number_valid("123456789018")
    assert not my_number_valid("123456789012")


def test_my_number_check_digit_matches_the_reference_on_many_bodies() -> None:
    bodies = [f"{i * 7919 % 10**11:011d}" for i in range(1, 2000)]
    zero_cases = 0
    for body in bodies:
        expected = _reference_check(body)
        zero_cases += expected == 0
        assert my_number_check_digit(body) == expected
        assert my_number_valid(body + str(expected))
        assert not my_number_valid(body + str((expected + 1) % 10))
    assert zero_cases > 0  # the "remainder <= 1 -> 0" branch was exercised


def test_my_number_rejects_wrong_length_and_repeated_digits() -> None:
    assert not my_number_valid("12345678901")
    assert not my_number_valid("000000000000")
    with pytest.raises(ValueError):
        my_number_check_digit("123")


def test_a_secret_in_a_log_line_is_masked() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(SanitizingFilter(Sanitizer()))
    log = logging.getLogger("duckflow.test.logmask")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("login as %s with password=%s", "bob@example.com", "hunter2hunter2")
        try:
            raise RuntimeError("token ghp_16C7e42F292c6912E7710c838347Ae178B4a rejected")
        except RuntimeError:
            log.exception("call failed")
    finally:
        log.removeHandler(handler)
    out = stream.getvalue()
    assert "hunter2hunter2" not in out and "bob@example.com" not in out
    assert "ghp_16C7e42F292c6912E7710c838347Ae178B4a" not in out
    assert "[SECRET:password#" in out and "[PII:email#" in out and "[SECRET:github_token#" in out
