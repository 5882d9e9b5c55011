"""What an export reads of one warehouse run (docs/interchange.md): its identity from the shared run
model, its metrics from the metric marts, and its trajectories, turns, tool calls and scores as loaded.

Every run of any benchmark has a row in the run model; runs a benchmark imports without trajectories
(SciExplore's responses files) export their metric values alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthop.harness import benchmarks
from agenthop.harness.errors import AgentHopError
from agenthop.schemas.sample_hash import references

from ..warehouse import Warehouse

#: The run tables an export reads per attempt, keyed by (sample_id, attempt), in their key order.
_DETAIL = {"turns": "turn", "tool_calls": "seq", "messages": "idx"}


@dataclass
class RunExport:
    """One run as the exporters see it (plain rows; no warehouse access after :func:`read_runs`)."""

    run: dict[str, Any]  # int_core_runs row, with raw.runs' columns when the run has one
    metrics: list[dict[str, Any]]  # metric_defs rows of its benchmark with a value in this run
    values: dict[tuple[str, str], float | None]  # (sample_id, metric) -> value, final attempts
    trajectories: list[dict[str, Any]]  # every attempt, in (sample_id, attempt) order
    details: dict[str, dict[tuple[str, int], list[dict[str, Any]]]]  # table -> (sample, attempt) -> rows
    scores: dict[str, list[dict[str, Any]]]  # sample_id -> raw.scores rows
    inputs: Mapping[str, tuple[str, list[str]]]  # sample_id -> (input, references)
    tools: list[str] = field(default_factory=list)  # tool names the run's agent had

    @property
    def run_id(self) -> str:
        return str(self.run["run_id"])

    @property
    def benchmark(self) -> str:
        return str(self.run["benchmark"])

    def samples(self) -> list[str]:
        """Every sample with a final value or a trajectory, in first-seen order."""
        seen: dict[str, None] = {}
        for t in self.trajectories:
            seen.setdefault(t["sample_id"], None)
        for sid, _ in self.values:
            seen.setdefault(sid, None)
        return list(seen)


def _rows(wh: Warehouse, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    cur = wh.con.execute(sql, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def _intermediate(wh: Warehouse) -> str:
    """The schema dbt built the shared run model in (``intermediate``; ``main_intermediate`` under dbt's default naming)."""
    for schema in ("intermediate", "main_intermediate"):
        if wh.has_table(schema, "int_core_runs"):
            return schema
    raise AgentHopError(f"warehouse {wh.path} has no built marts: run dbt build (or agenthop-ingest --build) "
                        "before an export")


def select_runs(wh: Warehouse, run_ids: Sequence[str] = (), models: Sequence[str] = (),
                benchmark: str | None = None) -> list[str]:
    """The run ids an export covers: the ones named, every run of the models named, every run of the
    benchmark, or (none of those) every run; an unknown name is a user error."""
    schema = _intermediate(wh)
    rows = _rows(wh, f"SELECT run_id, model, benchmark FROM {schema}.int_core_runs ORDER BY benchmark, model, run_id")
    if benchmark is not None:
        rows = [r for r in rows if r["benchmark"] == benchmark]
        if not rows:
            raise AgentHopError(f"no runs of benchmark {benchmark!r} in {wh.path}")
    if run_ids:
        known = {r["run_id"] for r in rows}
        missing = [r for r in run_ids if r not in known]
        if missing:
            raise AgentHopError(f"unknown run id {missing[0]!r} in {wh.path}")
        return list(dict.fromkeys(run_ids))
    if models:
        known = {r["model"] for r in rows}
        missing = [m for m in models if m not in known]
        if missing:
            raise AgentHopError(f"no runs of model {missing[0]!r} in {wh.path}")
        return [r["run_id"] for r in rows if r["model"] in set(models)]
    return [r["run_id"] for r in rows]


def item_inputs(wh: Warehouse, benchmark: str) -> Mapping[str, tuple[str, list[str]]]:
    """sample_id -> (input, references) of the benchmark's items: its own hook, else the items an
    imported log or file carried (``raw.inspect_items``), else none."""
    try:
        hook = benchmarks.get(benchmark).item_inputs
    except AgentHopError:
        hook = None
    if hook is not None:
        return hook(wh.con)
    if not wh.has_table("raw", "inspect_items"):
        return {}
    rows = wh.con.execute("SELECT sample_id, input, target FROM raw.inspect_items WHERE benchmark = ? "
                          "ORDER BY item_order", [benchmark]).fetchall()
    return {sid: (inp or "", references(target)) for sid, inp, target in rows}


def _tools(wh: Warehouse, benchmark: str, used: list[dict[str, Any]]) -> list[str]:
    try:
        names = list(benchmarks.get(benchmark).tool_names)
    except AgentHopError:
        names = []
    for row in used:
        if row["tool"] not in names:
            names.append(row["tool"])
    return names


def read_runs(wh: Warehouse, run_ids: Sequence[str]) -> list[RunExport]:
    """Every named run as a :class:`RunExport` (in the order given)."""
    schema = _intermediate(wh)
    out = []
    inputs: dict[str, Mapping[str, tuple[str, list[str]]]] = {}
    defs: dict[str, list[dict[str, Any]]] = {}
    for run_id in run_ids:
        (run,) = _rows(wh, f"SELECT * FROM {schema}.int_core_runs WHERE run_id = ?", [run_id])
        raw = _rows(wh, "SELECT * FROM raw.runs WHERE run_id = ?", [run_id])
        if raw:
            run = {**raw[0], **run}
        bench = run["benchmark"]
        if bench not in defs:
            defs[bench] = _rows(wh, "SELECT * FROM main.metric_defs WHERE benchmark = ? ORDER BY NOT is_primary, metric",
                                [bench])
            inputs[bench] = item_inputs(wh, bench)
        values = {(r["sample_id"], r["metric"]): r["value"] for r in _rows(
            wh, "SELECT sample_id, metric, value FROM main.item_metric_values WHERE run_id = ? ORDER BY sample_id, metric",
            [run_id])}
        present = {m for _, m in values}
        metrics = [d for d in defs[bench] if d["metric"] in present]
        trajectories = _rows(wh, "SELECT * FROM raw.trajectories WHERE run_id = ? ORDER BY sample_id, attempt", [run_id])
        details: dict[str, dict[tuple[str, int], list[dict[str, Any]]]] = {}
        for table, order in _DETAIL.items():
            by: dict[tuple[str, int], list[dict[str, Any]]] = {}
            if wh.has_table("raw", table):
                for row in _rows(wh, f"SELECT * FROM raw.{table} WHERE run_id = ? ORDER BY sample_id, attempt, {order}",
                                 [run_id]):
                    by.setdefault((row["sample_id"], row["attempt"]), []).append(row)
            details[table] = by
        scores: dict[str, list[dict[str, Any]]] = {}
        if wh.has_table("raw", "scores"):
            for row in _rows(wh, "SELECT * FROM raw.scores WHERE run_id = ? ORDER BY sample_id, scorer, key", [run_id]):
                scores.setdefault(row["sample_id"], []).append(row)
        used = [r for rows in details["tool_calls"].values() for r in rows]
        out.append(RunExport(run=run, metrics=metrics, values=values, trajectories=trajectories, details=details,
                             scores=scores, inputs=inputs[bench], tools=_tools(wh, bench, used)))
    return out


def plain(value: Any) -> Any:
    """A warehouse value as JSON can hold it (timestamps as ISO text)."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def row_json(row: Mapping[str, Any], drop: Sequence[str] = ("run_id", "sample_id", "attempt")) -> dict[str, Any]:
    return {k: plain(v) for k, v in row.items() if k not in drop}


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
