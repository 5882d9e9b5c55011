"""Pure parts of the interchange formats, on hand-built values (docs/interchange.md)."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from agenthop.reports.interchange.eee import developer_and_name, file_uuid, uncertainty
from agenthop.schemas.sample_hash import references, sample_hash


def test_sample_hash_is_the_canonical_recipe() -> None:
    # the reference values (Every Eval Ever's canonical recipe; its contributor guide's example item)
    assert sample_hash("What is 2+2?", ["4"]).startswith("6430bdf4ecab0610")
    assert sample_hash("What is 2 + 2?", ["4"]) == "9c94305328f8e70341f9d1880f4eaa6ea7f93b8922e6a03a8cdcf1924d28db0b"
    # sorted keys, no spaces, the whole reference list, non-ASCII as \\u escapes, written out by hand
    text = '{"raw":"Caf\\u00e9?","reference":["a","b"]}'
    assert sample_hash("Café?", ["a", "b"]) == hashlib.sha256(text.encode()).hexdigest()
    assert sample_hash("x", []) == hashlib.sha256(b'{"raw":"x","reference":[]}').hexdigest()


def test_stored_targets_as_reference_lists() -> None:
    assert references(None) == [] and references("") == []
    assert references('["a", "b"]') == ["a", "b"]
    assert references("C") == ["C"] and references("[not json") == ["[not json"]


def test_uncertainty_of_a_binary_metric() -> None:
    out = uncertainty([1.0, 0.0, 1.0, 1.0], "binary")
    # mean 0.75; sample sd sqrt((3 * 0.25^2 + 0.75^2) / 3) = 0.5; se 0.5 / 2 = 0.25
    assert out["num_samples"] == 4
    assert out["standard_deviation"] == pytest.approx(0.5)
    assert out["standard_error"] == {"value": pytest.approx(0.25), "method": "analytic"}
    # Wilson, z = 1.96, k = 3 of 4: centre 0.62752, half-width 0.32689
    ci = out["confidence_interval"]
    assert (ci["lower"], ci["upper"]) == (pytest.approx(0.30063, abs=1e-4), pytest.approx(0.95441, abs=1e-4))
    assert ci["method"] == "wilson" and ci["confidence_level"] == 0.95


def test_uncertainty_of_a_continuous_metric() -> None:
    out = uncertainty([0.2, 0.4, 0.9], "continuous")
    # mean 0.5; sd sqrt(0.26 / 2) = 0.360555; se 0.208167; 0.5 -+ 1.96 * se
    assert out["standard_deviation"] == pytest.approx(0.360555, abs=1e-6)
    assert out["standard_error"]["value"] == pytest.approx(0.208167, abs=1e-6)
    ci = out["confidence_interval"]
    assert (ci["lower"], ci["upper"]) == (pytest.approx(0.091993, abs=1e-6), pytest.approx(0.908007, abs=1e-6))


def test_one_value_has_only_its_count() -> None:
    assert uncertainty([1.0], "binary") == {"num_samples": 1}


def test_file_names_are_stable_version_4_uuids() -> None:
    a = file_uuid("eee", "run-1")
    assert a == file_uuid("eee", "run-1") != file_uuid("eee", "run-2") != file_uuid("atif", "run-1")
    assert uuid.UUID(a).version == 4 and a == a.lower()


@pytest.mark.parametrize("run, expected", [
    ({"model": "openai/gpt-4o-mini", "family": "x"}, ("openai", "gpt-4o-mini")),
    ({"model": "org/a/b", "family": None}, ("org", "a_b")),
    ({"model": "sim-strong", "family": "sim-test", "backend": "sim"}, ("sim-test", "sim-strong")),
    ({"model": "sim-strong", "family": None, "backend": "sim"}, ("sim", "sim-strong")),
])
def test_developer_folder(run: dict, expected: tuple[str, str]) -> None:
    assert developer_and_name(run) == expected
