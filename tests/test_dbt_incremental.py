"""Incremental builds (docs/ingest.md#incremental-builds): after adding, replacing and deleting a run,
an incremental `dbt build` gives the same tables as `dbt build --full-refresh`, row for row, and it
recomputed only the runs that changed (pass_k, keyed by run group: only the groups they touch).

Starts from a copy of the session's warehouse (tests/conftest.py::built_warehouse, already built);
each step builds incrementally, then builds a copy of the result with --full-refresh and compares
every table of `main` and `intermediate` exactly (no rounding).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from conftest import BuiltWarehouse, _check, cli, dbt_env, run_dbt_build

#: what describes a build rather than the data (timestamps of the build)
NOT_DATA = frozenset({"build_info", "sciexplore_build_info", "incremental_runs", "node_versions"})

#: a run of a new model (a new run group), and a third repeat of tests/fixtures/panel_small.yaml's `verifier`
#: (the same settings: it joins that model's run group, whose pass_k rows then go up to k = 3)
EXTRA_PANEL = """\
defaults: {backend: sim, conditions: [full], replicates: 1}
models:
  - {name: incremental-probe, backend: sim, family: sim-test, tier: open_frontier, sim: {archetype: balanced}}
  - {name: verifier, backend: sim, family: sim-test, tier: closed_frontier, sim: {archetype: verifier}, replicates: 3}
"""
JOINED_MODEL = "verifier"


def table_digests(db: Path) -> dict[str, tuple[int, str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = con.execute(
            "select table_schema, table_name from information_schema.tables "
            "where table_schema in ('main', 'intermediate') and table_type = 'BASE TABLE'"
        ).fetchall()
        out = {}
        for schema, name in names:
            if name in NOT_DATA:
                continue
            rows = sorted(repr(r) for r in con.execute(f'select * from {schema}."{name}"').fetchall())
            out[f"{schema}.{name}"] = (len(rows), hashlib.sha256("\n".join(rows).encode()).hexdigest())
        return out
    finally:
        con.close()


def rebuilt_runs(db: Path, model: str) -> set[str]:
    """The runs the latest build of ``model`` computed."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "select run_id from intermediate.incremental_runs where model = ? and invocation_id = "
            "(select arg_max(invocation_id, built_at) from intermediate.incremental_runs where model = ?)",
            [model, model],
        ).fetchall()
        return {r[0] for r in rows}
    finally:
        con.close()


def run_ids(db: Path, table: str = "main.fct_trajectory") -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {r[0] for r in con.execute(f"select distinct run_id from {table}").fetchall()}
    finally:
        con.close()


def pass_k_depth(db: Path, model: str) -> dict[str, int]:
    """run_group -> the largest k of pass_k, for the AgentHop groups of `model`."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return dict(con.execute("select run_group, max(k) from main.pass_k where benchmark = 'agenthop' "
                                "and model = ? group by run_group", [model]).fetchall())
    finally:
        con.close()


def groups_of(db: Path, runs: set[str]) -> set[str]:
    """The run groups of `runs`, and those of runs without a raw.runs row (SciExplore's imported runs, which
    have no version: pass_k recomputes their groups at every build), among the groups with binary values."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "select distinct v.run_group from main.item_metric_values as v join main.metric_defs as d "
            "using (benchmark, metric) where d.kind = 'binary' and v.value is not null "
            "and (list_contains(?, v.run_id) or v.run_id not in (select run_id from raw.runs))", [sorted(runs)]
        ).fetchall()
        return {r[0] for r in rows}
    finally:
        con.close()


def pass_k_groups(work: Path) -> set[str] | None:
    """The run groups whose pass_k rows the latest build deleted and computed again (the list its pre-hook
    and query name); None when it computed every group (a full build names none)."""
    sql = (work / "target" / "run" / "agenthop" / "models_sql" / "marts" / "core" / "pass_k.sql").read_text()
    found = re.search(r'delete from \S*pass_k\S* where "run_group" in \(([^)]*)\)', sql)
    if found is None:
        return None if re.search(r"delete from \S*pass_k\S*\s*;", sql) else set()
    return set(re.findall(r"'((?:[^']|'')*)'", found.group(1)))


def node_versions(db: Path) -> dict[str, tuple[str, str]]:
    """model -> (version, invocation_id) of the views and tables an unchanged build may skip."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {r[0]: (r[1], r[2]) for r in con.execute(
            "select model, version, invocation_id from intermediate.node_versions").fetchall()}
    finally:
        con.close()


#: models whose build statement an incremental build should run in place (table_in_place.sql)
IN_PLACE = {"panel_members": "models_sql/marts/agenthop/panel_members.sql",
            "fct_trajectory": "models_sql/marts/agenthop/fct_trajectory.sql"}


def main_statements(work: Path) -> dict[str, str]:
    """How each of IN_PLACE's models wrote its table in the latest build: 'insert' (rows into the table
    in place, after deleting those it replaces) or 'create' (a new table), the first of the two in the
    statement it ran."""
    out = {}
    for name, path in IN_PLACE.items():
        sql = (work / "target" / "run" / "agenthop" / path).read_text()
        out[name] = next(w for w in sql.lower().split() if w in ("insert", "create"))
    return out


def build_messages(work: Path) -> dict[str, str | None]:
    """node unique id -> the message of the latest build ('unchanged': a model or seed it left as it was)."""
    results = json.loads((work / "target" / "run_results.json").read_text())["results"]
    return {r["unique_id"]: r.get("message") for r in results}


#: a full-refresh build that only gives the tables to compare with (the data and unit tests ran in the
#: incremental build it is compared with, and no table depends on them)
TABLES_ONLY = ("--exclude-resource-type", "test", "unit_test")


def assert_equals_full_refresh(db: Path, work: Path, step: str,
                               *reference: str) -> tuple[dict[str, str], dict[str, str | None], set[str] | None]:
    """Builds `db` incrementally, compares it with a --full-refresh build of a copy (with the extra
    arguments `reference`); returns the incremental build's main_statements, build_messages and
    pass_k_groups."""
    _check(run_dbt_build(db, work), f"incremental dbt build after {step}")
    statements, messages, groups = main_statements(work), build_messages(work), pass_k_groups(work)
    # the copy keeps the file name, so both builds reuse one parse of the project (conftest.run_dbt)
    (work / f"full_{step}").mkdir()
    full = work / f"full_{step}" / db.name
    shutil.copyfile(db, full)
    _check(run_dbt_build(full, work, "--full-refresh", *reference), f"dbt build --full-refresh after {step}")
    inc, ref = table_digests(db), table_digests(full)
    assert "main.fct_trajectory" in inc and "intermediate.int_tool_calls_final" in inc
    differ = sorted(k for k in set(inc) | set(ref) if inc.get(k) != ref.get(k))
    assert not differ, f"after {step}, incremental and full-refresh builds differ in {differ}"
    return statements, messages, groups


@pytest.fixture(scope="module")
def incremental_steps(built_warehouse: BuiltWarehouse, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Runs the three steps in order (each test below checks one of them)."""
    work = tmp_path_factory.mktemp("incremental")
    db = work / "warehouse.duckdb"
    shutil.copyfile(built_warehouse.db, db)
    env = dbt_env(db)
    before = run_ids(db)
    out: dict[str, object] = {"before": before, "versions_before": node_versions(db)}

    # (1) add a run
    panel, runs = work / "panel.yaml", work / "runs"
    panel.write_text(EXTRA_PANEL)
    _check(subprocess.run([cli("agenthop-harness"), "run", "--panel", str(panel), "--data", str(built_warehouse.benchmark),
                           "--out", str(runs), "--no-progress"], env=env, capture_output=True, text=True), "harness run")
    for p in list(runs.iterdir()):
        if (built_warehouse.runs / p.name).exists():
            shutil.rmtree(p)  # the repeats the session's warehouse already holds
    (new_dir, joined_dir) = sorted((p for p in runs.iterdir() if p.is_dir()),
                                   key=lambda p: p.name.startswith(f"{JOINED_MODEL}__"))
    assert joined_dir.name.startswith(f"{JOINED_MODEL}__") and not new_dir.name.startswith(f"{JOINED_MODEL}__")
    out["depth_before"] = pass_k_depth(db, JOINED_MODEL)
    _check(subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--runs", str(runs)], env=env,
                          capture_output=True, text=True), "ingest of the added runs")
    out["statements_after_add"], out["messages_after_add"], out["pass_k_groups_after_add"] = \
        assert_equals_full_refresh(db, work, "adding")
    out["statements_full_refresh"] = main_statements(work)
    out["versions_after_add"] = node_versions(db)
    out["versions_full_refresh"] = node_versions(work / "full_adding" / db.name)
    out["added"], out["joined"] = new_dir.name, joined_dir.name
    out["rebuilt_after_add"] = rebuilt_runs(db, "fct_trajectory")
    out["runs_after_add"] = run_ids(db)
    out["groups_of_added"] = groups_of(db, {new_dir.name, joined_dir.name})
    out["depth_after_add"] = pass_k_depth(db, JOINED_MODEL)

    # (2) replace the run that joined a group: the same run, changed (its trajectories took twice as long
    # and none is correct any more), re-ingested
    for part in joined_dir.glob("trajectories-*.parquet"):
        table = pq.read_table(part)
        i = table.schema.get_field_index("wall_time_s")
        table = table.set_column(i, table.schema.field(i), pc.multiply(table.column(i), 2.0))
        for name, value in (("is_correct", False), ("score", 0.0)):
            i = table.schema.get_field_index(name)
            table = table.set_column(i, table.schema.field(i), pa.array([value] * len(table), table.schema.field(i).type))
        pq.write_table(table, part)
    proc = subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--runs", str(runs)], env=env,
                          capture_output=True, text=True)
    _check(proc, "ingest of the replaced run")
    out["replace_summary"] = proc.stdout
    _, _, out["pass_k_groups_after_replace"] = assert_equals_full_refresh(db, work, "replacing", *TABLES_ONLY)
    out["rebuilt_after_replace"] = rebuilt_runs(db, "fct_trajectory")
    out["groups_of_replaced"] = groups_of(db, {joined_dir.name})

    # (3) delete one of the session's original runs of the group the run joined
    gone = min(r for r in before if r.startswith(f"{JOINED_MODEL}__"))
    _check(subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--delete-run", gone], env=env,
                          capture_output=True, text=True), "delete of a run")
    _, _, out["pass_k_groups_after_delete"] = assert_equals_full_refresh(db, work, "deleting", *TABLES_ONLY)
    out["deleted"] = gone
    out["runs_after_delete"] = run_ids(db)
    out["calls_after_delete"] = run_ids(db, "main.fct_tool_call")
    out["groups_after_delete"] = groups_of(db, set())
    out["depth_after_delete"] = pass_k_depth(db, JOINED_MODEL)
    out["db"] = db
    return out


def test_adding_a_run_builds_only_that_run(incremental_steps: dict[str, object]) -> None:
    added = {incremental_steps["added"], incremental_steps["joined"]}
    assert incremental_steps["rebuilt_after_add"] == added
    assert incremental_steps["runs_after_add"] == incremental_steps["before"] | added


def test_pass_k_recomputes_only_the_groups_a_change_touches(incremental_steps: dict[str, object]) -> None:
    """pass_k is incremental by run group: adding two runs (one of a new model, one more repeat of
    `verifier`) recomputes their two groups (and those of SciExplore's imported runs, which have no
    version), replacing a run its group, deleting a run the group that lost it; every other group's rows
    are kept as they were (and still equal a full refresh's, assert_equals_full_refresh)."""
    before, after_add = incremental_steps["depth_before"], incremental_steps["depth_after_add"]
    after_delete = incremental_steps["depth_after_delete"]
    assert isinstance(before, dict) and isinstance(after_add, dict) and isinstance(after_delete, dict)
    # the added repeat joined verifier's group: its pass_k rows go up to k = 3, then 2 once a repeat is deleted
    ((group, depth),) = before.items()
    assert depth == 2 and after_add == {group: 3} and after_delete == {group: 2}
    imported = incremental_steps["groups_after_delete"]
    assert isinstance(imported, set) and imported, "the session's warehouse has SciExplore's imported runs"
    added = incremental_steps["groups_of_added"]
    assert isinstance(added, set) and group in added and len(added - imported) == 2
    assert incremental_steps["pass_k_groups_after_add"] == added
    assert incremental_steps["pass_k_groups_after_replace"] == incremental_steps["groups_of_replaced"] == imported | {group}
    assert incremental_steps["pass_k_groups_after_delete"] == imported | {group}


def test_incremental_build_works_in_place(incremental_steps: dict[str, object]) -> None:
    """A table mart is refilled and an incremental mart appended to in place (no new table); a full
    refresh creates them again."""
    assert incremental_steps["statements_after_add"] == {"panel_members": "insert", "fct_trajectory": "insert"}
    assert incremental_steps["statements_full_refresh"] == {"panel_members": "create", "fct_trajectory": "create"}


def test_unchanged_views_are_not_created_again(incremental_steps: dict[str, object]) -> None:
    """Adding a run changes no view's definition: the incremental build leaves every view as it was
    (skip_unchanged.sql); a full refresh creates them again."""
    before, after = incremental_steps["versions_before"], incremental_steps["versions_after_add"]
    full = incremental_steps["versions_full_refresh"]
    assert {"stg_harness__runs", "stg_benchmark__items", "stg_sciexplore__runs"} <= set(before)
    # tables with data are built at every build (incremental ones by run); this warehouse has SciExplore data
    assert not {"fct_trajectory", "panel_members", "sciexplore_summary"} & set(before)
    assert after == before
    assert set(full) == set(before)
    assert all(full[m][1] != before[m][1] for m in before), "a full refresh must build every node again"


#: data tests of benchmark-only models and of the seed (their inputs are known), and of run data (never known)
BENCHMARK_TEST = "test.agenthop.source_unique_combination_benchmark_recall_labels_sample_id__label_index"
SEED_TEST = "test.agenthop.row_checks_model_prices"
RUN_TEST = "test.agenthop.row_checks_fct_trajectory"


def _records(versions: dict[str, tuple[str, str]], prefix: str) -> dict[str, tuple[str, str]]:
    return {k: v for k, v in versions.items() if k.startswith(prefix)}


def test_tests_of_unchanged_data_are_not_run_again(incremental_steps: dict[str, object]) -> None:
    """Adding a run leaves the benchmark tables, the seed and the tables built only from them as they
    were: their data tests, which passed at the earlier build, are not run again (their records keep
    that build's invocation), nor is int_label_sections rebuilt or the seed loaded; tests of run data
    are never recorded (always run); a full refresh runs every test and records it again."""
    before, after = incremental_steps["versions_before"], incremental_steps["versions_after_add"]
    full = incremental_steps["versions_full_refresh"]
    for prefix in (BENCHMARK_TEST, SEED_TEST):
        assert len(_records(before, prefix)) == 1, prefix
        assert _records(after, prefix) == _records(before, prefix)
        ((key, (_, inv)),) = _records(full, prefix).items()
        assert inv != before[key][1]
    assert not _records(before, RUN_TEST) and not _records(after, RUN_TEST)
    for name in ("int_label_sections", "model_prices"):
        assert after[name] == before[name] and full[name][1] != before[name][1]
    messages = incremental_steps["messages_after_add"]
    assert isinstance(messages, dict)
    assert messages["model.agenthop.int_label_sections"] == messages["seed.agenthop.model_prices"] == "unchanged"


def test_replacing_a_run_rebuilds_it(incremental_steps: dict[str, object]) -> None:
    assert "1 replaced" in str(incremental_steps["replace_summary"])
    assert incremental_steps["rebuilt_after_replace"] == {incremental_steps["joined"]}


def test_deleting_a_run_drops_its_rows(incremental_steps: dict[str, object]) -> None:
    gone = incremental_steps["deleted"]
    assert gone not in incremental_steps["runs_after_delete"]
    assert gone not in incremental_steps["calls_after_delete"]
    added = {incremental_steps["added"], incremental_steps["joined"]}
    assert incremental_steps["runs_after_delete"] == (incremental_steps["before"] | added) - {gone}


def test_delete_of_an_unknown_run_is_an_error(incremental_steps: dict[str, object], tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    shutil.copyfile(Path(str(incremental_steps["db"])), db)
    proc = subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--delete-run", "no-such-run"],
                          env=dbt_env(db), capture_output=True, text=True)
    assert proc.returncode != 0
    assert "no run 'no-such-run' is loaded; nothing was deleted" in proc.stderr
    assert "Traceback" not in proc.stderr
