"""harness/json_exact.py: orjson's value only where it is exactly the value Python's ``json`` gives."""

from __future__ import annotations

import json
import math

import pytest

from agenthop.harness.json_exact import REFUSED, loads_if_exact, may_hold_long_integer, parse_json_exact


@pytest.mark.parametrize("doc", [
    b'{"a": 1, "b": [2.5, -3, 1e-7, 5e-324], "c": "x\\u00e9\\ud83d\\ude00", "d": null, "e": true}',
    b'{"a": 999999999999999999, "b": -999999999999999999}',  # 18 digits: within 64 bits
    b'{"a": 1, "a": 2}',  # the last of duplicate keys, as json
    b'{"a": 1}\r',
    b'[1, 2]',
])
def test_orjson_reads_what_it_reads_exactly(doc: bytes) -> None:
    value, exact = parse_json_exact(doc)
    assert exact and value == json.loads(doc)
    assert repr(value) == repr(json.loads(doc))  # ints stay ints, floats stay the same floats


@pytest.mark.parametrize("doc", [
    b'{"a": 123456789012345678901234}',  # past 64 bits: orjson would give a float
    b'{"a": -9223372036854775809}',  # 19 digits below -2**63: orjson would give a float too
    b'[ -9999999999999999999]',
    b'{"a": 99999999999999999999}',
    b'{"a": 18446744073709551615, "b": -9223372036854775808}',  # orjson keeps these; json reads them the same
])
def test_long_integers_go_to_json_and_stay_whole(doc: bytes) -> None:
    assert may_hold_long_integer(doc)
    assert loads_if_exact(doc) is REFUSED
    value, exact = parse_json_exact(doc)
    assert not exact and value == json.loads(doc)
    assert all(type(v) is int for v in (value.values() if isinstance(value, dict) else value))


def test_digits_inside_a_string_cost_nothing() -> None:
    assert not may_hold_long_integer(b'{"iban": "DE12345678901234567890123"}')
    assert not may_hold_long_integer(b'{"a": 123456789012345678}')  # 18 digits: within 64 bits
    assert may_hold_long_integer(b'1234567890123456789012')  # a document that is one long integer


@pytest.mark.parametrize("doc", [b'{"a": NaN}', b'{"a": -Infinity}', b'{"a": 1e400}', b'{"a": "\\ud800"}'])
def test_what_orjson_refuses_json_reads(doc: bytes) -> None:
    assert loads_if_exact(doc) is REFUSED
    value, exact = parse_json_exact(doc)
    expected = json.loads(doc)
    assert not exact
    if isinstance(expected["a"], float):
        assert math.isnan(value["a"]) if math.isnan(expected["a"]) else value["a"] == expected["a"]
    else:
        assert value == expected  # the lone surrogate, as json reads it


@pytest.mark.parametrize("doc", [b'{"a": 1', b'\xef\xbb\xbf{"a": 1}', b'{"a": "x\ty"}', b'{"a": "\xff"}', b'{"a": 1} x'])
def test_refusals_and_errors_are_json_s(doc: bytes) -> None:
    """Whatever orjson refuses (a byte order mark, a control character, bad UTF-8, text after the
    value) is json's to accept or to word its error."""
    assert loads_if_exact(doc) is REFUSED
    try:
        expected: object = json.loads(doc)
    except ValueError as exc:
        with pytest.raises(ValueError) as ours:
            parse_json_exact(doc)
        assert str(ours.value) == str(exc)
    else:
        assert parse_json_exact(doc) == (expected, False)
