"""A warehouse held by another process gives one clear line naming the path and the PID."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
from click.testing import CliRunner

from agenthop.ingest.cli import main
from ingest_fixtures import write_release

HOLDER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("CREATE TABLE IF NOT EXISTS held(x INTEGER)")
print("ready", flush=True)
sys.stdin.read()
"""


def test_busy_warehouse(tmp_path: Path) -> None:
    root = tmp_path / "bench"
    write_release(root)
    db = tmp_path / "busy.duckdb"
    duckdb.connect(str(db)).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        res = CliRunner().invoke(main, ["--db", str(db), "--benchmark", str(root)])
        assert res.exit_code == 2
        assert res.stderr.strip() == (
            f"error: warehouse {db} is in use by another process (PID {holder.pid}): close it (a dbt run, "
            f"report, notebook or IDE holding the file) and retry, or use --db for another warehouse"
        )
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert db.exists()  # an existing warehouse is never removed
    res = CliRunner().invoke(main, ["--db", str(db), "--benchmark", str(root)])
    assert res.exit_code == 0, res.output
