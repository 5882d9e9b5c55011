"""Hostile inputs around the reports: formula cells in paper CSVs, endless or ambiguous input files,
stale marts behind `sql`, and a backend name nobody knows at ingest."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenthop.harness.errors import AgentHopError
from agenthop.reports.paper.export import spreadsheet_safe, to_csv
from agenthop.reports.paper.inputs import MAX_INPUT_BYTES, read_covariates, read_external
from agenthop.reports.paper.table import Column, Table
from ingest_fixtures import run_rows, write_release, write_run


def test_paper_csv_cells_that_start_a_formula_are_neutralised() -> None:
    names = ["=HYPERLINK(\"http://x\",\"y\")", "+1+2", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain", "a=b"]
    table = Table(key="t", ref="Table X", title="t", definition="accuracy",
                  columns=[Column("model"), Column("delta", "pp")],
                  rows=[{"model": n, "delta": -0.25} for n in names])
    rows = list(csv.reader(io.StringIO(to_csv(table))))
    got = [r[0] for r in rows[1:]]
    assert got == ["'=HYPERLINK(\"http://x\",\"y\")", "'+1+2", "'-2+3", "'@SUM(A1)", "'\tx", "'\rx", "plain", "a=b"]
    assert all(r[1] == "-0.25" for r in rows[1:])  # numbers stay numbers, minus sign and all
    assert spreadsheet_safe("=1") == "'=1" and spreadsheet_safe("1=") == "1="
    assert [spreadsheet_safe(t) for t in ("-3", "+1.5e3", "-.5", "-3 ", "-1-1", "--3")] == [
        "-3", "+1.5e3", "-.5", "'-3 ", "'-1-1", "'--3"]


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize("reader", [read_external, read_covariates])
def test_an_endless_input_file_is_a_clear_error(reader) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(AgentHopError, match=r"/dev/zero: larger than \d+ MiB"):
        reader(Path("/dev/zero"))


def test_an_input_file_above_the_bound_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    big = tmp_path / "big.csv"
    with open(big, "wb") as fh:
        fh.write(b"model,benchmark,score\n")
        fh.truncate(MAX_INPUT_BYTES + 10)
    with pytest.raises(AgentHopError, match="big.csv: larger than"):
        read_external(big)


def test_duplicate_covariate_columns_are_refused(tmp_path: Path) -> None:
    f = tmp_path / "cov.csv"
    f.write_text("sample_id,difficulty,hops,difficulty\nst_0001,1,2,3\n")
    with pytest.raises(AgentHopError, match=r"cov\.csv: the header names column\(s\) 'difficulty' more than once"):
        read_covariates(f)
    g = tmp_path / "ext.csv"
    g.write_text("model,benchmark,score,score\nm,b,1,2\n")
    with pytest.raises(AgentHopError, match="'score' more than once"):
        read_external(g)


def test_covariate_columns_that_differ_only_in_case_are_refused(tmp_path: Path, built_warehouse) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "cov.csv"
    f.write_text("sample_id,Size,hops,size\nst_0001,1,2,3\n")
    with pytest.raises(AgentHopError, match=r"cov\.csv: the header names columns that differ only in case "
                                            r"\('Size' and 'size'\)"):
        read_covariates(f)
    g = tmp_path / "sid.csv"
    g.write_text("sample_id,SAMPLE_ID\nst_0001,1\n")
    with pytest.raises(AgentHopError, match="'sample_id' and 'SAMPLE_ID'"):
        read_covariates(g)
    h = tmp_path / "ext.csv"
    h.write_text("model,benchmark,score,Score\nm,b,1,2\n")
    with pytest.raises(AgentHopError, match="'score' and 'Score'"):
        read_external(h)
    ok = tmp_path / "ok.csv"
    ok.write_text("sample_id,size,size_rank\nst_0001,1,2\n")
    assert set(read_covariates(ok).numeric) == {"size", "size_rank"}
    # through the command: a usage error (exit code 2, one line naming the file), nothing written
    from agenthop.reports.cli import main

    out = tmp_path / "paper"
    res = CliRunner().invoke(main, ["paper", "--db", str(built_warehouse.db), "--covariates", str(f),
                                    "--out", str(out)])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln]
    assert len(lines) == 1 and str(f) in lines[0] and "differ only in case" in lines[0], res.stderr
    assert "Traceback" not in res.output and not out.exists()


def test_sql_warns_on_stale_marts_and_still_answers(messages_warehouse) -> None:  # type: ignore[no-untyped-def]
    from agenthop.reports.cli import main

    res = CliRunner().invoke(main, ["sql", "SELECT count(*) AS n FROM model_summary", "--format", "csv",
                                    "--db", str(messages_warehouse.stale_db)])
    assert res.exit_code == 0, res.output
    warnings = [line for line in res.stderr.splitlines() if line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: marts are stale: run dbt build")
    assert res.stdout.splitlines()[0] == "n" and res.stdout.splitlines()[1].isdigit()
    fresh = CliRunner().invoke(main, ["sql", "SELECT 1 AS one", "--db", str(messages_warehouse.db)])
    assert fresh.exit_code == 0 and fresh.stderr == ""


def test_ingest_refuses_an_unknown_backend_naming_the_file(tmp_path: Path) -> None:
    from agenthop.ingest.cli import main

    bench = tmp_path / "bench"
    sha = write_release(bench)
    rows = run_rows("odd", sha)
    rows["runs"][0]["backend"] = "<script>alert(1)</script>"
    run_dir = write_run(tmp_path / "runs", rows)
    db = tmp_path / "w.duckdb"
    res = CliRunner().invoke(main, ["--db", str(db), "--benchmark", str(bench), "--runs", str(run_dir)])
    assert res.exit_code == 2, res.output
    assert "backend" in res.output and str(run_dir) in res.output and "Traceback" not in res.output
    assert "reference-json" in res.output  # the message lists what is allowed
    for ok in ("reference-json", "inspect-log", "responses-file", "openai"):
        rows["runs"][0]["backend"] = ok
        good = write_run(tmp_path / f"runs-{ok}", rows)
        res = CliRunner().invoke(main, ["--db", str(tmp_path / f"{ok}.duckdb"), "--benchmark", str(bench),
                                        "--runs", str(good)])
        assert res.exit_code == 0, (ok, res.output)
