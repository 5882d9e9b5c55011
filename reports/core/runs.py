"""The runs of every benchmark as the shared `run_summary` mart lists them: loading, display labels,
picking runs by model or run id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthop.harness.errors import AgentHopError

from ..warehouse import Warehouse
from . import marts, registry


@dataclass
class RunInfo:
    """One run as the marts describe it (optional columns default to None)."""

    run_id: str
    model: str
    condition: str
    replicate: int
    backend: str | None = None
    family: str | None = None
    tier: str | None = None
    benchmark_sha256: str | None = None
    n_items: int | None = None
    is_simulated: bool | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    label: str = ""  # display name, unique within one report
    benchmark: str | None = None

    @property
    def simulated(self) -> bool:
        """The mart's is_simulated when it has it, else backend = 'sim' (docs/simulated_agents.md)."""
        if self.is_simulated is not None:
            return bool(self.is_simulated)
        return self.backend == "sim"

    @property
    def chart_label(self) -> str:
        """Label for chart axes/legends, where no HTML badge is possible."""
        return f"{self.label} [SIM]" if self.simulated else self.label


def label_runs(runs: Sequence[RunInfo]) -> None:
    """Give each run a display label: the model name, plus condition/replicate where needed."""
    by_model: dict[str, list[RunInfo]] = {}
    for r in runs:
        by_model.setdefault(r.model, []).append(r)
    for group in by_model.values():
        conds = {r.condition for r in group}
        for r in group:
            if len(group) == 1:
                r.label = r.model
            elif len(group) == len(conds) and all(conds):
                r.label = f"{r.model} · {r.condition}"
            else:  # the harness's replicates as "#N", Inspect's epochs as "epoch N"
                rep = registry.repeats_of(r.benchmark)
                which = f"#{r.replicate}" if rep.noun == "replicate" else rep.name(r)
                r.label = f"{r.model} · {r.condition} {which}" if r.condition else f"{r.model} · {which}"
    seen: dict[str, int] = {}
    for r in runs:  # still ambiguous (same model passed twice): fall back to the run id
        seen[r.label] = seen.get(r.label, 0) + 1
    ambiguous = {label for label, n in seen.items() if n > 1}
    for r in runs:
        if r.label in ambiguous:
            r.label = f"{r.label} ({r.run_id})"


def shared_runs(wh: Warehouse) -> list[RunInfo]:
    """Every run of every benchmark (run_summary), ordered by benchmark, model, condition, replicate."""
    marts.require_shared(wh)
    (n,) = wh.con.execute(f"SELECT count(*) FROM {marts.RUN_SUMMARY}").fetchone()  # type: ignore[misc]
    if n == 0:
        raise AgentHopError(
            f"warehouse {wh.path} is empty (run_summary has no runs): load runs with agenthop-ingest "
            "(--runs DIR, --inspect-log LOG, ...), then run dbt build")
    held = marts._columns(wh).get(marts.RUNS, ())
    source = "".join(f", r.{c}" for c in marts.RUN_SOURCE if c in held)  # an older build lacks some
    rows = wh.rows(
        f"""SELECT s.*, r.benchmark_sha256, r.family, r.tier{source}
            FROM {marts.RUN_SUMMARY} AS s LEFT JOIN {marts.RUNS} AS r USING (run_id)
            ORDER BY s.benchmark, s.model, s.condition, s.replicate, s.run_id""")
    return [
        RunInfo(
            run_id=str(r["run_id"]), model=str(r["model"]), condition=str(r.get("condition") or ""),
            replicate=int(r.get("replicate") or 0), backend=r.get("backend"), family=r.get("family"),
            tier=r.get("tier"), benchmark_sha256=r.get("benchmark_sha256"), n_items=r.get("n"),
            is_simulated=r.get("is_simulated"), summary=dict(r), benchmark=str(r["benchmark"]),
        )
        for r in rows
    ]


def benchmarks_held(wh: Warehouse) -> list[str]:
    """The benchmarks the warehouse holds runs of: those of run_summary (raw.runs before a dbt build),
    and those whose runs live in a raw table of their own, ``raw.<benchmark>_runs`` (a responses file)."""
    held: set[str] = set()
    if marts.has(wh, marts.RUN_SUMMARY):
        held |= {str(b) for (b,) in wh.con.execute(f"SELECT DISTINCT benchmark FROM {marts.RUN_SUMMARY}").fetchall()}
    tables = [t for (t,) in wh.con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'raw' "
        "AND table_catalog = current_database() AND (table_name = 'runs' OR table_name LIKE '%\\_runs' ESCAPE '\\')"
    ).fetchall()]
    for t in tables:
        if t == "runs":
            if not held:
                held |= {str(b) for (b,) in wh.con.execute("SELECT DISTINCT benchmark FROM raw.runs").fetchall()}
        elif wh.con.execute(f'SELECT count(*) FROM raw."{t}"').fetchone()[0]:  # type: ignore[index]
            held.add(t[: -len("_runs")])
    return sorted(held)


def require_benchmark(wh: Warehouse, benchmark: str, command: str) -> None:
    """A user error, in one line, when the warehouse holds no run of `benchmark`: it names the benchmark
    `command` covers and the benchmarks the warehouse holds (an empty warehouse is said to be empty)."""
    held = benchmarks_held(wh)
    if not held:
        raise AgentHopError(f"warehouse {wh.path} is empty (no runs loaded): load runs with agenthop-ingest "
                            "(--runs DIR, --inspect-log LOG, ...), then run dbt build")
    if benchmark not in held:
        raise AgentHopError(f"{command} covers benchmark {benchmark}, but warehouse {wh.path} holds runs of "
                            f"{', '.join(held)} only; for those use agenthop-report leaderboard, compare or reruns")


def _known(values: Sequence[str], limit: int = 40) -> str:
    vals = sorted(set(values))
    return ", ".join(vals[:limit]) + (f", … ({len(vals)} in all)" if len(vals) > limit else "")


def benchmark_conditions(benchmark: str | None) -> tuple[str, ...]:
    """The conditions a benchmark declares in the benchmark registry, the first its default; none for a
    benchmark without an entry there (imported tasks)."""
    from agenthop.harness import benchmarks

    if not benchmark or benchmark not in benchmarks.names():
        return ()
    return tuple(benchmarks.get(benchmark).conditions)


def default_condition(benchmark: str | None) -> str | None:
    """The condition a benchmark's runs are picked under by default (None: it has no conditions)."""
    conds = benchmark_conditions(benchmark)
    return conds[0] if conds else None


def in_condition(cands: Sequence[RunInfo], condition: str | None, model: str) -> list[RunInfo]:
    """The runs of `cands` (one model of one benchmark) under `condition`, None meaning the benchmark's
    default. A benchmark without conditions ignores it; with none asked for, a model without a run of the
    default condition falls back to its runs that carry none of the benchmark's conditions (imported
    runs: '' or an older warehouse's 'full')."""
    conds = benchmark_conditions(cands[0].benchmark) if cands else ()
    if not conds:
        return list(cands)
    wanted = condition or conds[0]
    mine = [r for r in cands if r.condition == wanted]
    if not mine and condition is None:
        mine = [r for r in cands if r.condition not in conds]
    if not mine:
        have = ", ".join(sorted({r.condition or "(none)" for r in cands}))
        raise AgentHopError(f"model {model!r} has no {wanted!r} run (it has: {have}); use --condition or --runs")
    return mine


def check_benchmark(runs: Sequence[RunInfo], benchmark: str | None) -> None:
    if benchmark is not None and benchmark not in {r.benchmark for r in runs}:
        raise AgentHopError(f"unknown benchmark {benchmark!r}; the warehouse holds runs of: "
                            f"{_known([str(r.benchmark) for r in runs])}")


def pick_runs(
    runs: Sequence[RunInfo],
    models: Sequence[str] | None = None,
    run_ids: Sequence[str] | None = None,
    condition: str | None = None,
    benchmark: str | None = None,
) -> list[RunInfo]:
    """The run picker (the only one): from `runs`, the runs named by run id, then by model (its run of
    `condition`, None: the benchmark's default, with the lowest replicate); each run at most once.

    A model that has runs in several benchmarks needs `benchmark` to say which."""
    check_benchmark(runs, benchmark)
    picked: list[RunInfo] = []
    by_id = {r.run_id: r for r in runs}
    for rid in run_ids or ():
        if rid not in by_id:
            raise AgentHopError(f"unknown run id {rid!r}; known run ids: {_known(list(by_id))}")
        picked.append(by_id[rid])
    for m in models or ():
        in_cond = in_condition(model_runs(runs, m, benchmark, ", or pass --runs"), condition, m)
        picked.append(min(in_cond, key=lambda r: (r.replicate, r.run_id)))
    seen: set[str] = set()
    for r in picked:
        if r.run_id in seen:
            if run_ids and r.run_id in run_ids:
                raise AgentHopError(f"run {r.run_id!r} is given twice; name different runs")
            raise AgentHopError(
                f"model {r.model!r} is given twice (both pick run {r.run_id!r}); to compare its "
                f"replicates pass --runs RUN_A,RUN_B, or use: agenthop-report reruns --model {r.model}")
        seen.add(r.run_id)
    return picked


def pick_groups(runs: Sequence[RunInfo], models: Sequence[str], condition: str | None = None,
                benchmark: str | None = None) -> list[list[RunInfo]]:
    """Per model, every run of its run group: its runs under `condition` (None: the benchmark's default),
    which differ only in replicate or epoch."""
    check_benchmark(runs, benchmark)
    if len(set(models)) < len(models):
        pick_runs(runs, models, None, condition, benchmark)  # the picker's own error for a model given twice
    return [sorted(in_condition(model_runs(runs, m, benchmark, ", or pass --runs"), condition, m),
                   key=lambda r: (r.replicate, r.run_id)) for m in models]


def select_runs(
    wh: Warehouse,
    models: Sequence[str] | None = None,
    run_ids: Sequence[str] | None = None,
    condition: str | None = None,
    benchmark: str | None = None,
) -> list[RunInfo]:
    """Runs of any benchmark (run_summary) named by run id, or by model (`pick_runs`)."""
    return pick_runs(shared_runs(wh), models, run_ids, condition, benchmark)


def one_benchmark(runs: Sequence[RunInfo], what: str) -> str:
    """The benchmark all `runs` belong to; a user error when they mix benchmarks (their items differ)."""
    benches = sorted({str(r.benchmark) for r in runs})
    if len(benches) != 1:
        detail = ", ".join(f"{r.run_id} ({r.benchmark})" for r in runs)
        raise AgentHopError(f"{what}: the runs belong to different benchmarks ({detail}); their items are not "
                            "the same, so pick runs of one benchmark")
    return benches[0]


def model_runs(runs: Sequence[RunInfo], model: str, benchmark: str | None = None, hint: str = "") -> list[RunInfo]:
    """Every run of `model` among `runs` (of `benchmark` when given; a model of several benchmarks needs it,
    the error ending in `hint`)."""
    mine = [r for r in runs if r.model == model and (benchmark is None or r.benchmark == benchmark)]
    if not mine:
        if benchmark is not None and any(r.model == model for r in runs):
            raise AgentHopError(f"model {model!r} has no runs of benchmark {benchmark!r}; it has runs of: "
                                f"{_known([str(r.benchmark) for r in runs if r.model == model])}")
        raise AgentHopError(f"unknown model {model!r}; known models: {_known([r.model for r in runs])}")
    benches = sorted({str(r.benchmark) for r in mine})
    if len(benches) > 1:
        raise AgentHopError(f"model {model!r} has runs of several benchmarks ({', '.join(benches)}); say which "
                            f"with --benchmark{hint}")
    return mine


def runs_of(wh: Warehouse, model: str, benchmark: str | None = None) -> list[RunInfo]:
    """Every run of `model` in run_summary (`model_runs`)."""
    return model_runs(shared_runs(wh), model, benchmark)
