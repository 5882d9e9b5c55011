"""Flatten a SciExplore release into its raw tables (schemas/sciexplore.py) and read it back."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from agenthop.harness.benchmarks.sciexplore import NAME as BENCHMARK
from agenthop.harness.benchmarks.sciexplore.release import (
    Release,
    ReleaseError,
    Task,
    Where,
    load_release,
    parse_task,
    task_to_json,
)
from agenthop.schemas import sciexplore as sx
from agenthop.schemas.sample_hash import sample_hash

from ..conform import IngestError

FORMAT_VERSION = "1"


def read_release(root: Path) -> Release:
    try:
        return load_release(root)
    except ReleaseError as exc:
        raise IngestError(str(exc)) from None


def item_input(question: str, answer: str | None, aliases: Sequence[str] | None) -> tuple[str, list[str]]:
    """A task as other tools see it (docs/interchange.md#sample-hash): its question, and its answer with
    the aliases the release accepts as the references (none for the task types without one)."""
    refs = [answer] if answer else []
    refs += [a for a in aliases or () if a and a not in refs]
    return question, refs


def item_inputs(con: Any) -> dict[str, tuple[str, list[str]]]:
    """task_id -> (question, references) of every loaded SciExplore task."""
    rows = con.execute("SELECT task_id, question, answer, aliases FROM raw.sciexplore_tasks ORDER BY task_order").fetchall()
    return {tid: item_input(q, a, al) for tid, q, a, al in rows}


def release_tables(rel: Release, now: datetime | None = None) -> dict[str, pa.Table]:
    now = now or datetime.now(timezone.utc)
    tasks, refs, cells = [], [], []
    for order, t in enumerate(rel.tasks):
        tasks.append({
            "task_id": t.id, "type": t.type, "domain": t.domain, "question": t.question, "answer": t.answer,
            "aliases": list(t.aliases) if t.type in ("T1", "T2") else None, "hops": t.hops,
            "databases": list(t.databases) if t.type == "T1" else None, "year": t.year, "paragraph": t.paragraph,
            "columns": list(t.columns) if t.type == "T4" else None, "primary_key": t.primary_key,
            "task_order": order, "task_json": json.dumps(task_to_json(t), ensure_ascii=False),
            "sample_hash": sample_hash(*item_input(t.question, t.answer, t.aliases)),
        })
        for g in t.groups:
            for i, r in enumerate(g.references):
                refs.append({"task_id": t.id, "slot": g.slot, "ref_index": i, "title": r.title, "year": r.year,
                             "authors": list(r.authors), "venue": r.venue, "doi": r.doi})
        for ri, row in enumerate(t.rows):
            for ci, col in enumerate(t.columns):
                cells.append({"task_id": t.id, "row_index": ri, "row_key": row[t.primary_key], "column": col,
                              "column_index": ci, "value": row[col], "is_primary_key": col == t.primary_key})
    docs = [{"doc_id": d.id, "kind": d.kind, "database": d.database, "title": d.title, "url": d.url,
             "year": d.year, "n_chars": len(d.text)} for d in rel.documents]
    meta = [{"benchmark": BENCHMARK, "version": FORMAT_VERSION, "sha256": rel.sha256, "n_items": len(rel.tasks),
             "source": str(Path(rel.root).resolve()), "loaded_at": now}]
    rows = {"sciexplore_release": meta, "sciexplore_tasks": tasks, "sciexplore_t3_references": refs,
            "sciexplore_t4_cells": cells, "sciexplore_documents": docs}
    return {name: pa.Table.from_pylist(rows[name], schema=schema) for name, schema in sx.RELEASE_TABLES.items()}


def loaded_release(con: duckdb.DuckDBPyConnection) -> tuple[str, dict[str, Task]] | None:
    """(sha256, tasks by id) of the release in the warehouse, or None."""
    present = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'raw' AND table_name = 'sciexplore_tasks'"
    ).fetchall()[0][0]
    if not present:
        return None
    sha = con.execute("SELECT sha256 FROM raw.sciexplore_release").fetchall()
    if not sha:
        return None
    tasks: dict[str, Task] = {}
    for tid, js in con.execute("SELECT task_id, task_json FROM raw.sciexplore_tasks ORDER BY task_order").fetchall():
        tasks[tid] = parse_task(Where(Path("raw.sciexplore_tasks"), 0), json.loads(js))
    return sha[0][0], tasks
