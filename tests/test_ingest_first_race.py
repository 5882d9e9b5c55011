"""Two first ingests into one new warehouse path: the file is removed only by the process that
created it, so the winner's warehouse survives and the loser fails with one line, leaving nothing.

The race is forced: process B is held right before it opens the warehouse (it has seen no file
there), process A opens it and is held (by its progress hook) right before its write; then B goes
on and finishes or fails, then A goes on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
from click.testing import CliRunner

from agenthop.harness import temp_dirs
from agenthop.ingest.cli import main
from conftest import REPO
from ingest_fixtures import run_rows, write_release, write_run

#: ingest in a process held (until a line arrives on stdin) at its "writing" phase (argv[1] "write")
#: or before its first connection to the warehouse file (argv[1] "connect")
HELD = """
import sys
from pathlib import Path
import duckdb
from agenthop.ingest.core import run_ingest
from agenthop.ingest.progress import Progress

def hold():
    print("held", flush=True)
    sys.stdin.readline()

class Held(Progress):
    def phase(self, msg, big):
        if sys.argv[1] == "write" and msg.startswith("writing"):
            hold()

connect = duckdb.connect
def held_connect(database=":memory:", *args, **kw):
    global connect
    if sys.argv[1] == "connect" and str(database).startswith(str(Path(sys.argv[2]).parent)):
        hold()
        duckdb.connect = connect
    return connect(database, *args, **kw)
duckdb.connect = held_connect

try:
    run_ingest(Path(sys.argv[2]), benchmark=Path(sys.argv[3]), runs=[Path(a) for a in sys.argv[4:]],
               progress=Held(quiet=True))
except Exception as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)
print("ingested", flush=True)
"""


def _runs_in(db: Path) -> set[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {r for (r,) in con.execute("SELECT run_id FROM raw.runs").fetchall()}
    finally:
        con.close()


def test_the_first_ingest_that_loses_keeps_the_winners_warehouse(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    sha = write_release(bench)
    a_runs, b_runs = tmp_path / "a", tmp_path / "b"
    write_run(a_runs, run_rows("run-a", sha))
    write_run(b_runs, run_rows("run-b", sha, model="m2"))
    db = tmp_path / "fresh" / "w.duckdb"

    def held(mode: str, runs: Path) -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, "-c", HELD, mode, str(db), str(bench), str(runs)], cwd=REPO,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, PYTHONPATH=str(REPO / "tests")))
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        return proc

    b = held("connect", b_runs)
    try:
        a = held("write", a_runs)
    finally:
        b_out, b_err = b.communicate("go\n", timeout=120)
    a_out, a_err = a.communicate("go\n", timeout=120)
    results = {"run-a": (a.returncode, a_err.strip()), "run-b": (b.returncode, b_err.strip())}
    winners = {run for run, (code, _) in results.items() if code == 0}
    assert winners, results
    assert db.exists(), "the winner's warehouse is not removed by the loser"
    assert _runs_in(db) == winners and len(winners) == 1, (results, _runs_in(db))
    (loser,) = set(results) - winners
    code, message = results[loser]
    assert code != 0 and len(message.splitlines()) == 1 and "Traceback" not in message, message
    assert f"warehouse {db}" in message and "another process" in message, message
    assert sorted(p.name for p in db.parent.iterdir()) == ["w.duckdb"], "no temporary file is left"


def test_a_killed_first_ingest_leaves_a_file_the_next_one_removes(tmp_path: Path) -> None:
    """A first ingest builds its warehouse under a temporary name marked with its pid; one a killed
    process left is removed by the next ingest into that path, and the path itself never existed."""
    bench = tmp_path / "bench"
    write_release(bench)
    db = tmp_path / "w.duckdb"
    held = subprocess.Popen([sys.executable, "-c", HELD, "write", str(db), str(bench)], cwd=REPO,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO / "tests")))
    try:
        assert held.stdout is not None and held.stdout.readline().strip() == "held"
        left = [p for p in tmp_path.iterdir() if p.name.startswith(".w.duckdb.new-")]
        assert [p.name.split("@")[0] for p in left] == [f".w.duckdb.new-{held.pid}"], left
        assert not db.exists(), "a warehouse appears at its path only once its load is committed"
    finally:
        held.kill()
        held.communicate(timeout=60)
    assert left[0].exists() and temp_dirs.stale(left[0].name, ".w.duckdb.new-")
    res = CliRunner().invoke(main, ["--db", str(db), "--benchmark", str(bench)])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".w.duckdb")) == []
