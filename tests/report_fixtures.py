"""Variants of the real-pipeline warehouse (tests/conftest.py::built_warehouse) for report tests.

Both helpers copy the built warehouse and edit the copy, so the original stays shared and intact:
`run` invokes agenthop-report in-process. `inject_hostile` puts an HTML/JS payload into model names and tool-call arguments (what a hostile or
buggy agent could produce), `emptied_copy` keeps every mart but deletes their rows.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
from click.testing import CliRunner


def run(*args: str) -> tuple[int, str, str]:
    """`agenthop-report ARGS` in-process: (exit code, stdout, stderr); an unexpected exception propagates."""
    from agenthop.reports.cli import main

    res = CliRunner().invoke(main, list(args))
    if res.exception and not isinstance(res.exception, SystemExit):
        raise res.exception
    return res.exit_code, res.stdout, res.stderr


def _materialise(con: duckdb.DuckDBPyConnection, name: str, kind: str) -> None:
    """Replace main.<name> (view or table) by a table with the same rows."""
    con.execute(f'CREATE TABLE main."__tmp_{name}" AS SELECT * FROM main."{name}"')
    con.execute(f'DROP {"VIEW" if kind == "VIEW" else "TABLE"} main."{name}" CASCADE')
    con.execute(f'ALTER TABLE main."__tmp_{name}" RENAME TO "{name}"')


def inject_hostile(src: Path, dst: Path, hostile: str, model: str) -> Path:
    """Copy a warehouse and rename `model` to `hostile` everywhere in schema main; put `hostile` in
    the args_json and the recorded output text of every call of that model's runs. Views are materialised first (in the copy)."""
    shutil.copyfile(src, dst)
    con = duckdb.connect(str(dst))
    rels = con.execute(
        "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'main'"
    ).fetchall()
    run_ids = [r[0] for r in con.execute("SELECT run_id FROM main.model_summary WHERE model = ?", [model]).fetchall()]
    for name, kind in rels:
        cols = {c[0] for c in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema='main' AND table_name=?",
            [name]).fetchall()}
        if not ({"model", "args_json"} & cols):
            continue
        _materialise(con, name, kind)
        if "model" in cols:
            con.execute(f'UPDATE main."{name}" SET model = ? WHERE model = ?', [hostile, model])
        if "args_json" in cols and run_ids:
            con.execute(
                f'UPDATE main."{name}" SET args_json = json_object(\'note\', ?::VARCHAR) '
                f"WHERE run_id IN ({','.join('?' * len(run_ids))})",
                [hostile, *run_ids],
            )
        if "output_text" in cols and run_ids:  # a recorded transcript carrying the same string
            con.execute(
                f'UPDATE main."{name}" SET output_text = ? '
                f"WHERE run_id IN ({','.join('?' * len(run_ids))})",
                [f"=== Output ===\n\n{hostile}", *run_ids],
            )
    con.close()
    return dst


def emptied_copy(src: Path, dst: Path) -> Path:
    """Copy a built warehouse and delete every row of every relation in schema main (marts stay)."""
    shutil.copyfile(src, dst)
    con = duckdb.connect(str(dst))
    for name, kind in con.execute(
        "SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'main'"
    ).fetchall():
        if kind == "VIEW":
            _materialise(con, name, kind)
        con.execute(f'DELETE FROM main."{name}"')
    con.close()
    return dst
