"""Per-item values as columns (reports/core/value_columns.py): the pooled statistics give the same numbers, to
the bit and in the same order, from a mapping and from columns read through Arrow."""

from __future__ import annotations

import random

import pyarrow as pa

from agenthop.reports.core import coverage, pooling
from agenthop.reports.core.value_columns import ValueColumns


def _values(seed: int = 1) -> dict[tuple[str, str], float]:
    rnd = random.Random(seed)
    out: dict[tuple[str, str], float] = {}
    for _ in range(4000):  # runs and items interleaved, some (run, item) pairs missing
        out[(f"r{rnd.randrange(7)}", f"s{rnd.randrange(300)}")] = rnd.choice([0.1, 0.2, 0.3, 1 / 3, 0.7, 1e-17, 1e17])
    return out


def _sum_means(values: dict[tuple[str, str], float], run_ids: list[str]) -> dict[str, float]:
    """Each item's mean as a Python sum over its values in the mapping's order (how the pages summed before)."""
    acc: dict[str, list[float]] = {}
    for (rid, sid), v in values.items():
        if rid in run_ids:
            acc.setdefault(sid, []).append(v)
    return {sid: sum(vs) / len(vs) for sid, vs in acc.items()}


def test_item_means_match_python_sums_in_order() -> None:
    values = _values()
    cols = ValueColumns.from_mapping(values)
    for run_ids in (["r0"], ["r1", "r2", "r3"], ["r6", "r0", "r5", "r4"], ["nope"], []):
        want = _sum_means(values, run_ids)
        for got in (pooling.item_means(values, run_ids), pooling.item_means(cols, run_ids)):
            assert list(got.items()) == list(want.items())  # same bits, same order


def test_from_arrow_reads_as_a_dict_of_its_rows_would() -> None:
    rows = [("b", "x", 1.0), ("a", "y", None), ("a", "x", 0.5), ("b", "x", 0.25), ("a", "z", 2.0)]
    table = pa.table({"run_id": [r for r, _, _ in rows], "sample_id": [s for _, s, _ in rows],
                      "value": [v for _, _, v in rows]})
    cols = ValueColumns.from_arrow(table)
    want = {(r, s): float(v) for r, s, v in rows if v is not None}  # ("b", "x") twice: first place, last value
    assert list(cols.to_dict().items()) == list(want.items())
    assert pooling.item_means(cols, ["a", "b"]) == pooling.item_means(want, ["a", "b"]) == {"x": 0.375, "z": 2.0}
    ints = ValueColumns.from_arrow(pa.table({"r": ["a", "a"], "s": [1, 2], "v": pa.array([3, 4], pa.int64())}))
    assert ints.to_dict() == {("a", "1"): 3.0, ("a", "2"): 4.0}
    assert len(ValueColumns.from_arrow(table.slice(0, 0))) == 0


def test_coverage_and_itt_from_columns_equal_the_mapping() -> None:
    values = _values(3)
    cols = ValueColumns.from_mapping(values)
    rows = {"r1": coverage.RunCoverage("r1", 320, 300, 290, 3, 5)}
    for run_ids in (["r1", "r2"], ["r0", "r1", "r2", "r3", "r4", "r5", "r6"], ["r2", "r2"]):
        assert coverage.of_group(cols, run_ids, rows) == coverage.of_group(values, run_ids, rows)
        for worst in (0.0, 1.0):
            got = coverage.itt_mean(cols, run_ids, 320, worst)
            assert got == coverage.itt_mean(values, run_ids, 320, worst)
            per_run = [(sum(v for (r, _), v in values.items() if r == rid)
                        + worst * (320 - sum(1 for (r, _) in values if r == rid))) / 320 for rid in run_ids]
            assert got == sum(per_run) / len(per_run)
    assert pooling.is_binary(cols) is False and pooling.is_binary({("a", "x"): 1.0, ("a", "y"): 0.0}) is True


def test_from_arrow_with_no_value_left_is_empty() -> None:
    """Rows whose every value is null (a run scored nothing), or none of the runs asked for: no rows, as the
    mapping of those rows would be empty (not an error)."""
    table = pa.table({"run_id": ["r1", "r1"], "sample_id": ["s1", "s2"], "value": pa.array([None, None], pa.float64())})
    for cols in (ValueColumns.from_arrow(table), ValueColumns.from_arrow(table, runs=["r2"])):
        assert len(cols) == 0 and cols.item_means() == {} and cols.to_dict() == {}
        assert pooling.item_means(cols, ["r1"]) == {}
