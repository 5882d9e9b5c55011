"""Incremental builds at 95 runs (docs/ingest.md#incremental-builds), all ratios from one run of this.

On 95 runs of the 1,011-item benchmark (panels/paper19.yaml, 5 replicates), built once: one more run
is ingested and `dbt build` recomputes it (incremental), against `dbt build --full-refresh` of the same
96 runs; both minus dbt's fixed start-up (`dbt ls` of an empty selection). Both are the everyday build
(the default selector of selectors.yml: no unit tests); the same pair with the unit tests
(`--select fqn:*`) is measured after them and reported, not held to the target. And the ingest of that one
run into the 95-run warehouse against the same ingest into a warehouse holding only the benchmark.

Standalone: `.venv/bin/python bench/incremental.py [--work DIR] [--benchmark DIR] [--reuse]`; `--reuse`
keeps the runs and the ingested warehouses of an earlier run in the same --work (copies saved before
any dbt build) and measures only the builds, for quick iteration on the dbt project.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import StageResult, run_stage  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
#: targets: incremental dbt build / full-refresh build, ingest of one run / into the bare benchmark
MAX_DBT_RATIO = 0.4
MAX_INGEST_RATIO = 1.5


def _cli(name: str) -> str:
    return str(BIN / name)


def measure(work: Path, bench_dir: Path, env: dict[str, str], replicates: int = 5,
            reuse: bool = False) -> list[StageResult]:
    base, bare = work / "base.duckdb", work / "bare.duckdb"
    saved_base, saved_bare = work / "saved_base.duckdb", work / "saved_bare.duckdb"
    reuse = reuse and saved_base.exists() and saved_bare.exists()
    if work.exists() and not reuse:
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    panel = yaml.safe_load((REPO / "panels" / "paper19.yaml").read_text())
    for m in panel["models"]:
        m["replicates"] = replicates
    (work / "panel.yaml").write_text(yaml.safe_dump(panel, sort_keys=False))
    extra = dict(panel, models=[dict(panel["models"][0], replicates=replicates + 1)])
    (work / "panel_extra.yaml").write_text(yaml.safe_dump(extra, sort_keys=False))
    runs, extra_runs = work / "runs", work / "runs_extra"
    out: list[StageResult] = []

    def stage(name: str, cmd: list[str], db: Path) -> StageResult:
        r = run_stage(name, cmd, env=dict(env, AGENTHOP_DB=str(db)), cwd=REPO, log=logs / f"{name}.log")
        out.append(r)
        return r

    if reuse:
        for saved, db in ((saved_base, base), (saved_bare, bare)):
            shutil.copyfile(saved, db)
        _builds(work, base, extra_runs, stage, env)
        return out
    scratch = work / "scratch.duckdb"
    stage("incremental_harness_95", [_cli("agenthop-harness"), "run", "--panel", str(work / "panel.yaml"), "--data",
                                     str(bench_dir), "--out", str(runs), "--no-progress"], scratch)
    run_stage("harness_extra", [_cli("agenthop-harness"), "run", "--panel", str(work / "panel_extra.yaml"), "--data",
                                str(bench_dir), "--out", str(extra_runs), "--no-progress"], env=env, cwd=REPO)
    have = {p.name for p in runs.iterdir()}
    for p in list(extra_runs.iterdir()):
        if p.name in have:
            shutil.rmtree(p)  # the replicates the 95 runs already hold: one new run remains

    stage("incremental_ingest_95", [_cli("agenthop-ingest"), "--db", str(base), "--benchmark", str(bench_dir),
                                    "--runs", str(runs), "--quiet"], base)
    stage("incremental_ingest_benchmark", [_cli("agenthop-ingest"), "--db", str(bare), "--benchmark",
                                           str(bench_dir), "--quiet"], bare)
    shutil.copyfile(base, saved_base)
    shutil.copyfile(bare, saved_bare)
    _builds(work, base, extra_runs, stage, env)
    return out


def _builds(work: Path, base: Path, extra_runs: Path, stage: Callable[[str, list[str], Path], StageResult],
            env: dict[str, str]) -> None:
    """First build of the 95 runs, ingest of one more run, then the incremental and full-refresh builds
    (each build's run_results.json kept as run_results_<stage>.json in `work`, for its per-node profile)."""
    bare = work / "bare.duckdb"

    def common(db: Path) -> list[str]:
        """dbt's options for a build of `db`. Each warehouse file has its own target directory: the
        profile names the file, and dbt parses the whole project again (several seconds) when the
        profile differs from the one its target's partial-parse state was saved with."""
        return ["--project-dir", str(REPO), "--profiles-dir", str(REPO), "--target-path", str(target(db)),
                "--log-path", str(work / "dbtlogs")]

    def target(db: Path) -> Path:
        return work / ("target" if db == base else f"target_{db.stem}")

    def timed(name: str, cmd: list[str], db: Path) -> StageResult:
        r = stage(name, cmd, db)
        results = target(db) / "run_results.json"
        if cmd[1] == "build" and results.exists():
            shutil.copyfile(results, work / f"run_results_{name}.json")
        return r

    def warm_up(db: Path) -> None:
        """A `dbt ls` of nothing, untimed: the timed command then starts from a saved parse of the project."""
        run_stage("warm-up", [*dbt, "ls", "--select", "tag:__none__", *common(db)],
                  env=dict(env, AGENTHOP_DB=str(db)), cwd=REPO)

    dbt = [_cli("dbt")]
    timed("incremental_first_build_95", [*dbt, "build", *common(base)], base)
    one_bare = timed("ingest_one_run_bare", [_cli("agenthop-ingest"), "--db", str(bare), "--runs", str(extra_runs),
                                             "--quiet"], bare)
    one_95 = timed("ingest_one_run_95", [_cli("agenthop-ingest"), "--db", str(base), "--runs", str(extra_runs),
                                         "--quiet"], base)
    full = work / "full.duckdb"
    shutil.copyfile(base, full)
    # the same pair of builds with the unit tests (not part of the everyday build, selectors.yml), for the record
    base_unit, full_unit = work / "base_unit.duckdb", work / "full_unit.duckdb"
    shutil.copyfile(base, base_unit)
    shutil.copyfile(base, full_unit)
    for db in (base, full, base_unit, full_unit):
        warm_up(db)
    startup = timed("dbt_ls_nothing", [*dbt, "ls", "--select", "tag:__none__", *common(base)], base)
    inc = timed("dbt_build_incremental_one_run", [*dbt, "build", *common(base)], base)
    ref = timed("dbt_build_full_refresh_96", [*dbt, "build", "--full-refresh", *common(full)], full)
    _compare(inc, ref, startup, "")
    every = ["--select", "fqn:*"]  # a selection: the default selector (no unit tests) does not apply
    inc_u = timed("dbt_build_incremental_one_run_with_unit_tests", [*dbt, "build", *every, *common(base_unit)],
                  base_unit)
    ref_u = timed("dbt_build_full_refresh_96_with_unit_tests",
                  [*dbt, "build", "--full-refresh", *every, *common(full_unit)], full_unit)
    _compare(inc_u, ref_u, startup, " with unit tests", "; not a target: the everyday build has none")
    for db in (base_unit, full_unit):
        db.unlink(missing_ok=True)
    ratio = one_95.wall_s / max(one_bare.wall_s, 1e-9)
    one_95.extra["summary"] = f"{ratio:.2f}x the same ingest into the benchmark alone ({one_bare.wall_s:.2f} s)"
    one_95.extra["ratio_to_bare"] = round(ratio, 3)


def _compare(inc: StageResult, ref: StageResult, startup: StageResult, what: str, note: str = "") -> None:
    """Record an incremental build against its full refresh, both beyond dbt's fixed start-up (wall and CPU)."""
    net_inc, net_full = max(inc.wall_s - startup.wall_s, 0.0), max(ref.wall_s - startup.wall_s, 1e-9)
    inc.extra["minus_startup_s"] = round(net_inc, 3)
    ref.extra["minus_startup_s"] = round(net_full, 3)
    # CPU seconds too (dbt's process and its children): on a shared machine they swing less than wall time
    cpu_inc, cpu_full = max(inc.cpu_s - startup.cpu_s, 0.0), max(ref.cpu_s - startup.cpu_s, 1e-9)
    inc.extra["summary"] = (f"{net_inc:.2f} s without start-up = {net_inc / net_full:.2f}x the full refresh"
                            f"{what} ({net_full:.2f} s); CPU {cpu_inc:.2f} s = {cpu_inc / cpu_full:.2f}x"
                            f" ({cpu_full:.2f} s){note}")
    inc.extra["ratio_to_full_refresh"] = round(net_inc / net_full, 3)
    inc.extra["cpu_ratio_to_full_refresh"] = round(cpu_inc / cpu_full, 3)


def verdicts(results: list[StageResult]) -> list[str]:
    by_name = {r.name: r for r in results}
    missed = []
    inc, one = by_name.get("dbt_build_incremental_one_run"), by_name.get("ingest_one_run_95")
    if inc is not None and float(inc.extra.get("ratio_to_full_refresh", 0)) > MAX_DBT_RATIO:
        missed.append(f"dbt_build_incremental_one_run: {inc.extra['ratio_to_full_refresh']}x the full refresh "
                      f"(> {MAX_DBT_RATIO}x)")
    if one is not None and float(one.extra.get("ratio_to_bare", 0)) > MAX_INGEST_RATIO:
        missed.append(f"ingest_one_run_95: {one.extra['ratio_to_bare']}x the ingest into the benchmark alone "
                      f"(> {MAX_INGEST_RATIO}x)")
    return missed + [f"{r.name}: failed with exit code {r.returncode}" for r in results if r.returncode != 0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--work", default=str(REPO / "out" / "bench" / "incremental"))
    ap.add_argument("--benchmark", default=None, help="an existing 1,011-item release (default: make one)")
    ap.add_argument("--reuse", action="store_true", help="keep the runs and ingested warehouses of an earlier run")
    args = ap.parse_args()
    work = Path(args.work)
    env = dict(os.environ, DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    bench_dir = Path(args.benchmark) if args.benchmark else work.parent / "incremental_benchmark"
    if not args.benchmark:
        run_stage("make_benchmark", [_cli("agenthop-harness"), "make-benchmark", "--out", str(bench_dir), "--items",
                                     "1011", "--seed", "0"], env=env)
    results = measure(work, bench_dir, env, reuse=args.reuse)
    for r in results:
        print(f"{r.name}: {r.wall_s:.2f} s, CPU {r.cpu_s:.2f} s (exit {r.returncode}) {r.extra.get('summary', '')}")
    missed = verdicts(results)
    print("missed: " + "; ".join(missed) if missed else "targets met")
    return 1 if any(r.returncode != 0 for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
