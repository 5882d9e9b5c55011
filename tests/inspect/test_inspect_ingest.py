"""`agenthop-ingest --inspect-log`: counts, idempotency, refusals that leave the warehouse as it was,
the shared marts and the reports on imported runs (one compare report in a real browser)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

import inspect_fixtures as fx
from inspect_fixtures import inspect_logs  # noqa: F401  (the session's logs)

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _run(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, AGENTHOP_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    return subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True, env=env, cwd=REPO)


def _ingest(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run("agenthop-ingest", "--db", str(db), *args, db=db)


def _digest(db: Path) -> str:
    """Every raw run table's rows, in order: equal digests mean nothing changed."""
    con = duckdb.connect(str(db), read_only=True)
    h = hashlib.sha256()
    for t in ("runs", "trajectories", "turns", "tool_calls", "messages", "scores", "inspect_items", "benchmarks"):
        cols = [c for (c,) in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'raw' AND table_name = ? "
            "AND column_name NOT IN ('loaded_at') ORDER BY column_name", [t]).fetchall()]
        rows = con.execute(f"SELECT {', '.join(cols)} FROM raw.{t} ORDER BY ALL").fetchall()
        h.update(repr(rows).encode())
    con.close()
    return h.hexdigest()


@pytest.fixture(scope="module")
def imported(inspect_logs, tmp_path_factory: pytest.TempPathFactory):
    """The two-model toolbox logs and the AgentDojo-shaped log in one warehouse, marts built."""
    work = tmp_path_factory.mktemp("inspect-warehouse")
    db = work / "w.duckdb"
    proc = _ingest(db, "--inspect-log", str(inspect_logs.eval_logs[0].parent), "--inspect-log",
                   str(inspect_logs.agentdojo))
    assert proc.returncode == 0, proc.stderr
    build = _run("dbt", "build", "--project-dir", str(REPO), "--profiles-dir", str(REPO), "--target-path",
                 str(work / "target"), "--log-path", str(work / "logs"), db=db)
    assert build.returncode == 0, build.stdout[-3000:]
    return db, work, proc.stdout


def _one(db: Path, sql: str, params: list | None = None):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def test_counts_after_import(imported):
    db, _, summary = imported
    assert "runs 5 inserted" in summary
    # 2 models x 2 epochs of toolbox, 1 epoch of the AgentDojo-shaped log
    assert _one(db, "SELECT benchmark, backend, count(*) FROM raw.runs GROUP BY ALL ORDER BY 1") == [
        ("inspect:inspect_evals/agentdojo", "inspect-log", 1), ("inspect:toolbox", "inspect-log", 4)]
    assert _one(db, "SELECT count(*) FROM raw.trajectories") == [(4 * 4 + 2,)]
    assert _one(db, "SELECT count(*) FROM raw.turns") == [(4 * 10 + 4,)]
    assert _one(db, "SELECT status, count(*) FROM raw.tool_calls GROUP BY 1 ORDER BY 1") == [
        ("invalid_args", 4), ("not_executed", 1), ("ok", 4 * 5 + 2), ("tool_error", 4)]
    assert _one(db, "SELECT DISTINCT error_type FROM raw.tool_calls WHERE status = 'tool_error'") == [("unknown",)]
    assert _one(db, "SELECT terminated_by, count(*) FROM raw.trajectories GROUP BY 1 ORDER BY 1") == [
        ("answer", 13), ("token_limit", 5)]
    assert _one(db, "SELECT count(*) FROM raw.scores") == [(4 * 4 * 3 + 2 * 2,)]
    assert _one(db, "SELECT benchmark, count(*) FROM raw.inspect_items GROUP BY 1 ORDER BY 1") == [
        ("inspect:inspect_evals/agentdojo", 2), ("inspect:toolbox", 4)]
    assert _one(db, "SELECT benchmark, n_items FROM raw.benchmarks ORDER BY 1") == [
        ("inspect:inspect_evals/agentdojo", 2), ("inspect:toolbox", 4)]


def test_loading_the_same_logs_again_changes_nothing(inspect_logs, tmp_path):
    db = tmp_path / "w.duckdb"
    assert _ingest(db, "--inspect-log", str(inspect_logs.eval_logs[0].parent)).returncode == 0
    before = _digest(db)
    again = _ingest(db, "--inspect-log", str(inspect_logs.eval_logs[0].parent))
    assert again.returncode == 0 and "0 inserted, 0 replaced, 4 unchanged" in again.stdout
    assert _digest(db) == before


def test_a_log_still_being_written_is_replaced_when_it_finishes(inspect_logs, tmp_path):
    db = tmp_path / "w.duckdb"
    logs = tmp_path / "logs"
    logs.mkdir()
    live = logs / inspect_logs.eval_logs[0].name
    fx.still_running(inspect_logs.eval_logs[0], live)
    first = _ingest(db, "--inspect-log", str(live))
    assert first.returncode == 0, first.stderr
    assert _one(db, "SELECT bool_and(_partial) FROM raw.runs") == [(True,)]
    shutil.copy(inspect_logs.eval_logs[0], live)
    second = _ingest(db, "--inspect-log", str(live))
    assert "0 inserted, 2 replaced" in second.stdout
    assert _one(db, "SELECT bool_or(_partial), count(*) FROM raw.runs") == [(False, 2)]


@pytest.mark.parametrize("damage", ["truncated", "no_header", "nan_score_and_no_messages"])
def test_a_damaged_log_among_good_ones(inspect_logs, tmp_path, damage):
    db = tmp_path / "w.duckdb"
    assert _ingest(db, "--inspect-log", str(inspect_logs.agentdojo)).returncode == 0
    before = _digest(db)
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(inspect_logs.eval_logs[0], logs / "good.eval")
    if damage == "truncated":
        bad = fx.truncated(inspect_logs.eval_logs[1], logs / "bad.eval")
    elif damage == "no_header":
        bad = fx.without_header_and_start(inspect_logs.eval_logs[1], logs / "bad.eval")
    else:
        def spoil(sample):
            sample["scores"]["grade"]["value"]["utility"] = float("nan")
            sample["messages"] = []

        bad = fx.edit_json_log(inspect_logs.json_logs[1], logs / "bad.json", "s2", 1, spoil)
    proc = _ingest(db, "--inspect-log", str(logs))
    if damage == "nan_score_and_no_messages":  # readable: loaded, the reasons printed and recorded
        assert proc.returncode == 0, proc.stderr
        assert "loaded with a recorded reason" in proc.stdout and "sample s2 epoch 1" in proc.stdout
        notes = _one(db, "SELECT config_json FROM raw.runs WHERE _source = ? AND replicate = 0", [str(bad)])
        assert "score grade.utility is nan" in notes[0][0] and "has no messages" in notes[0][0]
        return
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert str(bad) in proc.stderr
    assert _digest(db) == before  # nothing of the good log either


def test_shared_marts_hold_the_imported_runs(imported):
    db, _, _ = imported
    rows = _one(db, "SELECT run_id, n, score_mean FROM run_summary WHERE run_id LIKE 'inspect-%' ORDER BY run_id")
    assert len(rows) == 5
    toolbox = _one(db, "SELECT r.model, round(avg(s.score_mean), 4) FROM run_summary AS s JOIN raw.runs AS r "
                       "USING (run_id) WHERE r.benchmark = 'inspect:toolbox' GROUP BY 1 ORDER BY 1")
    # alpha: s1-s3 right, s4 cut in both epochs (0.75); beta: also wrong on s3 in epoch 2 (0.625)
    assert toolbox == [("mockllm/alpha", 0.75), ("mockllm/beta", 0.625)]
    terms = _one(db, "SELECT sum(n) FROM termination_summary WHERE terminated_by = 'token_limit' "
                     "AND run_id LIKE 'inspect-%'")
    assert terms == [(5,)]


def _run_ids(db: Path, model: str) -> list[str]:
    return [r for (r,) in _one(db, "SELECT run_id FROM raw.runs WHERE model = ? ORDER BY replicate", [model])]


def test_reports_on_imported_runs(imported, tmp_path):
    db, _, _ = imported
    a, b = _run_ids(db, "mockllm/alpha")[0], _run_ids(db, "mockllm/beta")[0]
    for args in (
        ["compare", "--runs", f"{a},{b}", "--out", str(tmp_path / "compare.html")],
        ["reruns", "--model", "mockllm/beta", "--out", str(tmp_path / "reruns.html")],
        ["item", "s3", "--runs", f"{a},{b}", "--out", str(tmp_path / "item.html")],
        ["sql", "SELECT count(*) AS n FROM run_summary"],
    ):
        proc = _run("agenthop-report", *args, "--db", str(db), db=db)
        assert proc.returncode == 0, f"{args[0]}: {proc.stderr}"
    assert "s3" in (tmp_path / "item.html").read_text()


@pytest.mark.browser
def test_compare_report_renders_in_a_browser(imported, tmp_path):
    from playwright.sync_api import sync_playwright

    exe = next((p for p in ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium") if Path(p).exists()), None)
    if exe is None:
        pytest.skip("!!! no chromium-headless-shell: the Inspect compare report is not checked in a browser !!!")
    db, _, _ = imported
    a, b = _run_ids(db, "mockllm/alpha")[0], _run_ids(db, "mockllm/beta")[0]
    out = tmp_path / "compare.html"
    proc = _run("agenthop-report", "compare", "--runs", f"{a},{b}", "--out", str(out), "--db", str(db), db=db)
    assert proc.returncode == 0, proc.stderr
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.route("http*://**", lambda route: route.abort())
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(out.as_uri())
        page.wait_for_load_state("networkidle")
        text = page.inner_text("body")
        artifacts = REPO / "test-artifacts"
        artifacts.mkdir(exist_ok=True)
        page.screenshot(path=str(artifacts / "inspect-compare.png"), full_page=True)
        n_charts = page.locator("svg, canvas").count()
        browser.close()
    assert not errors, errors
    assert "mockllm/alpha" in text and "mockllm/beta" in text
    assert n_charts > 0
