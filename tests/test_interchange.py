"""Every Eval Ever and ATIF: exports of the test warehouse pass the formats' official validators, import
back to the same rows, and published files of both formats import (docs/interchange.md)."""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from conftest import BuiltWarehouse, cli, dbt_env
from interchange_validators import (atif_errors, eee_validator, harbor_validator, json_schema_errors, parse_results,
                                    run_harbor)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "interchange"


def run(*args: str | Path, db: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dbt_env(db) if db is not None else None
    return subprocess.run([cli(str(args[0])), *map(str, args[1:])], capture_output=True, text=True, env=env)


def ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@dataclass(frozen=True)
class Exported:
    eee: Path
    atif: Path
    eee_again: Path


@pytest.fixture(scope="module")
def exported(built_warehouse: BuiltWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Exported:
    out = tmp_path_factory.mktemp("interchange")
    db = built_warehouse.db
    ok(run("agenthop-report", "export", "--format", "eee", "--out", out / "eee", "--db", db))
    ok(run("agenthop-report", "export", "--format", "eee", "--out", out / "eee2", "--db", db))
    ok(run("agenthop-report", "export", "--format", "atif", "--out", out / "atif", "--db", db))
    return Exported(out / "eee", out / "atif", out / "eee2")


@pytest.fixture(scope="session")
def eee_cli():  # type: ignore[no-untyped-def]
    return eee_validator()


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _rows(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


# -- export: layout and validity ------------------------------------------------------------------------------


def test_eee_layout_one_record_per_run_named_by_developer(exported: Exported, built_warehouse: BuiltWarehouse) -> None:
    files = _files(exported.eee)
    assert files and all(f.suffix in (".json", ".jsonl") for f in files)
    records = [f for f in files if f.suffix == ".json"]
    (n_runs,) = _rows(built_warehouse.db, "SELECT count(*) FROM intermediate.int_core_runs")[0]
    assert len(records) == n_runs
    for f in records:
        rel = f.relative_to(exported.eee).parts
        assert len(rel) == 5 and rel[0] == "data", rel
        assert uuid.UUID(f.stem).version == 4 and str(uuid.UUID(f.stem)) == f.stem
        record = json.loads(f.read_text())
        assert record["model_info"]["developer"] == rel[2]
        detail = record.get("detailed_evaluation_results")
        if detail:
            assert detail["file_path"] == "/".join(rel[:-1]) + f"/{f.stem}_samples.jsonl"
            assert (f.parent / f"{f.stem}_samples.jsonl").exists()


def test_eee_export_is_stable(exported: Exported) -> None:
    first = {f.relative_to(exported.eee): f.read_bytes() for f in _files(exported.eee)}
    again = {f.relative_to(exported.eee_again): f.read_bytes() for f in _files(exported.eee_again)}
    assert first == again


def test_eee_export_passes_the_official_validator(exported: Exported, eee_cli) -> None:  # type: ignore[no-untyped-def]
    if eee_cli.cli is None:
        pytest.skip(eee_cli.reason)
    files = _files(exported.eee)
    proc = eee_cli.run(files)
    results = parse_results(proc.stdout)
    assert proc.returncode == 0, [r for r in results if r.get("errors") or r.get("warnings")][:3]
    assert len(results) == len(files) and all(r["valid"] and not r["warnings"] for r in results)


def test_eee_export_passes_the_published_json_schemas(exported: Exported) -> None:
    errors = [e for f in _files(exported.eee) for e in json_schema_errors(f)]
    assert errors == []


def test_eee_aggregate_has_every_metric_with_direction_uncertainty_and_limits(exported: Exported,
                                                                               built_warehouse: BuiltWarehouse) -> None:
    db = built_warehouse.db
    (run_id, model, n_items, mean) = _rows(db, """
        SELECT run_id, any_value(model), count(*), avg(value) FROM main.item_metric_values
        WHERE benchmark = 'agenthop' AND metric = 'correct' GROUP BY run_id ORDER BY run_id LIMIT 1""")[0]
    record = next(json.loads(f.read_text()) for f in exported.eee.rglob("*.json")
                  if json.loads(f.read_text())["source_metadata"]["additional_details"]["run_id"] == run_id)
    (result,) = [r for r in record["evaluation_results"] if r["metric_config"]["metric_id"] == "correct"]
    assert result["score_details"]["score"] == pytest.approx(mean)
    unc = result["score_details"]["uncertainty"]
    assert unc["num_samples"] == n_items and unc["standard_error"]["value"] > 0
    assert unc["confidence_interval"]["lower"] < mean < unc["confidence_interval"]["upper"]
    assert result["metric_config"]["lower_is_better"] is False
    args = result["generation_config"]["generation_args"]
    assert args["eval_limits"]["token_limit"] > 0
    assert "submit_answer" in [t["name"] for t in args["agentic_eval_config"]["available_tools"]]
    assert record["model_info"]["id"] == model


def test_sciexplore_run_exports_each_judges_metrics(exported: Exported, built_warehouse: BuiltWarehouse) -> None:
    metrics = {m for (m,) in _rows(built_warehouse.db, "SELECT DISTINCT metric FROM main.item_metric_values "
                                                        "WHERE benchmark = 'sciexplore' AND value IS NOT NULL")}
    assert len(metrics) > 1
    exported_metrics = set()
    for f in (exported.eee / "data" / "sciexplore").rglob("*.json"):
        exported_metrics |= {r["metric_config"]["metric_id"] for r in json.loads(f.read_text())["evaluation_results"]}
    assert exported_metrics == metrics


def test_eee_instances_carry_epoch_attempt_and_termination(exported: Exported) -> None:
    f = next((exported.eee / "data" / "agenthop").rglob("*_samples.jsonl"))
    row = json.loads(f.read_text().splitlines()[0])
    meta = row["metadata"]
    assert {"epoch", "attempt", "is_final", "terminated_by", "cost", "run_id"} <= set(meta)
    assert all(isinstance(v, str) for v in meta.values())
    assert row["interaction_type"] == "agentic" and row["evaluation"]["tool_calls_count"] > 0
    assert row["token_usage"]["total_tokens"] > 0 and row["sample_hash"]


def test_atif_export_validates_against_harbors_models(exported: Exported, built_warehouse: BuiltWarehouse) -> None:
    files = _files(exported.atif)
    (n_final,) = _rows(built_warehouse.db, "SELECT count(*) FROM raw.trajectories WHERE is_final")[0]
    assert len(files) == n_final and all(f.suffix == ".json" for f in files)
    assert [e for f in files for e in atif_errors(f)] == []


def test_atif_export_passes_harbors_own_validator(exported: Exported, eee_cli) -> None:  # type: ignore[no-untyped-def]
    harbor = harbor_validator(eee_cli)
    if harbor.cli is None:
        pytest.skip(harbor.reason)
    proc = run_harbor(harbor, _files(exported.atif))
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])


# -- import: round trips ---------------------------------------------------------------------------------------

TRAJ = ("SELECT r.model, t.sample_id, t.attempt, t.is_final, t.score, t.is_correct, t.predicted_answer, t.terminated_by, "
        "t.total_prompt_tokens, t.total_completion_tokens, t.cache_read_tokens, t.cache_creation_tokens, t.total_tokens, "
        "t.budget_used, t.total_turns FROM raw.trajectories t JOIN raw.runs r USING (run_id) "
        "WHERE r.benchmark LIKE '%agenthop' {final} ORDER BY ALL")
CALLS = ("SELECT r.model, c.sample_id, c.attempt, c.seq, c.turn, c.tool, c.args_json, c.status, c.cost "
         "FROM raw.tool_calls c JOIN raw.runs r USING (run_id) JOIN raw.trajectories t USING (run_id, sample_id, attempt) "
         "WHERE r.benchmark LIKE '%agenthop' {final} ORDER BY ALL")
TURNS = ("SELECT r.model, x.sample_id, x.attempt, x.turn, x.prompt_tokens, x.completion_tokens, x.cache_read_tokens "
         "FROM raw.turns x JOIN raw.runs r USING (run_id) JOIN raw.trajectories t USING (run_id, sample_id, attempt) "
         "WHERE r.benchmark LIKE '%agenthop' {final} ORDER BY ALL")


@pytest.mark.parametrize("fmt", ["eee", "atif"])
def test_round_trip_gives_the_same_rows(fmt: str, exported: Exported, built_warehouse: BuiltWarehouse,
                                        tmp_path: Path) -> None:
    db = tmp_path / "back.duckdb"
    ok(run("agenthop-ingest", "--db", db, f"--{fmt}", getattr(exported, fmt), db=db))
    final = "AND t.is_final" if fmt == "atif" else ""  # ATIF carries the final attempts
    for sql in (TRAJ, CALLS, TURNS):
        original = _rows(built_warehouse.db, sql.format(final=final))
        back = _rows(db, sql.format(final=final))
        assert original and back == original
    benchmarks = {b for (b,) in _rows(db, "SELECT DISTINCT benchmark FROM raw.runs")}
    assert f"{fmt}:agenthop" in benchmarks
    # every item of the imported benchmark has the hash of the warehouse's own item
    assert _rows(db, f"SELECT sample_id, sample_hash FROM raw.inspect_items WHERE benchmark = '{fmt}:agenthop' "
                     "ORDER BY sample_id") == _rows(built_warehouse.db, "SELECT sample_id, sample_hash FROM raw.items "
                                                                        "ORDER BY sample_id")
    again = run("agenthop-ingest", "--db", db, f"--{fmt}", getattr(exported, fmt), db=db)
    assert " 0 inserted, 0 replaced" in ok(again).stdout


def test_eee_round_trip_keeps_sciexplore_judges_scores(exported: Exported, built_warehouse: BuiltWarehouse,
                                                       tmp_path: Path) -> None:
    db = tmp_path / "back.duckdb"
    ok(run("agenthop-ingest", "--db", db, "--eee", exported.eee / "data" / "sciexplore", db=db))
    original = _rows(built_warehouse.db, "SELECT model, sample_id, metric, round(value, 9) FROM main.item_metric_values "
                                         "WHERE benchmark = 'sciexplore' AND value IS NOT NULL ORDER BY ALL")
    back = _rows(db, "SELECT r.model, s.sample_id, s.scorer || '.' || s.key, round(s.value_num, 9) FROM raw.scores s "
                     "JOIN raw.runs r USING (run_id) ORDER BY ALL")
    assert original and back == original
    directions = dict(_rows(db, "SELECT metric, direction FROM raw.metric_defs WHERE benchmark = 'eee:sciexplore'"))
    assert set(directions) == {m for (_, _, m, _) in original}


# -- published files --------------------------------------------------------------------------------------------


def test_published_eee_record_imports(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ok(run("agenthop-ingest", "--db", db, "--eee", FIXTURES / "eee_published", db=db))
    assert _rows(db, "SELECT benchmark, model, backend FROM raw.runs") == [
        ("eee:demo-source.demo_bench", "demo-org/demo-model", "eee")]
    assert _rows(db, "SELECT sample_id, score, is_correct, predicted_answer, total_tokens FROM raw.trajectories") == [
        ("demo_0001", 1.0, True, "4", 17)]
    # the published hash follows the canonical recipe, recomputed on import
    assert _rows(db, "SELECT sample_hash FROM raw.inspect_items") == [
        ("9c94305328f8e70341f9d1880f4eaa6ea7f93b8922e6a03a8cdcf1924d28db0b",)]
    assert _rows(db, "SELECT metric, direction FROM raw.metric_defs") == [
        ("demo-source.demo_bench.accuracy", "higher_is_better")]


def test_published_atif_trajectory_imports(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ok(run("agenthop-ingest", "--db", db, "--atif", FIXTURES / "atif_published", db=db))
    assert _rows(db, "SELECT run_id, benchmark, model FROM raw.runs") == [("atif-docs-example", "atif:openhands", "gpt-4")]
    assert _rows(db, "SELECT tool, args_json FROM raw.tool_calls") == [
        ("file_write", '{"content": "Hello, world!", "path": "hello.txt"}')]
    assert _rows(db, "SELECT total_prompt_tokens, total_completion_tokens, cache_read_tokens FROM raw.trajectories") == [
        (520, 80, 200)]


def test_aggregate_without_instances_loads_as_reported_results(tmp_path: Path) -> None:
    src = FIXTURES / "eee_published" / "data" / "demo-source" / "demo-org" / "demo-model"
    folder = tmp_path / "data" / "demo-source" / "demo-org" / "demo-model"
    folder.mkdir(parents=True)
    record = json.loads((src / "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json").read_text())
    del record["detailed_evaluation_results"]
    (folder / "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json").write_text(json.dumps(record))
    db = tmp_path / "w.duckdb"
    ok(run("agenthop-ingest", "--db", db, "--eee", tmp_path / "data", db=db))
    assert _rows(db, "SELECT count(*) FROM raw.runs") == [(0,)]
    assert _rows(db, "SELECT benchmark, model, metric, score, direction FROM raw.reported_results") == [
        ("eee:demo-source.demo_bench", "demo-org/demo-model", "demo-source.demo_bench.accuracy", 0.75,
         "higher_is_better")]


# -- bad input ---------------------------------------------------------------------------------------------------

UUID = "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40"


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    src = FIXTURES / "eee_published" / "data" / "demo-source" / "demo-org" / "demo-model"
    folder = tmp_path / "bad" / "data" / "demo-source" / "demo-org" / "demo-model"
    folder.mkdir(parents=True)
    agg, samples = folder / f"{UUID}.json", folder / f"{UUID}_samples.jsonl"
    agg.write_text((src / agg.name).read_text())
    samples.write_text((src / samples.name).read_text())
    return agg, samples


def _reseal(agg: Path, samples: Path) -> None:
    """The aggregate's checksum made to agree with the samples file again."""
    import hashlib

    record = json.loads(agg.read_text())
    record["detailed_evaluation_results"]["checksum"] = hashlib.sha256(samples.read_bytes()).hexdigest()
    agg.write_text(json.dumps(record, indent=2))


def _loaded(tmp_path: Path) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    db = tmp_path / "w.duckdb"
    ok(run("agenthop-ingest", "--db", db, "--atif", FIXTURES / "atif_published", db=db))
    return db


def _refused(db: Path, path: Path, pattern: str, fmt: str = "eee") -> None:
    from conftest import raw_content

    before = raw_content(db)
    proc = run("agenthop-ingest", "--db", db, f"--{fmt}", path, db=db)
    assert proc.returncode == 2, proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert re.search(pattern, lines[0]), lines[0]
    assert raw_content(db) == before


def test_a_record_failing_the_schema_is_refused_naming_file_line_and_field(tmp_path: Path) -> None:
    agg, _ = _pair(tmp_path)
    agg.write_text(agg.read_text().replace('"lower_is_better": false', '"lower_is_better": "no"'))
    line = next(i for i, t in enumerate(agg.read_text().splitlines(), 1) if "lower_is_better" in t)
    _refused(_loaded(tmp_path), agg, rf"{re.escape(str(agg))}: line {line}: field "
                                      r"evaluation_results\[0\]\.metric_config\.lower_is_better: 'no' is not of type")


def test_a_checksum_that_disagrees_is_refused(tmp_path: Path) -> None:
    agg, samples = _pair(tmp_path)
    samples.write_text(samples.read_text().replace('"score": 1.0', '"score": 0.0'))
    _refused(_loaded(tmp_path), agg, rf"{re.escape(str(agg))}: line \d+: field detailed_evaluation_results\.checksum: "
                                      rf"sha256 \w+ disagrees with {samples.name}")


def test_an_instance_of_an_unknown_evaluation_is_refused(tmp_path: Path) -> None:
    agg, samples = _pair(tmp_path)
    samples.write_text(samples.read_text().replace('"evaluation_result_id": "demo-source.demo_bench"',
                                                   '"evaluation_result_id": "demo-source.other_bench"'))
    _reseal(agg, samples)
    _refused(_loaded(tmp_path), agg, rf"{re.escape(str(samples))}: line 1: field evaluation_result_id: unknown "
                                      r"evaluation 'demo-source.other_bench'")


def test_duplicated_keys_are_refused(tmp_path: Path) -> None:
    agg, samples = _pair(tmp_path)
    samples.write_text(samples.read_text().replace('"sample_id": "demo_0001",',
                                                   '"sample_id": "demo_0001", "sample_id": "demo_0002",'))
    _reseal(agg, samples)
    _refused(_loaded(tmp_path), agg, rf"{re.escape(str(samples))}: line 1: field 'sample_id': duplicated key")
    text = agg.read_text().replace('"schema_version": "0.3.0",', '"schema_version": "0.3.0",\n  "schema_version": "0.3.0",')
    agg.write_text(text)
    _refused(_loaded(tmp_path / "x"), agg, rf"{re.escape(str(agg))}: line 3: field 'schema_version': duplicated key")


def test_a_repeated_instance_is_refused(tmp_path: Path) -> None:
    agg, samples = _pair(tmp_path)
    samples.write_text(samples.read_text() * 2)
    record = json.loads(agg.read_text())
    record["detailed_evaluation_results"]["total_rows"] = 2
    agg.write_text(json.dumps(record, indent=2))
    _reseal(agg, samples)
    _refused(_loaded(tmp_path), agg, rf"{re.escape(str(samples))}: line 2: field sample_id: 'demo_0001' .* repeats line 1")


def test_an_atif_result_of_another_steps_call_is_refused(tmp_path: Path) -> None:
    doc = json.loads((FIXTURES / "atif_published" / "openhands__demo" / "agent" / "trajectory.json").read_text())
    doc["steps"][1]["observation"]["results"][0]["source_call_id"] = "call_9"
    path = tmp_path / "t" / "trajectory.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc, indent=2))
    _refused(_loaded(tmp_path), path, rf"{re.escape(str(path))}: line \d+: field "
                                       r"steps\[1\]\.observation\.results\[0\]\.source_call_id: 'call_9' is no tool call",
             fmt="atif")


def test_an_older_warehouse_gains_its_items_hashes(built_warehouse: BuiltWarehouse, tmp_path: Path) -> None:
    import shutil

    db = tmp_path / "old.duckdb"
    shutil.copyfile(built_warehouse.db, db)
    queries = ("SELECT sample_id, sample_hash FROM raw.items ORDER BY ALL",
               "SELECT task_id, sample_hash FROM raw.sciexplore_tasks ORDER BY ALL")
    expected = [_rows(db, q) for q in queries]
    assert all(h is not None for rows in expected for _, h in rows)
    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE raw.items DROP COLUMN sample_hash")  # as a warehouse of the earlier version has it
    con.execute("ALTER TABLE raw.sciexplore_tasks DROP COLUMN sample_hash")
    con.close()
    ok(run("agenthop-ingest", "--db", db, "--atif", FIXTURES / "atif_published", db=db))
    assert [_rows(db, q) for q in queries] == expected
