"""AgentHop as an Inspect task: the same simulated agent through the harness and through Inspect."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

from agenthop_sim import SimScript
from agenthop.ingest.sources import inspect_import

BIN = Path(sys.executable).parent
ITEMS = 12
PANEL = """defaults: {backend: sim, conditions: [full], replicates: 1}
models:
  - name: verifier
    backend: sim
    sim: {archetype: verifier}
"""


@dataclass(frozen=True)
class BothRuns:
    release: Path
    harness_run: Path
    inspect_log: Path


def _cli(*args: str) -> None:
    proc = subprocess.run([str(BIN / args[0]), *args[1:]], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def _run_both(root: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from agenthop.harness.benchmarks.agenthop.loader import load_release
    from agenthop.harness.benchmarks.agenthop.inspect_task import agenthop

    release = root / "release"
    _cli("agenthop-harness", "make-benchmark", "--out", str(release), "--items", str(ITEMS), "--seed", "0")
    (root / "panel.yaml").write_text(PANEL)
    _cli("agenthop-harness", "run", "--panel", str(root / "panel.yaml"), "--data", str(release),
         "--out", str(root / "runs"))
    model = get_model("mockllm/verifier", custom_outputs=SimScript(load_release(release), "verifier",
                                                                     {"archetype": "verifier"}))
    logs = inspect_eval(agenthop(data=str(release)), model=model, log_dir=str(root / "logs"), display="none",
                        max_samples=1)
    assert logs[0].status == "success", logs[0].error
    (root / "inspect_log.txt").write_text(str(Path(logs[0].location).relative_to(root)))


@pytest.fixture(scope="session")
def both_runs(tmp_path_factory: pytest.TempPathFactory) -> BothRuns:
    """Made once per test run (conftest.built_once: the xdist workers share them)."""
    from conftest import built_once

    root = built_once(tmp_path_factory, "agenthop-inspect", _run_both)
    (run,) = sorted((root / "runs").iterdir())
    return BothRuns(root / "release", run, root / (root / "inspect_log.txt").read_text())


@pytest.fixture(scope="session")
def both_runs_warehouse(both_runs: BothRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both runs and the release ingested into one warehouse (w.duckdb) and built by dbt, once per test
    run (conftest.built_once); each test process gets its own copy, which a test must copy again
    before it changes it."""
    from conftest import _check, built_once, cli, dbt_env, run_dbt_build, worker_copy

    def build(work: Path) -> None:
        db = work / "w.duckdb"
        _check(subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(both_runs.release),
                               "--runs", str(both_runs.harness_run), "--inspect-log", str(both_runs.inspect_log)],
                              capture_output=True, text=True, env=dbt_env(db)), "ingest")
        _check(run_dbt_build(db, work), "dbt build")

    shared = built_once(tmp_path_factory, "agenthop-inspect-warehouse", build)
    return worker_copy(tmp_path_factory, shared / "w.duckdb", "agenthop-inspect-warehouse")


def _harness(run: Path, table: str) -> pa.Table:
    return pa.concat_tables([pq.read_table(p) for p in sorted(run.glob(f"{table}-*.parquet"))])


#: columns that differ by nature: identity, clocks, and the columns only one side has
_OWN = {"run_id", "wall_time_s", "t_offset_s", "wait_s", "score", "error_type"}


@pytest.mark.parametrize("table", ["trajectories", "turns", "tool_calls"])
def test_same_rows_through_the_harness_and_the_inspect_task(both_runs, table):
    lt = inspect_import.read_log(both_runs.inspect_log)
    assert lt.benchmark == "agenthop" and len(lt.runs) == 1
    ours = lt.runs[0].tables[table]
    theirs = _harness(both_runs.harness_run, table)
    cols = [c for c in theirs.column_names if c not in _OWN]
    key = [(c, "ascending") for c in ("sample_id", "attempt", "turn", "seq") if c in cols]
    assert ours.num_rows == theirs.num_rows > 0
    assert ours.select(cols).sort_by(key).to_pylist() == theirs.select(cols).sort_by(key).to_pylist()


def test_agenthop_run_row(both_runs):
    harness = _harness(both_runs.harness_run, "runs").to_pylist()[0]
    row = inspect_import.read_log(both_runs.inspect_log).runs[0].tables["runs"].to_pylist()[0]
    assert row["benchmark"] == "agenthop" and row["backend"] == "inspect-log"
    for col in ("benchmark_sha256", "condition", "budget_total", "max_turns", "max_total_tokens", "replicate"):
        assert row[col] == harness[col], col
    assert (row["budget_total"], row["max_turns"], row["max_total_tokens"]) == (30, 20, 200_000)


def test_the_log_keeps_the_projects_prompt_and_tools(both_runs):
    from inspect_ai.log import read_eval_log

    from agenthop.harness.benchmarks.agenthop.loader import load_release
    from agenthop.harness.benchmarks.agenthop import prompts

    log = read_eval_log(str(both_runs.inspect_log), resolve_attachments=True)
    item = load_release(both_runs.release).items[0]
    sample = next(s for s in log.samples if s.id == item.id)
    assert sample.messages[0].text == prompts.system_prompt(item, "full")
    assert sample.messages[1].text == prompts.first_user_message("full")
    model_event = next(e for e in sample.events if e.event == "model")
    assert [t.name for t in model_event.tools] == [t.name for t in prompts.tool_specs("full")]
    assert [t.description for t in model_event.tools] == [t.description for t in prompts.tool_specs("full")]
    # every tool result carries the project's status footer
    tool_texts = [m.text for m in sample.messages if m.role == "tool"]
    assert tool_texts and all("|  Budget used: " in t for t in tool_texts)
    # the scorer reports AgentHop's correctness and the termination reason
    score = sample.scores["agenthop_correct"]
    assert score.metadata["terminated_by"] in ("answer", "budget", "max_turns", "token_limit", "error")


def _text_only(messages, tools, tool_choice, config):
    from inspect_ai.model import ModelOutput, ModelUsage

    out = ModelOutput.from_content("mockllm/talker", "I am still thinking.")
    out.usage = ModelUsage(input_tokens=50, output_tokens=5, total_tokens=55)
    return out


def test_epochs_are_reruns_and_turn_cap_ends_the_sample(tmp_path):
    """A model that never calls a tool gets the nudge every turn and stops at the turn cap."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from agenthop.harness.benchmarks.agenthop.inspect_task import agenthop

    release = tmp_path / "release"
    _cli("agenthop-harness", "make-benchmark", "--out", str(release), "--items", "2", "--seed", "1")
    logs = inspect_eval(agenthop(data=str(release), max_turns=3, epochs=2),
                        model=get_model("mockllm/talker", custom_outputs=_text_only),
                        log_dir=str(tmp_path / "logs"), display="none")
    lt = inspect_import.read_log(Path(logs[0].location))
    assert [rd.tables["runs"].column("replicate")[0].as_py() for rd in lt.runs] == [0, 1]
    for rd in lt.runs:
        traj = rd.tables["trajectories"].to_pylist()
        assert [(t["terminated_by"], t["total_turns"], t["budget_used"]) for t in traj] == [("max_turns", 3, 0)] * 2
        assert rd.tables["runs"].column("max_turns")[0].as_py() == 3


def test_registered_through_inspects_entry_point(tmp_path):
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="inspect_ai") if e.name == "agenthop"]
    assert ep.value == "agenthop.harness.benchmarks.agenthop.inspect_task"
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    release = tmp_path / "release"
    _cli("agenthop-harness", "make-benchmark", "--out", str(release), "--items", "1", "--seed", "2")
    # an editable install registers the task without the package prefix (a normal install: agenthop/agenthop)
    logs = inspect_eval("agenthop", task_args={"data": str(release), "max_turns": 1},
                        model=get_model("mockllm/talker", custom_outputs=_text_only),
                        log_dir=str(tmp_path / "logs"), display="none")
    assert logs[0].status == "success" and logs[0].eval.task == "agenthop"


# --------------------------------------------------------------------------------------------
# both runs in one warehouse: every AgentHop mart


@pytest.fixture(scope="module")
def warehouse(both_runs_warehouse: Path):
    import duckdb

    db = both_runs_warehouse
    con = duckdb.connect(str(db), read_only=True)
    (harness_id,) = con.execute("SELECT run_id FROM raw.runs WHERE backend = 'sim'").fetchall()[0]
    (inspect_id,) = con.execute("SELECT run_id FROM raw.runs WHERE backend = 'inspect-log'").fetchall()[0]
    con.close()
    return db, harness_id, inspect_id


def _rows(db: Path, sql: str, run_id: str) -> list[tuple]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, [run_id]).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("sql", [
    "SELECT sample_id, predicted_answer, predicted_index, is_correct, terminated_by, budget_used, total_turns, "
    "total_tokens, n_tool_calls, paper_recall, section_recall, stopping_category FROM fct_trajectory "
    "WHERE run_id = ? ORDER BY sample_id",
    "SELECT sample_id, seq, tool, status, cost, budget_after, output_chars, resolved_header FROM fct_tool_call "
    "WHERE run_id = ? ORDER BY sample_id, seq",
    "SELECT terminated_by, n, share, accuracy FROM termination_summary WHERE run_id = ? ORDER BY termination_order",
    "SELECT accuracy, paper_recall, section_recall, n_tool_calls, avg_budget, avg_turns, avg_tokens_k, "
    "max_budget_rate, non_submission_rate FROM model_summary WHERE run_id = ?",
    "SELECT * EXCLUDE (run_id) FROM tool_transitions WHERE run_id = ? ORDER BY ALL",
], ids=["fct_trajectory", "fct_tool_call", "termination_summary", "model_summary", "tool_transitions"])
def test_same_marts_through_the_harness_and_the_inspect_task(warehouse, sql):
    db, harness_id, inspect_id = warehouse
    ours, theirs = _rows(db, sql, inspect_id), _rows(db, sql, harness_id)
    assert theirs and ours == theirs


@pytest.mark.browser
def test_compare_report_of_the_harness_run_and_the_inspect_run_renders(warehouse, tmp_path):
    from playwright.sync_api import sync_playwright

    exe = next((p for p in ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium") if Path(p).exists()), None)
    if exe is None:
        pytest.skip("!!! no chromium-headless-shell: the compare report is not checked in a browser !!!")
    db, harness_id, inspect_id = warehouse
    out = tmp_path / "compare.html"
    proc = subprocess.run([str(BIN / "agenthop-report"), "compare", "--runs", f"{harness_id},{inspect_id}",
                           "--db", str(db), "--out", str(out)], capture_output=True, text=True)
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
        artifacts = Path(__file__).resolve().parents[2] / "test-artifacts"
        artifacts.mkdir(exist_ok=True)
        page.screenshot(path=str(artifacts / "inspect-agenthop-compare.png"), full_page=True)
        charts = page.locator("svg").count()
        browser.close()
    assert not errors, errors
    assert "mockllm/verifier" in text and "verifier" in text
    assert charts > 0


_EVAL_FROM_INSTALL = """
import sys
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

def talk(messages, tools, tool_choice, config):
    out = ModelOutput.from_content("mockllm/talker", "thinking")
    out.usage = ModelUsage(input_tokens=5, output_tokens=1, total_tokens=6)
    return out

logs = inspect_eval("agenthop/agenthop", task_args={"data": sys.argv[1], "max_turns": 1},
                    model=get_model("mockllm/talker", custom_outputs=talk), log_dir=sys.argv[2], display="none")
import agenthop.harness.benchmarks.agenthop.inspect_task as t
print(logs[0].status, logs[0].eval.task_registry_name, t.__file__)
"""


def test_a_normal_install_registers_agenthop_slash_agenthop(tmp_path):
    """`inspect eval agenthop/agenthop` from a wheel install (not editable): the entry point and the name."""
    import os

    repo = Path(__file__).resolve().parents[2]
    wheels = tmp_path / "wheel"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(wheels), str(repo)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    site = tmp_path / "site-packages"  # Inspect names a task after its package when it is installed
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
                           *map(str, wheels.glob("*.whl"))], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    release = tmp_path / "release"
    _cli("agenthop-harness", "make-benchmark", "--out", str(release), "--items", "1", "--seed", "3")
    env = dict(os.environ, PYTHONPATH=str(site))
    proc = subprocess.run([sys.executable, "-c", _EVAL_FROM_INSTALL, str(release), str(tmp_path / "logs")],
                          capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    status, name, module = proc.stdout.split()[-3:]
    assert (status, name) == ("success", "agenthop/agenthop")
    assert module.startswith(str(site))


def test_item_page_shows_the_inspect_runs_transcript(warehouse, tmp_path):
    db, harness_id, inspect_id = warehouse
    sid = _rows(db, "SELECT min(sample_id) FROM fct_trajectory WHERE run_id = ?", inspect_id)[0][0]
    out = tmp_path / "item.html"
    proc = subprocess.run([str(BIN / "agenthop-report"), "item", sid, "--runs", f"{harness_id},{inspect_id}",
                           "--db", str(db), "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    html = out.read_text()
    assert inspect_id in html and harness_id in html
    assert "Budget used:" in html  # the tool results the Inspect run's model received (its transcript)


def test_a_sample_inspect_stopped_before_the_loop_recorded_it(both_runs, tmp_path):
    """An Inspect limit (say --token-limit) can end a sample inside the loop: it still loads, with a note."""
    import inspect_fixtures as fx

    members = fx.eval_members(both_runs.inspect_log)
    first = next(n for n, _ in members if n.startswith("samples/"))
    edited = []
    for name, value in members:
        if name == first:
            value = {**value, "store": {}, "limit": {"type": "token", "limit": 1000}}
        edited.append((name, value))
    log = fx.write_eval(tmp_path / "cut.eval", edited)
    lt = inspect_import.read_log(log)
    traj = {r["sample_id"]: r for r in lt.runs[0].tables["trajectories"].to_pylist()}
    sid = dict(members)[first]["id"]
    assert traj[sid]["terminated_by"] == "token_limit" and traj[sid]["budget_used"] == 0
    assert any("stopped by Inspect before the AgentHop loop recorded its attempts" in n for n in lt.notes)
    assert len(traj) == ITEMS
