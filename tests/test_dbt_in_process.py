"""The tests' dbt runs in the test process (conftest.dbt_in_process): each run leaves the process as it found
it (environment, current folder, garbage collector, the warehouse file closed) and answers as the `dbt`
script would (exit code, console output)."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import duckdb
import pytest
import scanner_fixtures as fx

from conftest import SUBPROCESS_ENV, run_dbt


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    """A warehouse of raw tables (scanner_fixtures.py), named as the other tests' (run_dbt: one parse)."""
    return fx.build(tmp_path / "w.duckdb")


def test_a_run_leaves_the_process_as_it_found_it(warehouse: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SUBPROCESS_ENV, raising=False)
    env, cwd = dict(os.environ), os.getcwd()
    proc = run_dbt(warehouse, tmp_path, "build", "--select", "model_prices")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Completed successfully" in proc.stdout
    assert dict(os.environ) == env and os.getcwd() == cwd
    assert gc.get_freeze_count() == 0, "the objects dbt_gc froze are the collector's again"
    con = duckdb.connect(str(warehouse))  # read-write: dbt's connection to the file is closed
    try:
        assert con.execute("select count(*) > 0 from main.model_prices").fetchone() == (True,)
    finally:
        con.close()


@pytest.mark.parametrize("args, code", [
    (("build", "--select", "model_prices"), 0),
    (("build", "--no-such-option"), 2),
    (("test", "--select", "row_checks_model_prices"), 1),  # the seed is not loaded: the test fails
    (("run-operation", "no_such_macro"), 2),
])
def test_exit_codes_and_output_are_the_dbt_scripts(warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   args: tuple[str, ...], code: int) -> None:
    monkeypatch.delenv(SUBPROCESS_ENV, raising=False)
    inside = run_dbt(warehouse, tmp_path / "in", *args)
    monkeypatch.setenv(SUBPROCESS_ENV, "1")
    script = run_dbt(warehouse, tmp_path / "script", *args)
    assert inside.returncode == script.returncode == code, (inside, script)
    if code != 2:  # a usage error: click's message (stderr) from the script, the exception's from dbtRunner
        assert ("Completed successfully" in inside.stdout) == ("Completed successfully" in script.stdout)
        assert ("Encountered an error" in inside.stdout) == ("Encountered an error" in script.stdout)
