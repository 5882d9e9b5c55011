"""`make bench` stages: the first `dbt build` a user pays, against the hand-written query.

Each measured build starts from a copy of a warehouse that `agenthop-ingest` has just written and dbt
has never touched, with a new target directory, so dbt parses the whole project (no saved manifest)
and builds every node from nothing:

- ``dbt_first_build_<label>``: ``dbt build`` with the default selector (every model, seed and data
  test; selectors.yml), parse included. Its profile (node counts and seconds per resource type, the
  slowest nodes) comes from that build's run_results.json.
- ``dbt_first_startup_<label>``: ``dbt run`` of an empty selection on the same fresh state: parsing
  the project and dbt's fixed start-up, nothing built.
- ``dbt_first_parse_<label>``: ``dbt parse`` on the same fresh state, with where the parse spends its
  time (dbt's perf_info.json: macros, each parser, models parsed without rendering their Jinja); the
  rest of its wall time is importing dbt and writing the manifest.
- ``dbt_first_same_scope_<label>``: ``dbt run`` of the three marts bench/handwritten.sql computes and
  their upstream models (no tests), fresh too; compared with the hand-written query both with and
  without the start-up above. Its profile, and its critical path: the chain of nodes, each the parent
  that finished last, that decided when the run's last node finished, with the time each waited for a
  thread after its parent finished (run_results.json and manifest.json of that run).
- ``dbt_repeat_build_<label>``: ``dbt build`` again on the built warehouse, nothing changed (what
  later builds cost; they skip unchanged work, docs/ingest.md#incremental-builds).
- ``handwritten_sql_<label>``: bench/handwritten.sql over the same Parquet files.

A fresh build is measured REPEATS times (each from its own fresh copy) and the fastest kept, as
for every short stage on this noisy machine; every wall time is in the JSON.

Standalone (the warehouse of an earlier `make bench`, or a new one made here)::

    .venv/bin/python bench/first_build.py [--work DIR] [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import StageResult, run_stage  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
REPEATS = 3

#: the marts bench/handwritten.sql computes, with their upstream models (dbt selector syntax)
HANDWRITTEN_MARTS = ["+model_summary", "+stopping_behavior", "+tool_transitions"]
#: targets at paper scale: the first build's wall seconds, same-scope / hand-written (without start-up)
MAX_FIRST_BUILD_S = 12.0
MAX_SAME_SCOPE_RATIO = 3.0


def dbt_profile(run_results: Path) -> dict[str, object]:
    """Where a dbt build spends its time: per resource type, node count and summed execution time,
    plus the five slowest nodes (from dbt's run_results.json)."""
    try:
        results = json.loads(run_results.read_text())["results"]
    except (OSError, KeyError, ValueError):
        return {}
    by_type: dict[str, list[float]] = {}
    for res in results:
        by_type.setdefault(res["unique_id"].split(".")[0], []).append(float(res["execution_time"]))
    slowest = sorted(results, key=lambda res: -float(res["execution_time"]))[:5]
    return {
        "by_type": {t: {"nodes": len(v), "seconds": round(sum(v), 2)} for t, v in sorted(by_type.items())},
        "slowest": {res["unique_id"].split(".")[-1]: round(float(res["execution_time"]), 2) for res in slowest},
    }


def _span(result: dict[str, object]) -> tuple[datetime, datetime] | None:
    """When a node of run_results.json started (its compile) and finished (its execution)."""
    timing = result.get("timing") or []
    assert isinstance(timing, list)
    if not timing:
        return None
    start, end = timing[0].get("started_at"), timing[-1].get("completed_at")
    if not start or not end:
        return None
    return datetime.fromisoformat(start.replace("Z", "+00:00")), datetime.fromisoformat(end.replace("Z", "+00:00"))


def critical_path(run_results: Path, manifest: Path) -> list[dict[str, object]]:
    """The chain of nodes that decided when a dbt invocation's last node (not a hook) finished: from it back,
    each step the parent (among the nodes of the run) that finished last. Per node, in run order: its
    name, its seconds (compile and execution) and the seconds it waited after that parent finished
    before it started (another node held the thread). Empty when either file is missing or unreadable."""
    try:
        results = json.loads(run_results.read_text())["results"]
        nodes = json.loads(manifest.read_text())["nodes"]
    except (OSError, KeyError, ValueError):
        return []
    # the project's hooks (operation nodes) run before and after every node, outside the graph
    spans = {res["unique_id"]: span for res in results
             if not res["unique_id"].startswith("operation.") and (span := _span(res)) is not None}
    if not spans:
        return []
    chain = [max(spans, key=lambda uid: spans[uid][1])]
    while True:
        parents = [p for p in nodes.get(chain[-1], {}).get("depends_on", {}).get("nodes", []) if p in spans]
        if not parents:
            break
        chain.append(max(parents, key=lambda uid: spans[uid][1]))
    chain.reverse()
    out = []
    for i, uid in enumerate(chain):
        start, end = spans[uid]
        waited = (start - spans[chain[i - 1]][1]).total_seconds() if i else 0.0
        out.append({"node": uid.split(".")[-1], "seconds": round((end - start).total_seconds(), 2),
                    "waited_s": round(max(waited, 0.0), 2)})
    return out


def critical_path_summary(path: list[dict[str, object]]) -> str:
    """One line for the bench table: the critical path's nodes, their seconds and the waits between them."""
    if not path:
        return ""
    total = sum(float(step["seconds"]) + float(step["waited_s"]) for step in path)  # type: ignore[arg-type]
    steps = ", ".join(f"{step['node']} {step['seconds']} s"
                      + (f" (after {step['waited_s']} s waiting)" if float(step["waited_s"]) >= 0.05 else "")  # type: ignore[arg-type]
                      for step in path)
    return f"critical path {round(total, 2)} s: {steps}"


def parse_profile(perf_info: Path) -> dict[str, object]:
    """Where dbt's parse of the project spends its time, from its perf_info.json: seconds of the whole
    load, of the macros and of each parser of the project (with the files it parsed), and how many
    models dbt's static parser read without rendering their Jinja."""
    try:
        info = json.loads(perf_info.read_text())
    except (OSError, ValueError):
        return {}
    parsers: dict[str, dict[str, float]] = {}
    for project in info.get("projects", []):
        for p in project.get("parsers", []):
            got = parsers.setdefault(p["parser"], {"seconds": 0.0, "files": 0})
            got["seconds"] = round(got["seconds"] + float(p["elapsed"]), 2)
            got["files"] += int(p["parsed_path_count"])
    return {
        "load_all_s": round(float(info.get("load_all_elapsed", 0.0)), 2),
        "macros_s": round(float(info.get("load_macros_elapsed", 0.0)), 2),
        "project_s": round(float(info.get("parse_project_elapsed", 0.0)), 2),
        "parsers": parsers,
        "static_models": f"{info.get('static_analysis_parsed_path_count', 0)} of "
                         f"{info.get('static_analysis_path_count', 0)}",
    }


def parse_summary(profile: dict[str, object], wall_s: float) -> str:
    """One line for the bench table: the parse's phases against the command's wall time."""
    if not profile:
        return ""
    parsers = profile["parsers"]
    assert isinstance(parsers, dict)
    each = ", ".join(f"{name} {v['seconds']} s ({v['files']} files)" for name, v in sorted(parsers.items()))
    rest = round(wall_s - float(profile["load_all_s"]), 2)  # type: ignore[arg-type]
    return (f"parse {profile['load_all_s']} s: macros {profile['macros_s']} s, project {profile['project_s']} s "
            f"({each}); {profile['static_models']} models read without rendering; {rest} s importing dbt, "
            "writing the manifest and the rest")


def handwritten_query(runs_dir: Path, db: Path, keep: Path | None = None) -> tuple[float, dict[str, int]]:
    """Time bench/handwritten.sql (model_summary, stopping_behavior, tool_transitions over Parquet)."""
    sql = (REPO / "bench" / "handwritten.sql").read_text()
    sql = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    sql = sql.replace("{runs}", str(runs_dir)).replace("{db}", str(db))
    con = duckdb.connect(str(keep) if keep else ":memory:")
    try:
        start = time.perf_counter()
        counts: dict[str, int] = {}
        for stmt in [s for s in sql.split(";") if s.strip()]:
            con.execute(stmt)
        for name in ("hw_model_summary", "hw_stopping_behavior", "hw_tool_transitions"):
            counts[name] = con.execute(f"select count(*) from {name}").fetchone()[0]
        return time.perf_counter() - start, counts
    finally:
        con.close()


def table_rows(db: Path, schema: str) -> dict[str, int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = [r[0] for r in con.execute(
            "select table_name from information_schema.tables where table_schema = ? and table_type = 'BASE TABLE'",
            [schema]).fetchall()]
        return {n: con.execute(f'select count(*) from {schema}."{n}"').fetchone()[0] for n in sorted(names)}
    finally:
        con.close()


def _fresh(name: str, args: list[str], fresh_db: Path, work: Path, env: dict[str, str],
           repeats: int) -> tuple[StageResult, Path, Path]:
    """The fastest of ``repeats`` runs of ``dbt <args>``, each on its own copy of ``fresh_db`` with a new
    target directory; returns it with its warehouse and target directory."""
    runs = []
    for i in range(repeats):
        db, target = work / f"{name}_{i}.duckdb", work / f"{name}_{i}_target"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copyfile(fresh_db, db)
        cmd = [str(BIN / "dbt"), *args, "--project-dir", str(REPO), "--profiles-dir", str(REPO),
               "--target-path", str(target), "--log-path", str(work / "dbtlogs")]
        r = run_stage(name, cmd, env=dict(env, AGENTHOP_DB=str(db)), cwd=REPO, log=work / f"{name}_{i}.log")
        runs.append((r, db, target))
    best = min(runs, key=lambda t: t[0].wall_s)
    best[0].extra["walls_s"] = [r.wall_s for r, _, _ in runs]
    for r, db, target in runs:
        if r is not best[0]:
            db.unlink(missing_ok=True)
            shutil.rmtree(target, ignore_errors=True)
    return best


def built_warehouse(work: Path) -> Path:
    """The warehouse the fastest first build of :func:`measure` in ``work`` built (repeated builds ran on it)."""
    return work / "built.duckdb"


def measure(label: str, fresh_db: Path, runs_dir: Path, work: Path, env: dict[str, str],
            repeats: int = REPEATS) -> list[StageResult]:
    """The stages of this module on ``fresh_db`` (a warehouse just ingested from ``runs_dir``, never built)."""
    work.mkdir(parents=True, exist_ok=True)
    build, db, target = _fresh(f"dbt_first_build_{label}", ["build"], fresh_db, work, env, repeats)
    built_db = db.replace(built_warehouse(work))
    build.extra.update(rows=table_rows(built_db, "main"), bytes_written=built_db.stat().st_size,
                       profile=dbt_profile(target / "run_results.json"))
    startup, _, _ = _fresh(f"dbt_first_startup_{label}", ["run", "--select", "tag:__none__"], fresh_db, work, env,
                           repeats)
    parse, _, parse_target = _fresh(f"dbt_first_parse_{label}", ["parse"], fresh_db, work, env, repeats)
    parse.extra["parse"] = parse_profile(parse_target / "perf_info.json")
    parse.extra["summary"] = parse_summary(parse.extra["parse"], parse.wall_s)  # type: ignore[arg-type]
    scope, _, scope_target = _fresh(f"dbt_first_same_scope_{label}", ["run", "--select", *HANDWRITTEN_MARTS],
                                    fresh_db, work, env, repeats)
    scope.extra["profile"] = dbt_profile(scope_target / "run_results.json")
    scope.extra["critical_path"] = critical_path(scope_target / "run_results.json", scope_target / "manifest.json")
    scope.extra["summary"] = critical_path_summary(scope.extra["critical_path"])  # type: ignore[arg-type]
    repeat_runs = [run_stage(f"dbt_repeat_build_{label}",
                             [str(BIN / "dbt"), "build", "--project-dir", str(REPO), "--profiles-dir", str(REPO),
                              "--target-path", str(target), "--log-path", str(work / "dbtlogs")],
                             env=dict(env, AGENTHOP_DB=str(built_db)), cwd=REPO,
                             log=work / f"dbt_repeat_build_{label}.log") for _ in range(repeats)]
    repeat = min(repeat_runs, key=lambda r: r.wall_s)
    repeat.extra["walls_s"] = [r.wall_s for r in repeat_runs]
    repeat.extra["profile"] = dbt_profile(target / "run_results.json")
    hw_wall, hw_counts = min((handwritten_query(runs_dir, fresh_db) for _ in range(repeats)), key=lambda t: t[0])
    hand = StageResult(f"handwritten_sql_{label}", ["duckdb", "bench/handwritten.sql"], round(hw_wall, 3),
                       round(hw_wall, 3), 0.0, 0.0, 0, {"rows": hw_counts})
    for stage in (build, scope):
        net = max(stage.wall_s - startup.wall_s, 0.0)
        stage.extra["startup_s"] = startup.wall_s
        stage.extra["minus_startup_s"] = round(net, 3)
        stage.extra["ratio_to_handwritten"] = round(net / hw_wall, 2) if hw_wall > 0 else None
        stage.extra["wall_ratio_to_handwritten"] = round(stage.wall_s / hw_wall, 2) if hw_wall > 0 else None
    return [build, startup, parse, scope, repeat, hand]


def verdicts(results: list[StageResult]) -> list[str]:
    """Targets of this module that a run missed (for bench/run_bench.py's verdicts)."""
    missed = []
    for r in results:
        if r.name.startswith(("dbt_first_", "dbt_repeat_build_")) and r.returncode != 0:
            missed.append(f"{r.name}: failed with exit code {r.returncode}")
        if r.name == "dbt_first_build_1x" and r.wall_s > MAX_FIRST_BUILD_S:
            missed.append(f"{r.name}: {r.wall_s:.1f} s > {MAX_FIRST_BUILD_S:g} s")
        if r.name.startswith("dbt_first_same_scope_") and r.extra.get("ratio_to_handwritten") is not None \
                and float(r.extra["ratio_to_handwritten"]) > MAX_SAME_SCOPE_RATIO:
            missed.append(f"{r.name}: {r.extra['ratio_to_handwritten']}x the hand-written query "
                          f"(> {MAX_SAME_SCOPE_RATIO:g}x)")
    return missed


def _prepare(work: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """A paper-scale warehouse just ingested, and its runs: those of an earlier `make bench` when present."""
    bench_dir, runs, fresh = work / "benchmark", work / "runs_1x", work / "fresh_1x.duckdb"
    if not (bench_dir / "_SUCCESS").exists() and not any(bench_dir.glob("*")):
        run_stage("make_benchmark", [str(BIN / "agenthop-harness"), "make-benchmark", "--out", str(bench_dir),
                                     "--items", "1011", "--seed", "0"], env=env)
    if not any(runs.glob("*/_SUCCESS")):
        run_stage("harness_1x", [str(BIN / "agenthop-harness"), "run", "--panel", str(REPO / "panels" / "paper19.yaml"),
                                 "--data", str(bench_dir), "--out", str(runs), "--no-progress"], env=env)
    if not fresh.exists():
        tmp = work / "fresh_1x.tmp.duckdb"
        tmp.unlink(missing_ok=True)
        r = run_stage("ingest_1x", [str(BIN / "agenthop-ingest"), "--db", str(tmp), "--benchmark", str(bench_dir),
                                    "--runs", str(runs), "--quiet"], env=env)
        if r.returncode != 0:
            raise SystemExit(f"ingest into {tmp} failed (exit {r.returncode})")
        tmp.rename(fresh)
    return fresh, runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=REPO / "out" / "bench")
    ap.add_argument("--repeats", type=int, default=REPEATS)
    args = ap.parse_args()
    env = dict(os.environ, DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    fresh, runs = _prepare(work, env)
    results = measure("1x", fresh, runs, work / "first_build_1x", env, args.repeats)
    print(json.dumps({"load_average": os.getloadavg(), "stages": [r.as_dict() for r in results],
                      "missed": verdicts(results)}, indent=1, default=str))
    return 0 if all(r.returncode == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
