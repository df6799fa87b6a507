"""The one rule for a number a request names (social.numbers): ASCII digits, at most 19."""

from __future__ import annotations

import pytest

from social.numbers import ID_MAX, id_number, whole_number


@pytest.mark.parametrize(
    ("value", "number"),
    [("0", 0), ("007", 7), ("9" * 19, 10**19 - 1), (42, 42), (0, 0), (10**19 - 1, 10**19 - 1)],
)
def test_ascii_digits_and_json_ints_are_numbers(value, number):
    assert whole_number(value) == number


@pytest.mark.parametrize(
    "value",
    [
        "²",  # str.isdigit() takes it
        "١٢",  # int() takes digits of other scripts
        "１２",  # fullwidth digits: int() takes them too
        " 7", "7 ", "7\n", "1_0", "+1", "-1", "1.0", "1e3", "0x1", "",
        "9" * 20, "01" + "0" * 5000,  # more than 19 digits; more than int() converts
        True, False, 1.0, -1, 10**19, None, b"1", ["1"], {"1": 1},
    ],
)  # fmt: skip
def test_anything_else_is_none(value):
    assert whole_number(value) is None


def test_an_id_is_a_number_from_one_to_redis_s_largest_integer():
    assert id_number("1") == 1
    assert id_number(str(ID_MAX)) == ID_MAX == 2**63 - 1
    assert id_number(str(ID_MAX + 1)) is None
    assert id_number("0") is None
    assert id_number("²") is None
