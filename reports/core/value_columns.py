"""Per-item values as columns: the ``{(run_id, sample_id): value}`` mapping of reports/core/pooling.py held as
three numpy arrays (a run code, a sample code and the value of each row, in the mapping's order) and the two
lists the codes index.

A leaderboard of a lab's corpus reads millions of values (50 models x 5 epochs x 10,000 items); a Python
pass over them per run group cost more than the statistics. The pooled statistics (pooling.item_means,
coverage.of_group, coverage.itt_mean) are each computed here once, on the columns, whether their caller holds a
mapping or columns read straight from DuckDB (Arrow). Sums run over the rows in their order, one after the
other (``np.bincount`` with weights adds in row order), as a Python ``sum`` over each item's values in the
mapping's order does, so the means are the same to the bit as the mapping's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

#: (run_id, sample_id) -> the item's value in that run
Values = dict[tuple[str, str], float]


@dataclass(frozen=True)
class ValueColumns:
    """Rows of (run, sample, value): ``run[i]`` indexes ``run_ids``, ``sample[i]`` indexes ``sample_ids``; one row
    per (run, sample), in the order of the mapping or query they came from."""

    run_ids: list[str]
    sample_ids: list[str]
    run: np.ndarray  # int64 codes into run_ids
    sample: np.ndarray  # int64 codes into sample_ids
    value: np.ndarray  # float64

    def __len__(self) -> int:
        return len(self.value)

    # -- making them ---------------------------------------------------------------------------------------------
    @classmethod
    def empty(cls) -> ValueColumns:
        """No rows."""
        return cls([], [], np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float64))

    @classmethod
    def from_mapping(cls, values: Mapping[tuple[str, str], float]) -> ValueColumns:
        import pyarrow as pa

        n = len(values)
        if not n:
            return cls.empty()
        runs, samples = list(map(itemgetter(0), values)), list(map(itemgetter(1), values))
        try:  # the ids encoded by Arrow, in the order they first come (as a dict's keys)
            r = pa.array(runs, type=pa.string()).dictionary_encode()
            s = pa.array(samples, type=pa.string()).dictionary_encode()
        except (pa.ArrowException, TypeError):  # ids that are not text
            run_codes: dict[str, int] = {}
            sample_codes: dict[str, int] = {}
            run = np.fromiter((run_codes.setdefault(x, len(run_codes)) for x in runs), dtype=np.int64, count=n)
            sample = np.fromiter((sample_codes.setdefault(x, len(sample_codes)) for x in samples), dtype=np.int64,
                                 count=n)
            return cls(list(run_codes), list(sample_codes), run, sample,
                       np.fromiter(values.values(), dtype=np.float64, count=n))
        return cls(r.dictionary.to_pylist(), s.dictionary.to_pylist(), r.indices.to_numpy().astype(np.int64),
                   s.indices.to_numpy().astype(np.int64), np.fromiter(values.values(), dtype=np.float64, count=n))

    @classmethod
    def of(cls, values: Mapping[tuple[str, str], float] | ValueColumns) -> ValueColumns:
        return values if isinstance(values, ValueColumns) else cls.from_mapping(values)

    @classmethod
    def from_arrow(cls, table: Any, runs: Sequence[str] | None = None) -> ValueColumns:
        """The rows of an Arrow table whose first three columns are run_id, sample_id and value (rows without a
        value left out, and with `runs` those of other runs), as ``{(str(run_id), str(sample_id)): float(value)}``
        of its rows would hold them (a (run, sample) given twice: its first place, its last value)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if runs is not None and table.num_rows:
            wanted = pa.array(list(dict.fromkeys(runs)), type=pa.string())
            col = table.column(0)
            table = table.filter(pc.is_in(col if col.type == pa.string() else pc.cast(col, pa.string()),
                                          value_set=wanted))
        value_col = table.column(2)
        if value_col.null_count:
            table = table.filter(pc.is_valid(value_col))
            value_col = table.column(2)
        if table.num_rows == 0:  # none asked for, or none with a value
            return cls.empty()
        if value_col.type != pa.float64():
            value_col = pc.cast(value_col, pa.float64())

        def encode(col: Any) -> tuple[list[str], np.ndarray]:
            enc = col.combine_chunks().dictionary_encode()
            return [str(x) for x in enc.dictionary.to_pylist()], enc.indices.to_numpy().astype(np.int64)

        run_ids, run = encode(table.column(0))
        sample_ids, sample = encode(table.column(1))
        value = value_col.combine_chunks().to_numpy(zero_copy_only=False).astype(np.float64, copy=False)
        cols = cls(run_ids, sample_ids, run, sample, value)
        if len(run_ids) != len(set(run_ids)) or len(sample_ids) != len(set(sample_ids)) or cols._has_repeats():
            return cls.from_mapping(cols.to_dict())  # str() made two values one, or a pair came twice: as a dict
        return cols

    def _has_repeats(self) -> bool:
        key = self.run * max(1, len(self.sample_ids)) + self.sample
        if len(self.run_ids) * len(self.sample_ids) <= 4 * len(key) + 1_000_000:
            return bool(np.bincount(key).max() > 1)
        key = np.sort(key)
        return bool((key[1:] == key[:-1]).any())

    def to_dict(self) -> Values:
        runs, samples = self.run_ids, self.sample_ids
        return dict(zip(((runs[r], samples[s]) for r, s in zip(self.run.tolist(), self.sample.tolist())),
                        self.value.tolist()))

    # -- parts -----------------------------------------------------------------------------------------------------
    def _codes(self, run_ids: Iterable[str]) -> np.ndarray:
        where = {r: i for i, r in enumerate(self.run_ids)}
        return np.array([where[r] for r in dict.fromkeys(run_ids) if r in where], dtype=np.int64)

    def select(self, run_ids: Iterable[str]) -> ValueColumns:
        """The rows of `run_ids`, in their order (the codes and lists shared)."""
        wanted = np.zeros(len(self.run_ids), dtype=bool)
        wanted[self._codes(run_ids)] = True
        keep = wanted[self.run]
        if keep.all():
            return self
        return ValueColumns(self.run_ids, self.sample_ids, self.run[keep], self.sample[keep], self.value[keep])

    def sample_set(self) -> set[str]:
        """The samples with a row."""
        return {self.sample_ids[s] for s in self._present().tolist()}

    def _present(self) -> np.ndarray:
        """The sample codes with a row, in code order."""
        return np.flatnonzero(np.bincount(self.sample, minlength=len(self.sample_ids)))

    def _first_seen(self) -> np.ndarray:
        """The sample codes with a row, in the order of their first row."""
        order = np.argsort(self.sample, kind="stable")
        codes = self.sample[order]
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])  # each code's first row (stable: its earliest)
        return codes[starts][np.argsort(order[starts])]

    # -- statistics (each defined here once) -------------------------------------------------------------------
    def item_means(self) -> dict[str, float]:
        """Per sample, in the order of its first row: the mean of its values (summed in row order)."""
        if not len(self):
            return {}
        codes = self._first_seen()
        n = len(self.sample_ids)
        sums = np.bincount(self.sample, weights=self.value, minlength=n)
        counts = np.bincount(self.sample, minlength=n)
        means = sums[codes] / counts[codes]
        names = self.sample_ids
        return dict(zip([names[c] for c in codes.tolist()], means.tolist()))

    def is_binary(self) -> bool:
        v = self.value
        return bool(((v == 0.0) | (v == 1.0)).all())

    def run_sums(self, run_ids: Sequence[str]) -> list[tuple[float, int]]:
        """Per run of `run_ids`: the sum of its values (in row order) and their number."""
        n = len(self.run_ids)
        sums = np.bincount(self.run, weights=self.value, minlength=n).tolist()
        counts = np.bincount(self.run, minlength=n).tolist()
        where = {r: i for i, r in enumerate(self.run_ids)}
        return [(sums[where[r]], counts[where[r]]) if r in where else (0.0, 0) for r in run_ids]

    def n_samples(self) -> int:
        """Samples with a row."""
        return len(self._present())


__all__ = ["ValueColumns", "Values"]
