"""``agenthop-ingest --inspect-log PATH``: Inspect AI logs -> validated Arrow tables per run.

Each log file is read (:mod:`inspect_read`), mapped (:mod:`inspect_map`) and turned into one
:class:`RunData` per epoch; the ingest transaction then writes them like any other run. A log's
content identity is the SHA-256 of its bytes (with the chosen primary score): loading an unchanged
log again changes nothing, a log that grew (still being written) replaces its earlier version.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from agenthop.ingest.conform import IngestError, conform
from agenthop.ingest.quality import Segments
from agenthop.ingest.runs import RunData
from agenthop.schemas import trajectory as tschema
from agenthop.schemas.evolution import added_later
from agenthop.schemas.sample_hash import references, sample_hash

from . import inspect_map, inspect_metrics, inspect_read
from .inspect_bounds import BoundError, ImportBudget, limits_from_env

KIND = "inspect-log"

#: The items an Inspect log carries (its samples' id, input, target, metadata).
ITEMS = pa.schema([
    pa.field("benchmark", pa.string(), nullable=False),
    pa.field("sample_id", pa.string(), nullable=False),
    pa.field("input", pa.string()),
    pa.field("target", pa.string()),
    pa.field("metadata_json", pa.string()),
    pa.field("item_order", pa.int32(), nullable=False),
    # added later: optional on read (docs/interchange.md#sample-hash); EEE and ATIF items share the table
    added_later(pa.field("sample_hash", pa.string())),
])


def table_schema(name: str) -> pa.Schema:
    """The schema an Inspect run's ``name`` table is built with."""
    return tschema.RUN_TABLES[name]


RUN_TABLE_NAMES = ("runs", "trajectories", "turns", "tool_calls", "messages", "scores")
#: the tables with rows per sample (mapped in batches, docs/inspect.md#memory)
SAMPLE_TABLE_NAMES = RUN_TABLE_NAMES[1:]


def run_tables(run: inspect_map.RunRows, where: str = "",
               batches: dict[str, list[pa.Table]] | None = None) -> dict[str, pa.Table]:
    """The run's tables: the Arrow ``batches`` taken out of it while mapping (:class:`Batches`),
    then the rows still in it."""
    rows: dict[str, list[dict[str, Any]]] = {
        "runs": [run.runs], "trajectories": run.trajectories, "turns": run.turns,
        "tool_calls": run.tool_calls, "messages": run.messages, "scores": run.scores,
    }
    out = {}
    for name in RUN_TABLE_NAMES:
        schema = table_schema(name)
        parts = [*(batches or {}).get(name, []), _table(name, rows[name], schema, where)]
        out[name] = parts[0] if len(parts) == 1 else pa.concat_tables(parts)
    return out


#: ``Batches``' sink: (run, its batch tables, where they came from) -> None. It is handed each batch's
#: rows of a run as they are mapped (docs/inspect.md#memory) and may write them at once.
Sink = Callable[["StreamedBatch"], None]


@dataclass
class StreamedBatch:
    """One batch of a run's per-sample rows handed to a sink, with the run's row as it will be
    written (its ``config_json`` and benchmark hash are only known at the end of the log)."""

    run_id: str
    source: str
    where: str
    partial: bool
    tables: dict[str, pa.Table]
    #: ``runs`` as a one-row table: the provisional row (for the rules that join it)
    runs: pa.Table


class Batches:
    """Takes each run's per-sample rows out of it as Arrow tables while the log is mapped
    (``inspect_map.map_log``'s ``on_batch``): the dicts of at most one batch of samples exist at a
    time. Without a ``sink`` the tables are kept (Arrow holds a row in a fraction of the memory of its
    Python dicts); with one, each batch goes to the sink and only its row counts are kept, so the
    import's memory does not grow with the log. Runs in ``skip`` (loaded before, unchanged) are
    mapped but not kept."""

    def __init__(self, where: str, sink: Sink | None = None, header: dict[str, Any] | None = None,
                 complete: bool = True, skip: frozenset[str] = frozenset()) -> None:
        self.where = where
        self.sink, self.header, self.complete, self.skip = sink, header, complete, skip
        self.tables: dict[str, dict[str, list[pa.Table]]] = {}
        #: rows handed to the sink per run and table
        self.counts: dict[str, dict[str, int]] = {}
        #: each run's score rows, kept as dicts too (the first of each scorer, key and kind of value,
        #: which is all the metric catalogue reads: :func:`_keep_score`)
        self.scores: dict[str, list[dict[str, Any]]] = {}
        self._seen_scores: dict[str, set[tuple[str, str, Any]]] = {}
        self._runs_rows: dict[str, pa.Table] = {}

    def __call__(self, run: inspect_map.RunRows) -> None:
        kept, seen = self.scores.setdefault(run.run_id, []), self._seen_scores.setdefault(run.run_id, set())
        for row in run.scores:
            kind = row["value_num"] if row["value_num"] in (None, 0.0, 1.0) else "number"
            if (row["scorer"], row["key"], kind) not in seen:
                seen.add((row["scorer"], row["key"], kind))
                kept.append(row)
        where = f"{self.where} (epoch {run.epoch})"
        batch = {}
        for name in SAMPLE_TABLE_NAMES:
            rows = getattr(run, name)
            if rows:
                if run.run_id not in self.skip:
                    batch[name] = _table(name, rows, table_schema(name), where)
                rows.clear()
        if not batch:
            return
        if self.sink is None:
            mine = self.tables.setdefault(run.run_id, {name: [] for name in SAMPLE_TABLE_NAMES})
            for name, table in batch.items():
                mine[name].append(table)
            return
        counts = self.counts.setdefault(run.run_id, dict.fromkeys(SAMPLE_TABLE_NAMES, 0))
        for name, table in batch.items():
            counts[name] += table.num_rows
        self.sink(StreamedBatch(run.run_id, self.where, where, not self.complete, batch, self._runs_row(run, where)))

    def _runs_row(self, run: inspect_map.RunRows, where: str) -> pa.Table:
        if run.run_id not in self._runs_rows:
            assert self.header is not None, "a sink needs the log header"
            row = inspect_map.runs_row(self.header, self.where, run.epoch, "", self.complete)
            row["config_json"] = "{}"
            table = _table("runs", [row], table_schema("runs"), where)
            self._runs_rows[run.run_id] = conform(table, table_schema("runs"), f"{where} runs")
        return self._runs_rows[run.run_id]

    def of(self, run_id: str) -> dict[str, list[pa.Table]]:
        return self.tables.pop(run_id, {})


_ARROW_ERRORS = (pa.ArrowException, OverflowError, UnicodeEncodeError, TypeError, ValueError)


def _table(name: str, rows: list[dict[str, Any]], schema: pa.Schema, where: str) -> pa.Table:
    """The rows as an Arrow table; a value its column cannot hold is an IngestError naming the sample
    and the field (the checks before mapping should leave none)."""
    try:  # column by column: fewer lookups than row by row (a key a row lacks is null in both)
        return pa.Table.from_pydict({col: [row.get(col) for row in rows] for col in schema.names}, schema=schema)
    except _ARROW_ERRORS as exc:
        for row in rows:
            for col, value in row.items():
                try:
                    pa.array([value], schema.field(col).type)
                except _ARROW_ERRORS as err:
                    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
                    who = f"sample {row['sample_id']!r}" if "sample_id" in row else "the log header"
                    raise IngestError(f"{where}: {who}: {name}.{col} is {shown}, which the column cannot hold "
                                      f"({type(err).__name__})") from None
        raise IngestError(f"{where}: {name} cannot be stored ({type(exc).__name__}: {exc})") from None


def items_table(mapped: inspect_map.MappedLog) -> pa.Table:
    rows = [{**item, "benchmark": mapped.benchmark, "item_order": i,
             "sample_hash": sample_hash(item["input"] or "", references(item["target"]))}
            for i, item in enumerate(mapped.items)]
    return pa.Table.from_pylist(rows, schema=ITEMS)


@dataclass
class LogTables:
    """One log read and mapped: its runs (as RunData) and the benchmark its items make."""

    path: Path
    benchmark: str
    benchmark_sha256: str
    items: pa.Table | None
    runs: list[RunData]
    notes: list[str]
    #: its rows of the metric catalogue (``raw.metric_defs``; none for a log loaded before, unchanged)
    metric_defs: list[dict[str, Any]] = field(default_factory=list)


def content_sha256(path: Path, score: str | None) -> str:
    h = hashlib.sha256(inspect_read.file_sha256(path).encode())
    h.update(b"\0" + (score or "").encode())
    return h.hexdigest()


def _unchanged(info: inspect_read.LogInfo, sha: str, loaded: dict[str, str]) -> LogTables | None:
    """The log's runs, not read, when every one of them is in the warehouse with this content."""
    eval_id = info.header["eval"].get("eval_id")
    epochs = sorted({epoch for _, epoch in info.sample_keys})
    if not epochs and info.complete:  # Inspect's API reports no sample keys: the epochs the eval ran
        config = info.header["eval"].get("config")
        n = config.get("epochs") if isinstance(config, dict) else None
        epochs = list(range(1, n + 1)) if isinstance(n, int) and not isinstance(n, bool) else []
    if not eval_id or not epochs:
        return None
    run_ids = [inspect_map.run_id_of(str(eval_id), e) for e in epochs]
    if any(loaded.get(r) != sha for r in run_ids):
        return None
    benchmark = inspect_map.benchmark_of(info.header)
    runs = [RunData(KIND, str(info.path), r, sha, not info.complete, "") for r in run_ids]
    return LogTables(info.path, benchmark, "", None, runs, [])


def read_log(path: Path, score: str | None = None, reader: str = "auto",
             loaded_hashes: dict[str, str] | None = None, batch: int | None = None,
             budget: ImportBudget | None = None, sink: Sink | None = None,
             before_samples: Callable[[inspect_read.LogInfo, list[str]], None] | None = None) -> LogTables:
    """Read, map and conform one log, its samples mapped ``batch`` at a time into Arrow; IngestError
    names the file and the reason. A log whose samples would take the ingest past ``budget`` is
    refused before they are read (docs/inspect.md#memory).

    With a ``sink``, each batch of a changed run's rows goes to it as it is mapped
    (:class:`Batches`); the run's RunData then holds only its ``runs`` row, its ``counts`` all its rows.
    ``before_samples`` is called with the log's info and the ids of the runs it will write, before
    any sample is read."""
    path = path.resolve()
    sha = content_sha256(path, score)
    loaded = loaded_hashes or {}
    if sha in loaded.values() and path.suffix == ".eval":  # these bytes were loaded: maybe all its runs still are
        header = inspect_read.finished_header(path)
        unchanged = _unchanged(inspect_read.LogInfo(path, header, True), sha, loaded) if header else None
        if unchanged is not None:
            return unchanged
    log = inspect_read.open_log(path, reader)
    try:
        info = log.info()
        unchanged = _unchanged(info, sha, loaded)
        if unchanged is not None:
            return unchanged
        if sink is None or not log.streams():  # a log read whole (.json) is held while it is mapped
            try:
                (budget or ImportBudget(limits_from_env())).take(log.sample_bytes())
            except BoundError as exc:
                raise IngestError(f"{path}: {exc}") from None
        skip = frozenset(run_id for run_id in _run_ids(info) if loaded.get(run_id) == sha)
        if before_samples is not None:
            before_samples(info, [r for r in _run_ids(info) if r not in skip])
        batches = Batches(str(path), sink, info.header, info.complete, skip)
        try:
            mapped = inspect_map.map_log(info.header, inspect_read.mapping_samples(log, reader), str(path), info.complete, score,
                                         on_batch=batches, batch=batch or inspect_map.BATCH)
        except inspect_map.ScoreChoiceError as exc:
            raise IngestError(f"{path}: {exc}") from None
        except ValueError as exc:
            raise IngestError(f"{path}: {exc}") from None
    finally:
        log.close()
    if not mapped.runs:
        raise IngestError(f"{path}: the log holds no samples yet; nothing to load")
    runs = []
    notes = []
    for run in mapped.runs:
        notes += run.notes
        if loaded.get(run.run_id) == sha:
            runs.append(RunData(KIND, str(path), run.run_id, sha, not info.complete, mapped.benchmark_sha256))
            continue
        where = f"{path} (epoch {run.epoch})"
        tables = run_tables(run, where, batches.of(run.run_id))
        tables = {name: conform(t, table_schema(name), f"{where} {name}") for name, t in tables.items()}
        streamed = batches.counts.get(run.run_id, {})
        if sink is not None:  # the rows went to the sink: only the runs row is left to write
            tables = {"runs": tables["runs"]}
        counts = {name: t.num_rows + streamed.get(name, 0) for name, t in tables.items()}
        counts.update({name: n for name, n in streamed.items() if name not in counts})
        segments = {name: Segments() for name in tables}
        for name, t in tables.items():
            segments[name].add(str(path), t.num_rows, "json")
        runs.append(RunData(
            KIND, str(path), run.run_id, sha, not info.complete, mapped.benchmark_sha256, tables,
            {name: counts[name] for name in RUN_TABLE_NAMES if name in counts}, segments,
        ))
    items = items_table(mapped) if mapped.items else None
    scores = [row for run in mapped.runs for row in batches.scores.get(run.run_id, [])]
    return LogTables(path, mapped.benchmark, mapped.benchmark_sha256, items, runs, notes,
                     inspect_metrics.metric_rows(mapped, score, scores))


def _run_ids(info: inspect_read.LogInfo) -> list[str]:
    """The runs the log's samples make (one per epoch present), before they are read."""
    eval_id = str(info.header["eval"].get("eval_id"))
    return [inspect_map.run_id_of(eval_id, e) for e in sorted({epoch for _, epoch in info.sample_keys})]


def discover(paths: Sequence[Path]) -> list[Path]:
    seen: dict[Path, None] = {}
    for p in paths:
        for f in inspect_read.discover(Path(p)):
            seen.setdefault(f.resolve(), None)
    return list(seen)
