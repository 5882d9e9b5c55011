"""SciExplore through the harness: its registry entry, the simulated panel played by the shared loop,
resume, and ingest of the run directories into SciExplore's tables (what its marts read)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from conftest import run_dbt_build

from agenthop.harness import benchmarks
from agenthop.harness.benchmarks.sciexplore.generator import write_release
from agenthop.harness.cli import main as harness_main
from agenthop.harness.errors import AgentHopError
from agenthop.harness.panel import load_panel
from agenthop.ingest.cli import main as ingest_main

REPO = Path(__file__).resolve().parents[2]
PANEL = REPO / "panels" / "sciexplore_demo.yaml"
SELECT = ("--select", "path:models_sql/staging/sciexplore", "path:models_sql/intermediate/sciexplore",
          "path:models_sql/marts/sciexplore")


@pytest.fixture(scope="session")
def sx_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The synthetic release, the demo panel's runs on it (one replicate) and a warehouse of both."""
    work = tmp_path_factory.mktemp("sx_runs")
    rel, runs, db = work / "release", work / "runs", work / "w.duckdb"
    write_release(rel, 0)
    panel = work / "panel.yaml"
    panel.write_text(PANEL.read_text().replace("replicates: 4", "replicates: 1"))
    r = CliRunner().invoke(harness_main, ["run", "--panel", str(panel), "--data", str(rel), "--out", str(runs),
                                          "--no-progress", "--processes", "1"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--benchmark", str(rel), "--runs", str(runs)],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return rel, runs, db


def _q(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_registry_entry(tmp_path: Path) -> None:
    bench = benchmarks.get("sciexplore")
    assert bench.conditions == ("foundation", "search", "deep_research")
    assert bench.tool_names == ("web_search", "scholar_search", "db_search", "open_page")
    write_release(tmp_path, 0)
    assert benchmarks.detect(tmp_path) is bench
    rel = benchmarks.load(tmp_path)
    assert len(rel.items) == 103 and rel.benchmark_sha256 == benchmarks.release_sha256(tmp_path)
    assert bench.default_caps("deep_research")["budget"] > bench.default_caps("search")["budget"]
    assert bench.run_options("search", {}) == {"search": "corpus"}
    assert bench.run_options("foundation", {}) == {}
    with pytest.raises(AgentHopError, match="no tools"):
        bench.run_options("foundation", {"search": "native"})
    ep = bench.episode(*bench.sample_parts(rel, rel.items[0]), condition="search", caps=None, seed=0, attempt=0,
                       options={"search": "native"})
    assert ep.context.native_search and ep.context.tools == [] and ep.text_is_answer
    ep = bench.episode(*bench.sample_parts(rel, rel.items[0]), condition="foundation", caps=None, seed=0, attempt=0)
    assert not ep.context.native_search and ep.context.tools == []
    assert load_panel(PANEL).benchmark == "sciexplore"


def test_panel_runs_store_paradigm_answers_and_calls(sx_runs) -> None:
    rel, runs, db = sx_runs
    rows = _q(db, "SELECT benchmark, paradigm, condition, budget_total, max_turns FROM raw.runs ORDER BY model")
    assert rows == [("sciexplore", "deep_research", "deep_research", 150, 80),
                    ("sciexplore", "search", "search", 30, 20),
                    ("sciexplore", "foundation", "foundation", 0, 1),
                    ("sciexplore", "search", "search", 30, 20)]
    # the final text and its parsed answer; score is left to the judges
    [(text, aj, score)] = _q(db, "SELECT predicted_answer, answer_json, score FROM raw.trajectories t JOIN raw.runs "
                                 "USING (run_id) WHERE model = 'delve-dr' AND sample_id = 't1_001'")
    assert text.startswith("Final answer:") and json.loads(aj) == text.split(":", 1)[1].strip() and score is None
    calls = _q(db, "SELECT tool, search_query IS NOT NULL, paper_id IS NOT NULL, status, output_chars > 0 "
                   "FROM raw.tool_calls c JOIN raw.runs USING (run_id) WHERE model = 'delve-dr' "
                   "AND sample_id = 't1_001' ORDER BY seq")
    assert calls and all(s == "ok" and size for _, _, _, s, size in calls)
    assert all(q for t, q, _, _, _ in calls if t != "open_page") and all(p for t, _, p, _, _ in calls if t == "open_page")
    # every harness run reaches SciExplore's tables, judged by normalized-match
    assert _q(db, "SELECT count(*) FROM raw.sciexplore_runs") == [(4,)]
    assert _q(db, "SELECT count(*) FROM raw.sciexplore_responses") == [(4 * 103,)]
    assert _q(db, "SELECT count(DISTINCT run_id) FROM raw.judgments WHERE judge = 'normalized-match'") == [(4,)]


@pytest.fixture(scope="session")
def sx_marts(sx_runs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the panel's warehouse with SciExplore's dbt models built."""
    _, _, db = sx_runs
    work = tmp_path_factory.mktemp("sx_marts")
    copy = work / "w.duckdb"
    copy.write_bytes(db.read_bytes())
    proc = run_dbt_build(copy, work, *SELECT)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return copy


def test_the_panel_shows_the_papers_findings_in_the_marts(sx_marts: Path) -> None:
    """The demo panel run through the harness, read back from the marts (normalized-match)."""
    nm = "judge = 'normalized-match'"
    effort = dict(_q(sx_marts, "SELECT s.model, sum(e.search_calls) / sum(e.n_tasks) FROM main.sciexplore_search_effort e "
                               f"JOIN main.sciexplore_summary s USING (run_id, judge) WHERE {nm} GROUP BY 1"))
    overall = dict(_q(sx_marts, f"SELECT model, overall FROM main.sciexplore_summary WHERE {nm}"))
    assert set(effort) == set(overall) == {"mnemo-guess", "skim-search", "hunch-check", "delve-dr"}
    # the deep researcher searches most and scores highest (strictly)
    assert max(effort, key=effort.get) == "delve-dr" and sorted(effort.values())[-2] < effort["delve-dr"]
    assert max(overall, key=overall.get) == "delve-dr" and sorted(overall.values())[-2] < overall["delve-dr"]
    # the foundation guesser makes no search, in any task
    assert _q(sx_marts, "SELECT max(o.n_search_calls), sum(o.n_search_calls) FROM main.sciexplore_task_outcome o "
                        f"JOIN main.sciexplore_summary s USING (run_id, judge) WHERE {nm} AND s.model = 'mnemo-guess'") \
        == [(0, 0)]
    # premature abandonment: the shallow searcher's not-attempted tasks came after at most two searches
    [(n_abandoned, most)] = _q(sx_marts, "SELECT count(*), max(o.n_search_calls) FROM main.sciexplore_task_outcome o "
                                         f"JOIN main.sciexplore_summary s USING (run_id, judge) WHERE {nm} "
                                         "AND s.model = 'skim-search' AND o.status = 'not_attempted'")
    assert n_abandoned > 0 and most <= 2
    # the marts count every search the runs recorded
    [(recorded,)] = _q(sx_marts, "SELECT count(*) FROM raw.tool_calls WHERE tool IN "
                                 "('web_search', 'scholar_search', 'db_search') AND status = 'ok'")
    [(counted,)] = _q(sx_marts, f"SELECT sum(search_calls) FROM main.sciexplore_search_effort WHERE {nm}")
    assert counted == recorded > 0
    # deep research is good but not perfect on T1
    [(t1,)] = _q(sx_marts, f"SELECT t1_fem FROM main.sciexplore_summary WHERE {nm} AND model = 'delve-dr'")
    assert 0.5 < t1 < 1.0


def test_rerun_resumes_and_reingest_is_unchanged(sx_runs, tmp_path: Path) -> None:
    rel, runs, db = sx_runs
    before = _q(db, "SELECT count(*) FROM raw.judgments")
    panel = tmp_path / "panel.yaml"
    panel.write_text(PANEL.read_text().replace("replicates: 4", "replicates: 1"))
    r = CliRunner().invoke(harness_main, ["run", "--panel", str(panel), "--data", str(rel), "--out", str(runs),
                                          "--no-progress", "--processes", "1"], catch_exceptions=False)
    assert r.exit_code == 0 and "n=103/103" in r.output
    copy = tmp_path / "w.duckdb"
    copy.write_bytes(db.read_bytes())
    r = CliRunner().invoke(ingest_main, ["--db", str(copy), "--benchmark", str(rel), "--runs", str(runs)],
                           catch_exceptions=False)
    assert r.exit_code == 0 and "4 unchanged" in r.output, r.output
    assert _q(copy, "SELECT count(*) FROM raw.judgments") == before


def test_bad_run_options_are_refused(sx_runs) -> None:
    rel, _, _ = sx_runs
    r = CliRunner().invoke(harness_main, ["run", "--benchmark", "sciexplore", "--data", str(rel), "--model",
                                          "mnemo-guess", "--paradigm", "foundation", "--search", "native"])
    assert r.exit_code == 2 and "no tools" in r.output
    r = CliRunner().invoke(harness_main, ["run", "--benchmark", "sciexplore", "--data", str(rel), "--model",
                                          "mnemo-guess", "--paradigm", "closed_book"])
    assert r.exit_code == 2 and "not a condition of sciexplore" in r.output


def test_delete_run_removes_the_sciexplore_rows(sx_runs, tmp_path: Path) -> None:
    """``--delete-run`` of a harness run and of a responses-file run: no row of either stays in any
    SciExplore table (verdicts of every judge included); the other runs keep theirs."""
    rel, _, db = sx_runs
    copy = tmp_path / "w.duckdb"
    copy.write_bytes(db.read_bytes())
    line = {"model": "ext-dr", "paradigm": "deep_research", "replicate": 0, "task_id": "t1_001", "status": "answered",
            "answer": "X", "trace": [{"tool": "web_search", "query": "q", "result_chars": 5}], "prompt_tokens": 1,
            "completion_tokens": 1, "wall_time_s": None}
    resp = tmp_path / "r.jsonl"
    resp.write_text(json.dumps(line) + "\n")
    judg = tmp_path / "j.jsonl"
    judg.write_text(json.dumps({"model": "ext-dr", "paradigm": "deep_research", "replicate": 0, "task_id": "t1_001",
                                "unit": "answer", "verdict": "correct", "judge": "human", "judge_version": "1"}) + "\n")
    for args in (["--responses", str(resp)], ["--judgments", str(judg)]):
        r = CliRunner().invoke(ingest_main, ["--db", str(copy), *args], catch_exceptions=False)
        assert r.exit_code == 0, r.output
    [(harness_run,)] = _q(copy, "SELECT run_id FROM raw.runs WHERE model = 'skim-search'")
    [(file_run,)] = _q(copy, "SELECT run_id FROM raw.sciexplore_runs WHERE model = 'ext-dr'")
    sx_tables = ("sciexplore_runs", "sciexplore_responses", "sciexplore_trace", "judgments")
    core_tables = ("runs", "trajectories", "turns", "tool_calls")

    def counts(tables: tuple[str, ...], run_id: str) -> dict[str, int]:
        return {t: _q(copy, f"SELECT count(*) FROM raw.{t} WHERE run_id = '{run_id}'")[0][0] for t in tables}

    def others(tables: tuple[str, ...]) -> dict[str, int]:
        return {t: _q(copy, f"SELECT count(*) FROM raw.{t} WHERE run_id NOT IN ('{harness_run}', '{file_run}')")[0][0]
                for t in tables}

    before = counts(sx_tables, harness_run)
    assert all(before.values()) and all(counts(sx_tables, file_run).values())
    kept = others(sx_tables + core_tables)
    r = CliRunner().invoke(ingest_main, ["--db", str(copy), "--delete-run", harness_run], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert f"sciexplore_responses={before['sciexplore_responses']}" in r.output
    assert f"judgments={before['judgments']}" in r.output
    assert counts(sx_tables + core_tables, harness_run) == dict.fromkeys(sx_tables + core_tables, 0)
    # a responses-file run has no raw.runs row: the SciExplore entry names it, and its rows go too
    r = CliRunner().invoke(ingest_main, ["--db", str(copy), "--delete-run", file_run], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert counts(sx_tables, file_run) == dict.fromkeys(sx_tables, 0)
    assert others(sx_tables + core_tables) == kept
    assert _q(copy, "SELECT run_id, action FROM raw.ingest_log WHERE action = 'deleted' ORDER BY load_id") == [
        (harness_run, "deleted"), (file_run, "deleted")]
    r = CliRunner().invoke(ingest_main, ["--db", str(copy), "--delete-run", file_run])
    assert r.exit_code != 0 and "no run" in r.output and "nothing was deleted" in r.output
