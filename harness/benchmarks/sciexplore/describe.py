"""Statistics of a SciExplore release for ``agenthop-harness describe-benchmark`` (its ``describe`` hook):
tasks by type and domain, T1 hops and databases, T2 years, T3 citation slots, T4 tables, the corpus."""

from __future__ import annotations

from collections import Counter
from typing import Any

from . import TASK_TYPES
from .release import CORPUS_FILE, DOCUMENT_KINDS, Release


def _counts(values: list[Any], order: tuple[Any, ...] = ()) -> dict[str, int]:
    """Counts by value: the ``order`` first, then the rest sorted (None as "(none)")."""
    c = Counter("(none)" if v is None else str(v) for v in values)
    keys = [str(k) for k in order if str(k) in c] + sorted(k for k in c if k not in {str(o) for o in order})
    return {k: c[k] for k in keys}


def describe(release: Release, limit: int | None = None) -> dict[str, Any]:
    """The statistics of ``release`` (its first ``limit`` tasks) as a JSON-serialisable dict."""
    tasks = release.tasks[:limit] if limit is not None else release.tasks
    t1 = [t for t in tasks if t.type == "T1"]
    t2 = [t for t in tasks if t.type == "T2"]
    t3 = [t for t in tasks if t.type == "T3"]
    t4 = [t for t in tasks if t.type == "T4"]
    years = [t.year for t in t2 if t.year is not None]
    return {
        "benchmark": release.benchmark,
        "root": str(release.root),
        "benchmark_sha256": release.sha256,
        "tasks": len(tasks),
        "task_types": _counts([t.type for t in tasks], TASK_TYPES),
        "domains": _counts([t.domain for t in tasks]),
        "t1_hops": _counts(sorted(t.hops for t in t1 if t.hops is not None)),
        "t1_databases": _counts([db for t in t1 for db in t.databases]),
        "t2_years": {"min": min(years), "max": max(years)} if years else {"min": None, "max": None},
        "t3_slots": sum(len(t.groups) for t in t3),
        "t3_references": sum(len(g.references) for t in t3 for g in t.groups),
        "t4_rows": sum(len(t.rows) for t in t4),
        "t4_cells": sum(len(t.rows) * len(t.columns) for t in t4),
        "documents": len(release.documents),
        "document_kinds": _counts([d.kind for d in release.documents], DOCUMENT_KINDS),
        "document_databases": _counts([d.database for d in release.documents if d.database is not None]),
    }


def _fmt(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "-"


def format_description(d: dict[str, Any]) -> str:
    """Aligned text of :func:`describe`'s dict."""
    years = d["t2_years"]
    return "\n".join([
        f"release          {d['root']}  (SciExplore, benchmark_sha256 {d['benchmark_sha256']})",
        f"tasks            {d['tasks']}: {_fmt(d['task_types'])}",
        f"domains          {_fmt(d['domains'])}",
        f"T1 hops          {', '.join(f'{h} hops {n}' for h, n in d['t1_hops'].items()) or '-'}",
        f"T1 databases     {_fmt(d['t1_databases'])}",
        f"T2 years         {years['min']}-{years['max']}" if years["min"] is not None else "T2 years         -",
        f"T3 citations     {d['t3_slots']} slots, {d['t3_references']} references",
        f"T4 tables        {d['t4_rows']} rows, {d['t4_cells']} cells",
        f"corpus           {d['documents']} documents: {_fmt(d['document_kinds'])}",
        f"corpus records   {_fmt(d['document_databases'])}",
    ])


def warnings(release: Release) -> list[str]:
    """What a user should know before running on the release."""
    if not release.documents:
        return [f"{release.root}: no {CORPUS_FILE}: the offline search tools have nothing to search "
                "(runs with --search native, or imported responses, do not need it)"]
    return []
