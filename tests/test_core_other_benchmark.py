"""The shared core serves a benchmark other than AgentHop, added only through the registry.

A toy benchmark ``toyqa`` (its own release format, its own raw table, its own tools web_search /
open_page / finish, graded scores) is registered with ``agenthop.harness.benchmarks.register``; its
release and two hand-written runs (same model and condition, replicates 0 and 1) are loaded with
ingest into a warehouse that already holds an AgentHop release and run, ``dbt build`` runs, and the
shared marts (models_sql/marts/core/) are compared with values worked out by hand below. AgentHop's
own marts hold only the AgentHop run.

Runs (final attempts; tokens = prompt + completion, no cache):
  r0  t1 web_search > open_page > web_search > finish   score 0.5  wrong  answer      tokens 100  turns 3
      t2 web_search > finish                            score 1.0  right  answer      tokens 50   turns 2
      t3 web_search > open_page                         score 0.0  wrong  time_limit  tokens 80   turns 2
  r1  t1 web_search > finish                            score 1.0  right  answer      tokens 40   turns 2
      t2 web_search > open_page > finish                score 1.0  right  answer      tokens 60   turns 3
      t3 (no calls)                                     no score   wrong  error       tokens 0    turns 1
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from agenthop.harness import benchmarks
from agenthop.ingest.conform import conform
from agenthop.ingest.core import run_ingest
from agenthop.schemas import trajectory as ts
from tests.conftest import built_once, cli, run_dbt_build, worker_copy
from tests.test_dbt_marts import q
from tests.test_agenthop_compat import FORMATS, PRE_CORE_RUN

NAME = "toyqa"
TASKS = pa.schema([pa.field("sample_id", pa.string(), nullable=False), pa.field("question", pa.string())])
T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)

# (run, sample) -> (calls, score, is_correct, terminated_by, prompt tokens, completion tokens, turns)
PLAN = {
    ("r0", "t1"): (["web_search", "open_page", "web_search", "finish"], 0.5, False, "answer", 80, 20, 3),
    ("r0", "t2"): (["web_search", "finish"], 1.0, True, "answer", 40, 10, 2),
    ("r0", "t3"): (["web_search", "open_page"], 0.0, False, "time_limit", 70, 10, 2),
    ("r1", "t1"): (["web_search", "finish"], 1.0, True, "answer", 30, 10, 2),
    ("r1", "t2"): (["web_search", "open_page", "finish"], 1.0, True, "answer", 50, 10, 3),
    ("r1", "t3"): ([], None, False, "error", 0, 0, 1),
}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _release_tables(root: Path, content_sha256: str) -> benchmarks.ReleaseTables:
    path = root / NAME / "tasks.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    table = conform(pa.Table.from_pylist([{"sample_id": r["id"], "question": r["question"]} for r in rows],
                                         schema=TASKS), TASKS, str(path))
    return benchmarks.ReleaseTables(NAME, _sha(path)[:16], content_sha256, table.num_rows,
                                    {f"{NAME}_tasks": table}, version="0.1", root=str(root))


TOYQA = benchmarks.Benchmark(
    name=NAME,
    title="toy questions answered with web tools, graded 0..1",
    is_release=lambda root: (root / NAME / "tasks.jsonl").is_file(),
    release_marker=f"{NAME}/tasks.jsonl",
    release_content_sha256=lambda root: _sha(root / NAME / "tasks.jsonl"),
    release_tables=_release_tables,
    raw_tables={f"{NAME}_tasks": TASKS},
    raw_keys={f"{NAME}_tasks": ("sample_id",)},
    item_ids_sql=f"SELECT sample_id FROM raw.{NAME}_tasks",
    tool_names=("web_search", "open_page", "finish"),
)


@pytest.fixture(scope="module")
def registered() -> Iterator[benchmarks.Benchmark]:
    benchmarks.register(TOYQA)
    try:
        yield TOYQA
    finally:
        benchmarks.unregister(NAME)


def _run_dir(out: Path, run: str, replicate: int, bench_sha: str, like: str | None = None) -> Path:
    """A run directory in the trajectory-store format, every row written by hand from PLAN (the rows of
    run ``like`` when given)."""
    d = out / run
    d.mkdir(parents=True)
    rows: dict[str, list[dict]] = {t: [] for t in ("runs", "trajectories", "turns", "tool_calls")}
    rows["runs"].append({
        "run_id": run, "model": "toy-model", "backend": "sim", "condition": "full", "replicate": replicate,
        "benchmark_sha256": bench_sha, "budget_total": 0, "max_turns": 10, "max_total_tokens": 10_000,
        "harness_version": "test", "config_json": "{}", "family": None, "tier": None, "started_at": T0,
        "finished_at": T0, "generation": None, "benchmark": NAME, "paradigm": None,
    })
    for (r, sid), (calls, score, correct, term, p, c, turns) in PLAN.items():
        if r != (like or run):
            continue
        rows["trajectories"].append({
            "run_id": run, "sample_id": sid, "attempt": 0, "is_final": True, "predicted_answer": "x",
            "predicted_index": -1, "is_correct": correct, "terminated_by": term, "total_turns": turns,
            "budget_used": 0, "total_prompt_tokens": p, "total_completion_tokens": c, "cache_read_tokens": 0,
            "cache_creation_tokens": 0, "total_tokens": p + c, "tool_errors": 0, "api_error_count": int(term == "error"),
            "transient_retry_count": 0, "wall_time_s": 1.0, "reasoning": None, "score": score,
            "answer_json": None,
        })
        sizes = [len(calls) // turns + (1 if i < len(calls) % turns else 0) for i in range(turns)]
        per_turn = [calls[sum(sizes[:i]):sum(sizes[:i + 1])] for i in range(turns)]  # in order
        seq = 0
        for turn, names in enumerate(per_turn):
            first = turn == 0  # the first turn carries the remainder of the token split
            rows["turns"].append({
                "run_id": run, "sample_id": sid, "attempt": 0, "turn": turn,
                "role": "error" if term == "error" else "assistant", "n_tool_calls": len(names),
                "prompt_tokens": p // turns + (p % turns if first else 0),
                "completion_tokens": c // turns + (c % turns if first else 0), "cache_read_tokens": 0,
                "cache_creation_tokens": 0, "cumulative_tokens": 0, "budget_before": 0, "budget_after": 0,
                "content_chars": 5, "t_offset_s": float(turn),
            })
            for ci, tool in enumerate(names):
                rows["tool_calls"].append({
                    "run_id": run, "sample_id": sid, "attempt": 0, "turn": turn, "call_index": ci, "seq": seq,
                    "tool": tool, "args_json": "{}", "cost": 0, "status": "ok", "output_chars": 10,
                    "budget_after": 0, "error_type": None,
                })
                seq += 1
    for table in ("runs", "trajectories", "turns", "tool_calls"):
        pq.write_table(pa.Table.from_pylist(rows[table], schema=ts.TABLES[table]), d / f"{table}-00000.parquet")
    # every scorer's value (the primary one is trajectories.score): a second scorer that grades length
    scores = [{"run_id": run, "sample_id": t["sample_id"], "scorer": scorer, "key": "value",
               "value_text": None if value is None else str(value), "value_num": value}
              for t in rows["trajectories"]
              for scorer, value in (("judge", t["score"]), ("length", float(t["total_turns"])))]
    pq.write_table(pa.Table.from_pylist(scores, schema=ts.SCORES), d / "scores-00000.parquet")
    (d / "_SUCCESS").write_text("{}\n")
    return d


def _build_toyqa(work: Path) -> None:
    """`warehouse`'s folder: the toyqa release, its runs and w.duckdb (toyqa registered)."""
    release = work / "release"
    (release / NAME).mkdir(parents=True)
    (release / NAME / "tasks.jsonl").write_text(
        "".join(json.dumps({"id": f"t{i}", "question": f"question {i}?"}) + "\n" for i in (1, 2, 3))
    )
    sha = _sha(release / NAME / "tasks.jsonl")[:16]
    runs = work / "runs"
    for replicate, run in enumerate(("r0", "r1")):
        _run_dir(runs, run, replicate, sha)
    db = work / "w.duckdb"
    # AgentHop first: a small release and the run of tests/fixtures/run_formats/pre_core/
    agenthop_release = work / "agenthop"
    gen = subprocess.run([cli("agenthop-harness"), "make-benchmark", "--out", str(agenthop_release), "--items", "4",
                          "--seed", "3"], capture_output=True, text=True)
    assert gen.returncode == 0, gen.stderr
    run_ingest(db, benchmark=agenthop_release, runs=[FORMATS / "pre_core" / PRE_CORE_RUN])
    # then toyqa into the same warehouse: a second release, one per benchmark
    run_ingest(db, benchmark=release, runs=[runs])
    proc = run_dbt_build(db, work)
    assert proc.returncode == 0, proc.stdout[-4000:]


@pytest.fixture(scope="module")
def warehouse(registered: benchmarks.Benchmark, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """AgentHop and toyqa in one built warehouse, built once per test run (conftest.built_once: this
    module and the report modules that import this fixture share it); each module gets its own copy."""
    return worker_copy(tmp_path_factory, built_once(tmp_path_factory, "toyqa", _build_toyqa) / "w.duckdb", "toyqa")


def test_release_is_catalogued_and_runs_are_checked_against_it(warehouse: Path, tmp_path: Path) -> None:
    assert q(warehouse, "SELECT benchmark, version, n_items FROM raw.benchmarks ORDER BY 1") == [
        ("agenthop", None, 4), (NAME, "0.1", 3)]
    assert q(warehouse, "SELECT run_id, benchmark FROM raw.runs ORDER BY 2, 1") == [
        (PRE_CORE_RUN, "agenthop"), ("r0", NAME), ("r1", NAME)]
    # a run whose sample is not in the toyqa release is refused, naming the file
    shas = dict(q(warehouse, "SELECT benchmark, sha256 FROM raw.benchmarks"))
    copy = tmp_path / "w.duckdb"
    copy.write_bytes(warehouse.read_bytes())
    # a toyqa run made on another release (here: carrying AgentHop's hash) is refused
    other = _run_dir(tmp_path / "other", "r8", 0, shas["agenthop"], like="r0")
    with pytest.raises(Exception, match=f"was made on benchmark {shas['agenthop']} but the warehouse holds "
                                        f"benchmark {shas[NAME]} \\(toyqa\\)"):
        run_ingest(copy, runs=[other])
    bad = _run_dir(tmp_path / "bad", "r9", 0, shas[NAME], like="r0")
    for table in ("trajectories", "turns", "tool_calls"):
        t = pq.read_table(bad / f"{table}-00000.parquet")
        t = t.set_column(t.schema.get_field_index("sample_id"), "sample_id",
                         pa.array([s.replace("t1", "zz") for s in t.column("sample_id").to_pylist()]))
        pq.write_table(t, bad / f"{table}-00000.parquet")
    with pytest.raises(Exception, match="not in the loaded benchmark's items: 'zz'"):
        run_ingest(copy, runs=[bad])


def test_every_scorers_values_are_loaded(warehouse: Path) -> None:
    rows = q(warehouse, "SELECT run_id, sample_id, scorer, score_key, value_num FROM staging.stg_harness__scores "
                        "WHERE sample_id = 't1' ORDER BY 1, 3")
    assert rows == [("r0", "t1", "judge", "value", 0.5), ("r0", "t1", "length", "value", 3.0),
                    ("r1", "t1", "judge", "value", 1.0), ("r1", "t1", "length", "value", 2.0)]
    assert q(warehouse, "SELECT count(*) FROM raw.scores") == [(12,)]


def test_tool_transitions(warehouse: Path) -> None:
    rows = q(warehouse, "SELECT run_id, prev_tool, next_tool, n, p_next FROM tool_transitions "
                        f"WHERE run_id IN ('r0', 'r1') ORDER BY 1, 2, 3")
    # r0: t1 ws>op, op>ws, ws>fi; t2 ws>fi; t3 ws>op  -> ws: op 2, fi 2; op: ws 1
    # r1: t1 ws>fi; t2 ws>op, op>fi                   -> ws: fi 1, op 1; op: fi 1
    assert rows == [
        ("r0", "open_page", "web_search", 1, 1.0),
        ("r0", "web_search", "finish", 2, 0.5),
        ("r0", "web_search", "open_page", 2, 0.5),
        ("r1", "open_page", "finish", 1, 1.0),
        ("r1", "web_search", "finish", 1, 0.5),
        ("r1", "web_search", "open_page", 1, 0.5),
    ]


def test_tool_trigrams(warehouse: Path) -> None:
    rows = q(warehouse, "SELECT run_id, trigram, n, share FROM tool_trigrams WHERE run_id IN ('r0', 'r1') ORDER BY 1, 2")
    # r0 t1: ws>op>ws, op>ws>fi (t2, t3 too short for none: t3 has 2 calls); r1 t2: ws>op>fi
    assert rows == [
        ("r0", "open_page>web_search>finish", 1, 0.5),
        ("r0", "web_search>open_page>web_search", 1, 0.5),
        ("r1", "web_search>open_page>finish", 1, 1.0),
    ]


def test_termination_summary(warehouse: Path) -> None:
    rows = q(warehouse, "SELECT run_id, terminated_by, n, n_total, share, accuracy, mean_score "
                        "FROM termination_summary WHERE n > 0 AND run_id IN ('r0', 'r1') "
                        "ORDER BY 1, termination_order")
    assert rows == [
        ("r0", "answer", 2, 3, 2 / 3, 0.5, 0.75),
        ("r0", "time_limit", 1, 3, 1 / 3, 0.0, 0.0),  # a limit of the shared vocabulary, listed where it occurs
        ("r1", "answer", 2, 3, 2 / 3, 1.0, 1.0),
        ("r1", "error", 1, 3, 1 / 3, 0.0, None),
    ]
    # the harness's five terminations are listed for every run, zero rows included; the other limits not
    assert q(warehouse, "SELECT count(*) FROM termination_summary WHERE run_id = 'r1'") == [(5,)]
    assert q(warehouse, "SELECT count(*) FROM termination_summary WHERE run_id = 'r0'") == [(6,)]


def test_run_summary(warehouse: Path) -> None:
    rows = q(warehouse, "SELECT run_id, benchmark, n, n_scored, mean_score, accuracy, total_tokens, avg_tokens, "
                        "avg_turns, total_usd, n_answer, n_limit, n_error FROM run_summary "
                        f"WHERE benchmark = '{NAME}' ORDER BY 1")
    assert rows == [
        # r0: scores 0.5, 1, 0 -> 0.5; tokens 100 + 50 + 80; turns 3, 2, 2
        ("r0", NAME, 3, 3, 0.5, 1 / 3, 230, 230 / 3, 7 / 3, None, 2, 1, 0),
        # r1: scores 1, 1 (t3 unscored) -> 1.0; tokens 40 + 60 + 0; turns 2, 3, 1
        ("r1", NAME, 3, 2, 1.0, 2 / 3, 100, 100 / 3, 2.0, None, 2, 0, 1),
    ]


def test_rerun_item_flips(warehouse: Path) -> None:
    rows = q(warehouse, "SELECT benchmark, model, sample_id, cell, n_group_runs, n_runs, n_correct, flipped, "
                        "mean_score, score_spread FROM rerun_item_flips WHERE benchmark = 'toyqa' ORDER BY sample_id")
    assert rows == [
        (NAME, "toy-model", "t1", None, 2, 2, 1, True, 0.75, 0.5),
        (NAME, "toy-model", "t2", None, 2, 2, 2, False, 1.0, 0.0),
        (NAME, "toy-model", "t3", None, 2, 2, 0, False, 0.0, 0.0),
    ]


def test_both_benchmarks_in_one_warehouse(warehouse: Path) -> None:
    # the shared marts hold both benchmarks' runs; AgentHop's marts only AgentHop's
    assert q(warehouse, "SELECT benchmark, count(*), sum(n) FROM run_summary GROUP BY 1 ORDER BY 1") == [
        ("agenthop", 1, 3), (NAME, 2, 6)]
    # AgentHop's 1/0 score: its mean is the accuracy (2 of 3 when the fixture run was made)
    assert q(warehouse, "SELECT mean_score, accuracy FROM run_summary WHERE benchmark = 'agenthop'") == [
        (2 / 3, 2 / 3)]
    assert q(warehouse, "SELECT DISTINCT run_id FROM fct_trajectory") == [(PRE_CORE_RUN,)]
    assert q(warehouse, "SELECT run_id, n_items, accuracy FROM model_summary") == [(PRE_CORE_RUN, 3, 2 / 3)]
    assert q(warehouse, "SELECT count(*) FROM tool_transitions WHERE run_id = ?".replace("?", f"'{PRE_CORE_RUN}'"))[0][0] > 0
    assert q(warehouse, "SELECT count(*) FROM dq_issues") == [(0,)]
