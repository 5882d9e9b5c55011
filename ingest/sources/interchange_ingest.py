"""The interchange part of one ingest (``--eee``, ``--atif``; docs/interchange.md#importing): read and
check every file before the transaction, then, inside it, the items and the reported results.

The runs go through the shared run path (validated, key-checked, data-quality checked, written
with the others); their items join the items of imported logs (``raw.inspect_items``, each with its
``sample_hash``), their metrics the catalogue, and aggregate results without instances go to
``raw.reported_results``. A file loaded before with the same content is not read again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from agenthop.ingest import ddl
from agenthop.ingest.conform import IngestError, conform
from agenthop.ingest.progress import Progress
from agenthop.ingest.quality import Segments
from agenthop.ingest.runs import RunData
from agenthop.schemas import interchange as ischema
from agenthop.schemas import trajectory as tschema

from . import inspect_import, inspect_map


@dataclass
class Format:
    kind: str  # ingest_log kind and runs.backend
    discover: Callable[[Sequence[Path]], list[Path]]
    read: Callable[[Path], Any]  # one file read and checked
    map: Callable[[list[Any]], Any]  # every file read -> an eee_map.MappedFile (runs, items, metrics, reported)


@dataclass
class InterchangePlan:
    datas: list[RunData] = field(default_factory=list)
    items: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    metric_defs: list[dict[str, Any]] = field(default_factory=list)
    reported: list[dict[str, Any]] = field(default_factory=list)


def formats() -> dict[str, Format]:
    from . import atif_map, atif_read, eee_map, eee_read

    return {
        "eee": Format("eee", eee_read.discover, eee_read.read_file, eee_map.map_files),
        "atif": Format("atif", atif_read.discover, atif_read.read_file, atif_map.map_files),
    }


def _tables(mr: Any, where: str) -> dict[str, pa.Table]:
    out = {}
    for name, schema in tschema.RUN_TABLES.items():
        rows = mr.tables.get(name, [])
        if name in ("messages", "scores") and not rows:
            continue
        try:
            table = pa.Table.from_pylist(rows, schema=schema)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise IngestError(f"{where}: {name} cannot be stored ({type(exc).__name__}: {exc})") from None
        out[name] = conform(table, schema, f"{where} {name}")
    return out


def prepare(paths: dict[str, Sequence[Path]], loaded_hashes: dict[str, str], progress: Progress | None = None,
            ) -> InterchangePlan:
    """Read, check and map every file (nothing is written)."""
    progress = progress or Progress(quiet=True)
    plan = InterchangePlan()
    fmts = formats()
    for kind, given in paths.items():
        if not given:
            continue
        fmt = fmts[kind]
        reads = [fmt.read(p) for p in progress.iterate(fmt.discover(given), f"reading {kind.upper()} files", "file")]
        mapped = fmt.map(reads)
        plan.metric_defs += mapped.metric_defs
        plan.reported += mapped.reported
        for bench, rows in mapped.items.items():
            plan.items.setdefault(bench, []).extend(rows)
        for mr in mapped.runs:
            sha = mr.content_sha256
            if loaded_hashes.get(mr.run_id) == sha:
                plan.datas.append(RunData(kind, mr.source, mr.run_id, sha, False, ""))
                continue
            bench_sha = _items_sha(mr.benchmark, mapped.items.get(mr.benchmark, []))
            mr.tables["runs"][0]["benchmark_sha256"] = bench_sha
            tables = _tables(mr, mr.source)
            segments = {name: Segments() for name in tables}
            for name, t in tables.items():
                segments[name].add(mr.source, t.num_rows, "json")
            plan.datas.append(RunData(kind, mr.source, mr.run_id, sha, False, bench_sha, tables,
                                      {k: v.num_rows for k, v in tables.items()}, segments))
    return plan


def _items_sha(benchmark: str, items: list[dict[str, Any]]) -> str:
    return inspect_map.items_sha256(benchmark, [{**i, "metadata_json": i.get("metadata_json")} for i in items])


def merge_items(plan: InterchangePlan, loaded: Callable[[str], dict[str, dict]], force: bool) -> dict[str, pa.Table]:
    """benchmark -> every item it holds after this ingest (the loaded ones and the files' ones); an item
    that comes back with another input or references is refused unless ``force``."""
    out = {}
    for bench, rows in plan.items.items():
        items = dict(loaded(bench))
        changed = False
        for row in rows:
            old = items.get(row["sample_id"])
            if old is not None and (old["input"], old["target"]) != (row["input"], row["target"]):
                if not force:
                    raise IngestError(f"sample {row['sample_id']!r} of {bench} has another input or reference "
                                      f"than the item loaded before; pass --force to replace it")
                old = None
            if old is None:
                order = items[row["sample_id"]]["item_order"] if row["sample_id"] in items else len(items)
                items[row["sample_id"]] = {**row, "item_order": order}
                changed = True
        if changed:
            ordered = sorted(items.values(), key=lambda r: r["item_order"])
            out[bench] = pa.Table.from_pylist(ordered, schema=inspect_import.ITEMS)
    return out


def write_reported(con: duckdb.DuckDBPyConnection, plan: InterchangePlan, now: Any) -> int:
    """Inside the transaction: the reported results, replacing earlier rows of the same evaluation."""
    if not plan.reported:
        return 0
    con.execute(ddl.create_table_sql(ischema.REPORTED_TABLE, ischema.REPORTED_RESULTS)).fetchall()
    rows = [{**r, "loaded_at": now} for r in plan.reported]
    table = pa.Table.from_pylist(rows, schema=ischema.REPORTED_RESULTS)
    con.register("__reported", table)
    try:
        con.execute(f"DELETE FROM {ddl.RAW}.{ischema.REPORTED_TABLE} WHERE (evaluation_id, result_id) IN "
                    "(SELECT (evaluation_id, result_id) FROM __reported)").fetchall()
        con.execute(f"INSERT INTO {ddl.RAW}.{ischema.REPORTED_TABLE} BY NAME SELECT * FROM __reported").fetchall()
    finally:
        con.unregister("__reported")
    return table.num_rows


def reported_by_source(plan: InterchangePlan) -> dict[str, int]:
    """file -> reported results it loaded (for the ingest log)."""
    out: dict[str, int] = {}
    for r in plan.reported:
        out[r["source"]] = out.get(r["source"], 0) + 1
    return out
