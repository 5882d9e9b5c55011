"""Builds of the tables the project writes in place (docs/ingest.md#incremental-builds), beside the run
steps of test_dbt_incremental.py (a file of its own, so that `make test`'s two workers can build both at
once): a new benchmark release rebuilds and tests again what it changes, and the marts' contracts (their
types and check constraints) hold on an in-place build.

Each test starts from a copy of the session's warehouse (tests/conftest.py::built_warehouse, already built).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import yaml

from conftest import REPO, BuiltWarehouse, _check, cli, dbt_env, run_dbt
from tests.test_dbt_incremental import (BENCHMARK_TEST, SEED_TEST, TABLES_ONLY, _records, assert_equals_full_refresh,
                                        node_versions, rebuilt_runs, run_ids, table_digests)


def test_a_new_release_rebuilds_and_tests_again(built_warehouse: BuiltWarehouse, tmp_path: Path) -> None:
    """A new benchmark release (every recall label's section renamed, loaded with --force) changes what
    int_label_sections and dq_label_resolution hold: the incremental build rebuilds them and runs the
    data tests of the release's tables again (the result equals a full refresh row for row), while the
    seed and its tests, whose inputs did not change, are left as they were."""
    db = tmp_path / "warehouse.duckdb"
    shutil.copyfile(built_warehouse.db, db)
    release = tmp_path / "release"
    shutil.copytree(built_warehouse.benchmark, release)
    labels = release / "audit" / "recall_labels.jsonl"
    lines = []
    for line in labels.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for label in row["analysis"]["section_recall_labels"]:
            label["section"] = f"{label['section']} (renamed)"
        lines.append(json.dumps(row))
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = node_versions(db)
    proc = subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(release), "--force"],
                          env=dbt_env(db), capture_output=True, text=True)
    _check(proc, "ingest of the new release")
    assert "benchmark replaced" in proc.stdout
    _, messages, _ = assert_equals_full_refresh(db, tmp_path, "a new release", *TABLES_ONLY)
    after = node_versions(db)
    assert messages["model.agenthop.int_label_sections"] == "OK"
    assert messages["seed.agenthop.model_prices"] == "unchanged"
    assert after["int_label_sections"][1] != before["int_label_sections"][1]
    ((test, (_, inv)),) = _records(after, BENCHMARK_TEST).items()
    assert inv != before[test][1], "the release's data tests must run again"
    assert _records(after, SEED_TEST) == _records(before, SEED_TEST)


def copy_project(tmp_path: Path) -> Path:
    """A copy of the dbt project (to edit) under `tmp_path`."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("dbt_project.yml", "profiles.yml", "selectors.yml"):
        shutil.copyfile(REPO / name, project / name)
    for name in ("dbt_support", "models_sql"):
        shutil.copytree(REPO / name, project / name)
    return project


def build_project(project: Path, db: Path, work: Path, *select: str) -> subprocess.CompletedProcess[str]:
    """`dbt build --select ...` of `project` against `db`, without unit tests (as the everyday build)."""
    return run_dbt(db, work, "build", "--select", *select, "--exclude-resource-type", "unit_test", project=project)


def check_constraints(db: Path) -> dict[str, int]:
    """table -> number of its CHECK constraints (tables of `main` that have any)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return dict(con.execute("select table_name, count(*) from duckdb_constraints() where schema_name = 'main' "
                                "and constraint_type = 'CHECK' group by all").fetchall())
    finally:
        con.close()


def test_an_edited_contract_type_fails_the_in_place_build(built_warehouse: BuiltWarehouse, tmp_path: Path) -> None:
    """An in-place build checks a model's contract against its YAML as dbt would (table_in_place.sql):
    a declared type the query does not give fails the model with dbt's contract message, and the
    table keeps its rows."""
    project = copy_project(tmp_path)
    panel = project / "models_sql" / "marts" / "agenthop" / "_panel.yml"
    text = panel.read_text()
    declared = "      - name: n_replicates\n        data_type: integer\n"
    assert declared in text
    panel.write_text(text.replace(declared, declared.replace("integer", "bigint")))
    db = tmp_path / "warehouse.duckdb"
    shutil.copyfile(built_warehouse.db, db)
    before = table_digests(db)["main.panel_members"]
    proc = build_project(project, db, tmp_path, "panel_members")
    assert proc.returncode != 0
    assert "enforced contract that failed" in proc.stdout and "n_replicates" in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    assert table_digests(db)["main.panel_members"] == before


#: (model, its SQL file, an edit that breaks one of the check constraints of its contract)
BROKEN_RULES = {
    "panel_members": ("models_sql/marts/agenthop/panel_members.sql",
                      "(count(*) over (partition by condition, model))::integer as n_replicates",
                      "0::integer as n_replicates"),
    "run_summary": ("models_sql/marts/core/run_summary.sql",
                    "(per_run.n_error::double / per_run.n)::double as error_rate", "2.0::double as error_rate"),
}


def test_a_broken_rule_fails_the_model_and_keeps_its_table(built_warehouse: BuiltWarehouse, tmp_path: Path) -> None:
    """The marts' row rules are check constraints of their contracts, checked by DuckDB on every row
    inserted: a query that breaks one (n_replicates 0 in the table panel_members, error_rate 2 in the
    incremental run_summary, both built in place) fails the model with DuckDB's message naming the
    table and the expression, and the table keeps its rows (the insert's transaction is rolled back)."""
    project = copy_project(tmp_path)
    for path, good, bad in BROKEN_RULES.values():
        sql = project / path
        assert good in sql.read_text()
        sql.write_text(sql.read_text().replace(good, bad))
    db = tmp_path / "warehouse.duckdb"
    shutil.copyfile(built_warehouse.db, db)
    before = table_digests(db)
    proc = build_project(project, db, tmp_path, *BROKEN_RULES)
    assert proc.returncode != 0
    for model, rule in (("panel_members", "n_replicates >= 1"), ("run_summary", "error_rate")):
        failed = re.search(rf'CHECK constraint failed on table "{model}" with expression CHECK\((.*)\)', proc.stdout)
        assert failed and rule in failed.group(1), proc.stdout[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    after = table_digests(db)
    for model in BROKEN_RULES:
        assert after[f"main.{model}"] == before[f"main.{model}"]


def test_tables_written_without_the_checks_get_them(built_warehouse: BuiltWarehouse, tmp_path: Path) -> None:
    """A warehouse whose marts were written before their contracts declared check constraints (built
    with the same YAML less the checks) gets them at the next `dbt build`, not a full refresh: the table
    and the incremental mart whose checks differ from the contract are created again, the incremental
    one from every run, with the same rows (table_in_place.sql)."""
    old = copy_project(tmp_path)
    for yml in (old / "models_sql" / "marts").rglob("_*.yml"):
        doc = yaml.safe_load(yml.read_text())
        for model in doc.get("models", []):
            for owner in (model, *model.get("columns", [])):
                if "constraints" in owner:
                    owner["constraints"] = [c for c in owner["constraints"] if c.get("type") != "check"]
        yml.write_text(yaml.safe_dump(doc, sort_keys=False))
    db = tmp_path / "warehouse.duckdb"
    shutil.copyfile(built_warehouse.db, db)
    models = ("panel_members", "run_summary")
    before = table_digests(db)
    _check(build_project(old, db, tmp_path / "old", *models), "dbt build of the project without checks")
    assert not set(models) & set(check_constraints(db))
    _check(build_project(REPO, db, tmp_path / "new", *models), "dbt build of the project after it")
    assert set(models) <= set(check_constraints(db))
    assert check_constraints(db) == check_constraints(built_warehouse.db)
    after = table_digests(db)
    for model in models:
        assert after[f"main.{model}"] == before[f"main.{model}"]
    assert rebuilt_runs(db, "run_summary") == run_ids(db, "main.run_summary")


def test_a_calls_table_written_with_the_display_columns_loses_them(built_warehouse: BuiltWarehouse,
                                                                   tmp_path: Path) -> None:
    """int_tool_calls_final carried the calls' display columns (args_json, answer, ...) for fct_tool_call
    before fct_tool_call took them from staging. A warehouse built then has them in that table; the next
    `dbt build` (which recomputes every run of the model, its SQL having changed) drops them instead of
    failing on the schema change, and writes the same rows as a build from nothing."""
    db = tmp_path / "warehouse.duckdb"
    shutil.copyfile(built_warehouse.db, db)
    table = "intermediate.int_tool_calls_final"
    con = duckdb.connect(str(db))
    try:
        for name, kind in (("call_index", "integer"), ("args_json", "varchar"), ("answer", "varchar")):
            con.execute(f"alter table {table} add column {name} {kind}")
        con.execute(f"update {table} set args_json = '{{}}'")
        # an edited model: no run has a version recorded for it
        con.execute("delete from intermediate.incremental_runs where model = 'int_tool_calls_final'")
    finally:
        con.close()
    _check(build_project(REPO, db, tmp_path / "new", "int_tool_calls_final"), "dbt build after the old table")

    def columns(path: Path) -> list[str]:
        with duckdb.connect(str(path), read_only=True) as c:
            return [r[0] for r in c.execute(f"select * from {table} limit 0").description]

    assert columns(db) == columns(built_warehouse.db)
    assert "args_json" not in columns(db)
    assert table_digests(db)[table] == table_digests(built_warehouse.db)[table]
    assert rebuilt_runs(db, "int_tool_calls_final") == run_ids(db)
