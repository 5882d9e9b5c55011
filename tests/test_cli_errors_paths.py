"""CLI polish: errors name absolute paths, `sql` suggests the nearest names, and `dbt build` before
ingest leaves no empty warehouse file behind."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenthop.reports.cli import main as report_main
from agenthop.reports.sql_suggest import nearest, suggestion
from conftest import BuiltWarehouse, cli, dbt_env, run_dbt_build


def test_missing_warehouse_is_named_by_its_absolute_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(report_main, ["leaderboard", "--db", "nowhere/agenthop.duckdb"])
    assert result.exit_code == 2
    assert f"warehouse {tmp_path / 'nowhere' / 'agenthop.duckdb'} does not exist" in result.output


@pytest.mark.parametrize("args, shown", [
    (["agenthop-ingest", "--db", "w.duckdb", "--benchmark", "no-such-release"], "no-such-release"),
    (["agenthop-harness", "describe-benchmark", "no-such-release"], "no-such-release"),
    (["agenthop-harness", "run", "--data", "no-such-release", "--model", "verifier"], "no-such-release"),
])
def test_path_errors_are_absolute(args: list[str], shown: str, tmp_path: Path) -> None:
    proc = subprocess.run([cli(args[0]), *args[1:]], cwd=tmp_path, capture_output=True, text=True,
                          env=dbt_env(tmp_path / "w.duckdb"))
    assert proc.returncode == 2, proc.stderr
    assert str(tmp_path / shown) in proc.stderr, proc.stderr
    assert not (tmp_path / "w.duckdb").exists(), "a failed ingest must not leave a warehouse file"


def test_nearest_names() -> None:
    assert nearest("model_sumary", ["model_summary", "model_cost", "cell_accuracy"]) == ["model_summary"]
    assert nearest("zzz", ["model_summary"]) == []
    catalogue = {"model_summary": ("run_id", "accuracy"), "cell_accuracy": ("run_id", "accuracy"),
                 "raw.runs": ("run_id", "model")}
    assert suggestion("Catalog Error: Table with name model_sumary does not exist!", catalogue) == \
        "did you mean table model_summary?"
    assert suggestion("Catalog Error: Table with name raw.runz does not exist!", catalogue) == \
        "did you mean table raw.runs?"
    assert suggestion('Binder Error: Referenced column "acuracy" not found in FROM clause!', catalogue) == \
        "did you mean column accuracy (cell_accuracy, model_summary)?"
    assert suggestion("Parser Error: syntax error at or near SELEC", catalogue) is None


@pytest.mark.parametrize("query, hint", [
    ("SELECT accuracy FROM model_sumary", "did you mean table model_summary?"),
    ("SELECT * FROM raw.trajectores", "did you mean table raw.trajectories?"),
    ("SELECT acuracy FROM model_summary", "did you mean column accuracy ("),
])
def test_sql_typo_gets_a_suggestion(query: str, hint: str, built_warehouse: BuiltWarehouse) -> None:
    result = CliRunner().invoke(report_main, ["sql", query, "--db", str(built_warehouse.db)])
    assert result.exit_code == 2
    assert hint in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1, "one line, no traceback"


def test_dbt_build_before_ingest_leaves_no_warehouse_file(tmp_path: Path) -> None:
    db = tmp_path / "warehouse" / "agenthop.duckdb"
    db.parent.mkdir()
    proc = run_dbt_build(db, tmp_path)
    assert proc.returncode != 0
    assert f"warehouse {db} does not exist" in proc.stdout, proc.stdout[-2000:]
    assert list(db.parent.iterdir()) == [], "dbt build must not create the warehouse"
