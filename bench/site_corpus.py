"""A seeded leaderboard warehouse for the site benchmark: M models x E epochs x N items of one Inspect task.

The rows are what `agenthop-ingest --inspect-log` writes for a log of a question-answering task with one
tool (one run per model and epoch, ``replicate`` = epoch - 1, run ids ``inspect-<eval id>-e<epoch>``),
written straight into the raw tables through the warehouse's own DDL (ingest/ddl.py) with one
``raw.ingest_log`` row per run; `dbt build` then makes the marts the reports read, as after an import.

Per sample: a system prompt (the task's, the same for every sample), the user's question (the item's
input, the same in every run), an assistant turn that calls one of three tools, the tool's answer, and
the final answer (the sample's predicted answer, as Inspect's completion): five messages, about 1.3 KB of
text; a ``match`` score (C or I). Texts are sentences
of bench/transcript_corpus.py's pool. Whether a model answers an item is drawn from the item's
difficulty and the model's ability (a logistic curve), so a model gets most items always or never
right and about a fifth of them right in some epochs only: the unstable items its reruns page lists.
Every random choice is a hash of (seed, position), so the warehouse is the same on every machine.

    python bench/site_corpus.py --db out/site.duckdb --models 50 --epochs 5 --items 10000 [--build]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from transcript_corpus import _u, make_text_pool  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TASK = "site_bench/qa"
BENCHMARK = f"inspect:{TASK}"
TOOLS = ("search", "lookup", "calculator")
#: the logistic curve's scale: smaller, fewer items a model gets right in some epochs only
SLOPE = 0.05
# part of the name of a cached warehouse (bench/site_large.py): bump it when the generated data change
VERSION = 2


def build(db: Path, *, models: int = 50, epochs: int = 5, items: int = 10_000, seed: int = 0) -> dict[str, float]:
    """Write the raw tables of a new warehouse ``db``; return the seconds each step took."""
    from agenthop.ingest import ddl
    from agenthop.ingest.sources.inspect_ingest import items_ddl

    if db.exists():
        raise SystemExit(f"{db} exists: give a new path")
    db.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(db), config={"zstd_min_string_length": 512})
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    for stmt in [*ddl.ddl_statements(), items_ddl()]:
        con.execute(stmt)
    con.execute("INSERT INTO raw.warehouse_meta VALUES ('layout_version', '1'), ('duckdb_version', ?)",
                [duckdb.__version__])
    make_text_pool(con, seed)
    pool = "(SELECT list(text ORDER BY s) FROM sentences)"

    def text(key: str, lo: int, span: int, tag: int) -> str:
        return (f"array_to_string(list_transform(range({lo} + (hash({seed}, {key}, {tag}) % {span})::INT), "
                f"lambda j: p[1 + (hash({seed}, {key}, {tag}, j) % 4000)::INT]), ' ')")

    # runs: model m's ability a_m spread over [0.25, 0.85]; one run per epoch
    con.execute(f"""
        CREATE TEMP TABLE r AS
        SELECT m, e, 'inspect-SiteBench' || lpad(m::VARCHAR, 4, '0') || '-e' || (e + 1) AS run_id,
               'lab/model-' || lpad(m::VARCHAR, 2, '0') AS model,
               0.25 + 0.6 * (m + 0.5) / {models} AS ability
        FROM range({models}) a(m), range({epochs}) b(e)""")
    con.execute(f"""
        INSERT INTO raw.runs (run_id, model, backend, condition, replicate, benchmark_sha256, budget_total, max_turns,
            max_total_tokens, harness_version, config_json, family, tier, started_at, finished_at, generation,
            benchmark, paradigm, source_packages_json, task_version, task_args_json, message_limit, time_limit_s,
            working_limit_s, _partial, _source)
        SELECT run_id, model, 'inspect-log', '', e, 'site-bench', 0, 0, 200000, 'inspect_ai 0.3.285',
               '{{"config": {{"epochs": {epochs}}}, "dataset": {{"name": "qa"}}}}', NULL, NULL,
               TIMESTAMPTZ '2026-01-20 10:00:00+00', TIMESTAMPTZ '2026-01-20 12:00:00+00', NULL, '{BENCHMARK}', NULL,
               '{{"inspect_ai": "0.3.285"}}', '0', '{{}}', NULL, NULL, NULL, false, 'site_corpus/' || model || '.eval'
        FROM r""")
    con.execute(f"""
        INSERT INTO raw.benchmarks VALUES ('{BENCHMARK}', NULL, 'site-bench', {items}, TIMESTAMPTZ '2026-01-20 12:00:00+00')""")
    con.execute(f"""
        CREATE TEMP TABLE it AS
        SELECT i, printf('q%05d', i) AS sample_id, {_u(seed, 'i', "'difficulty'")} AS difficulty,
               {text('i', 3, 4, 21)} AS input
        FROM range({items}) x(i), (SELECT {pool} AS p)""")
    con.execute(f"""
        INSERT INTO raw.inspect_items
        SELECT '{BENCHMARK}', sample_id, input, 'answer ' || (i % 7), '{{"topic": "t' || (i % 12) || '"}}', i,
               md5(sample_id)
        FROM it""")
    times["items"] = time.perf_counter() - t0
    # one sample per run and item: right with probability sigmoid((ability - difficulty) / SLOPE)
    con.execute(f"""
        CREATE TEMP TABLE s AS
        SELECT r.run_id, r.m, r.e, it.i, it.sample_id, it.input, row_number() OVER () AS t,
               {_u(seed, 'r.m', 'r.e', 'it.i')} < 1 / (1 + exp(-(r.ability - it.difficulty) / {SLOPE})) AS ok,
               {list(TOOLS)}[1 + (hash({seed}, r.m, r.e, it.i, 30) % {len(TOOLS)})::INT] AS tool
        FROM r, it""")
    con.execute(f"""
        INSERT INTO raw.trajectories
        SELECT run_id, sample_id, 0, true, {text('t', 1, 2, 43)}, -1, ok, 'answer', 2, 0,
               1800 + (hash({seed}, t, 32) % 400)::INT, 90 + (hash({seed}, t, 33) % 60)::INT, 900, 0,
               0, 0, 0, 0, 2.0 + (hash({seed}, t, 34) % 300) / 100.0, NULL, NULL, NULL, ok::INT::DOUBLE, NULL
        FROM s, (SELECT {pool} AS p)""")
    con.execute("UPDATE raw.trajectories SET total_tokens = total_prompt_tokens + total_completion_tokens")
    # two turns whose tokens add up to the trajectory's totals (else every sample is a data-quality issue)
    con.execute("""
        INSERT INTO raw.turns
        SELECT run_id, sample_id, 0, k, 'assistant', 1 - k,
               CASE k WHEN 0 THEN 800 ELSE total_prompt_tokens - 800 END,
               CASE k WHEN 0 THEN 40 ELSE total_completion_tokens - 40 END, 450 * k, 0,
               CASE k WHEN 0 THEN 840 ELSE total_tokens END, 0, 0, 80 + 100 * k, k * 1.0, NULL
        FROM raw.trajectories, range(2) x(k)""")
    con.execute(f"""
        INSERT INTO raw.tool_calls
        SELECT run_id, sample_id, 0, 0, 0, 0, tool,
               '{{"query": "' || replace(split_part(input, ' ', 2), '.', '') || '"}}', NULL, NULL, NULL, NULL, NULL,
               NULL, 0, CASE WHEN hash({seed}, t, 35) % 25 = 0 THEN 'tool_error' ELSE 'ok' END, 300, 0,
               CASE WHEN hash({seed}, t, 35) % 25 = 0 THEN 'timeout' END
        FROM s""")
    times["calls"] = time.perf_counter() - t0
    system = con.execute(f"SELECT {text('0', 6, 1, 40)} FROM (SELECT {pool} AS p)").fetchall()[0][0]
    con.execute(f"""
        INSERT INTO raw.messages
        WITH shape AS (
            SELECT 0 AS idx, 'system' AS role UNION ALL SELECT 1, 'user' UNION ALL SELECT 2, 'assistant'
            UNION ALL SELECT 3, 'tool' UNION ALL SELECT 4, 'assistant')
        SELECT s.run_id, s.sample_id, 0, shape.idx, shape.role, CASE WHEN shape.role = 'tool' THEN s.tool END,
               CASE WHEN shape.role = 'tool' THEN 'call_0' END,
               CASE shape.idx WHEN 0 THEN ? WHEN 1 THEN s.input
                    WHEN 2 THEN {text('s.t', 1, 2, 41)} WHEN 3 THEN {text('s.t', 2, 3, 42)}
                    ELSE {text('s.t', 1, 2, 43)} END
        FROM s CROSS JOIN shape CROSS JOIN (SELECT {pool} AS p)""", [system])
    con.execute(f"""
        INSERT INTO raw.scores
        SELECT run_id, sample_id, 'match', 'value', CASE WHEN ok THEN 'C' ELSE 'I' END, ok::INT::DOUBLE FROM s""")
    con.execute(f"""
        INSERT INTO raw.metric_defs VALUES ('{BENCHMARK}', 'match', 'binary', 'higher_is_better', true, 'match',
            'inspect', 'Inspect scorer match', 0.0, 1.0)""")
    con.execute("""
        INSERT INTO raw.ingest_log
        SELECT 1, TIMESTAMPTZ '2026-01-20 12:00:00+00', 'inspect-log', 'site_corpus/' || model || '.eval', run_id,
               md5(run_id), 'inserted', '{}'
        FROM r""")
    con.execute("CHECKPOINT")
    times["raw_tables"] = time.perf_counter() - t0
    con.close()
    return times


def dbt_build(db: Path, work: Path) -> float:
    """`agenthop-dbt build` on ``db`` (target and logs beside it); returns its seconds."""
    import os

    t0 = time.perf_counter()
    env = dict(os.environ, AGENTHOP_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    proc = subprocess.run([str(Path(sys.executable).parent / "agenthop-dbt"), "build"], cwd=work, env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"dbt build of {db} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--models", type=int, default=50)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--build", action="store_true", help="also run dbt build")
    args = ap.parse_args()
    times = build(args.db, models=args.models, epochs=args.epochs, items=args.items, seed=args.seed)
    if args.build:
        times["dbt_build"] = dbt_build(args.db, args.db.parent)
    print(json.dumps({k: round(v, 1) for k, v in times.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
