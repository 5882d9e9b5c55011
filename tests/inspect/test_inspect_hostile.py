"""Hostile Inspect logs: both readers give the same outcome (the same tables row for row, or the
same one-line refusal naming the file and the member or sample and field), reading is bounded in
memory, and limits can be overridden (docs/inspect.md#limits, #damaged-logs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

import hostile_logs as hl
import inspect_fixtures as fx
from inspect_fixtures import inspect_logs  # noqa: F401  (the session's logs)
from agenthop.ingest.conform import IngestError
from agenthop.ingest.sources import inspect_bounds, inspect_import

HERE = Path(__file__).parent
CAP = HERE / "memory_cap.py"
ENV = {**os.environ, "PYTHONPATH": str(HERE) + os.pathsep + os.environ.get("PYTHONPATH", "")}


@pytest.fixture(scope="module")
def hostile(inspect_logs, tmp_path_factory) -> dict[str, Path]:  # noqa: F811
    out = tmp_path_factory.mktemp("hostile")
    src_eval, src_json = inspect_logs.eval_logs[0], inspect_logs.json_logs[0]
    return {case: build(src_eval, src_json, out) for case, (build, _) in hl.CASES.items()}


@pytest.fixture(scope="module")
def outcomes(hostile, tmp_path_factory) -> dict[str, dict[str, Any]]:
    """Every hostile log through both readers, in one process under a memory limit."""
    out = tmp_path_factory.mktemp("outcomes") / "outcomes.json"
    proc = subprocess.run([sys.executable, str(CAP), "outcomes", str(out), *map(str, hostile.values())],
                          env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    by_path = json.loads(out.read_text())
    return {case: by_path[str(path)] for case, path in hostile.items()}


@pytest.mark.parametrize("case", sorted(hl.CASES))
def test_both_readers_give_the_same_outcome_for_a_hostile_log(hostile, outcomes, case):
    builtin, inspect = outcomes[case]["builtin"], outcomes[case]["inspect"]
    assert "crashed" not in builtin and "crashed" not in inspect, (builtin, inspect)
    assert builtin == inspect, f"{case}: the readers differ"
    expected = hl.CASES[case][1]
    if expected is None:
        assert "tables" in builtin, builtin
        return
    message = builtin.get("refused", "")
    assert message.startswith(str(hostile[case])), message
    assert expected in message and "\n" not in message, message


def test_items_and_rows_follow_the_dataset_order_whatever_the_member_order(outcomes):
    tables = outcomes["sample members out of dataset order"]["builtin"]["tables"]
    assert [(i["sample_id"], i["item_order"]) for i in tables["items"]] == [("s1", 0), ("s2", 1), ("s3", 2), ("s4", 3)]
    assert [r["sample_id"] for r in tables["trajectories"]] == ["s1", "s2", "s3", "s4"] * 2


def test_of_two_members_of_one_name_the_last_is_loaded(outcomes):
    """Inspect re-logs a requeued sample under the same member name and reads the last copy; so do both
    readers (the test's log changes the second copy's completion to 'replaced')."""
    tables = outcomes["two members of one name"]["builtin"]["tables"]
    texts = json.dumps([m for m in tables["messages"] if m["sample_id"] == "s1"])
    assert "replaced" in texts
    assert sum(1 for r in tables["trajectories"] if r["sample_id"] == "s1") == 2  # once per epoch, not twice


# --------------------------------------------------------------------------------------------
# memory: the command, under a limit


MEMORY_CASES = ["zstd bomb, true size", "zstd bomb, false size", "deflate bomb", "json nested 200,000 deep"]


@pytest.mark.parametrize("case", MEMORY_CASES)
def test_bombs_end_in_one_line_and_exit_2_under_a_memory_limit(hostile, tmp_path, case):
    path = hostile[case]
    proc = subprocess.run(
        [sys.executable, str(CAP), "ingest", "--db", str(tmp_path / "wh.duckdb"), "--inspect-log", str(path), "-q"],
        env=ENV, capture_output=True, text=True, timeout=600,
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr[-3000:]
    assert lines[0].startswith(f"error: {path}") and hl.CASES[case][1] in lines[0]


# --------------------------------------------------------------------------------------------
# limits


def test_limits_default_and_override_from_the_environment():
    assert inspect_bounds.limits_from_env({}) == inspect_bounds.Limits(64 << 20, 1000, 100)
    env = {"AGENTHOP_INSPECT_MAX_MEMBER_MB": "512", "AGENTHOP_INSPECT_MAX_RATIO": "5", "AGENTHOP_INSPECT_MAX_DEPTH": "7"}
    assert inspect_bounds.limits_from_env(env) == inspect_bounds.Limits(512 << 20, 5, 7)
    with pytest.raises(IngestError, match="AGENTHOP_INSPECT_MAX_DEPTH='deep': expected a positive whole number"):
        inspect_bounds.limits_from_env({"AGENTHOP_INSPECT_MAX_DEPTH": "deep"})


@pytest.mark.parametrize("reader", ["builtin", "inspect"])
def test_a_lower_limit_refuses_a_good_log_and_names_its_variable(inspect_logs, monkeypatch, reader):
    path = inspect_logs.eval_logs[0]
    monkeypatch.setenv("AGENTHOP_INSPECT_MAX_DEPTH", "4")
    with pytest.raises(IngestError, match="nests lists and objects more than 4 deep .AGENTHOP_INSPECT_MAX_DEPTH"):
        inspect_import.read_log(path, reader=reader)
    monkeypatch.delenv("AGENTHOP_INSPECT_MAX_DEPTH")
    monkeypatch.setenv("AGENTHOP_INSPECT_MAX_MEMBER_MB", "1")
    assert inspect_import.read_log(path, reader=reader).runs  # every member is far below 1 MiB


def test_the_ratio_limit_applies_above_its_floor_only():
    limits = inspect_bounds.Limits(max_ratio=10)
    inspect_bounds.check_recorded(inspect_bounds.RATIO_FLOOR, 10, limits)  # 100,000 times, but small
    with pytest.raises(inspect_bounds.BoundError, match="inflates 11 times its compressed size"):
        inspect_bounds.check_recorded(11 * (1 << 20), 1 << 20, limits)


@pytest.mark.parametrize("text, depth", [
    (b'{"a": [1, {"b": []}]}', 4),
    (b'["[[[[", "\\\\", "\\"[[["]', 1),  # brackets, escaped backslashes and quotes inside strings
    (b"[" * 150 + b"]" * 150, 150),
    # escapes next to quotes and brackets: a line break ending a string, an escaped backslash before an
    # escaped quote, a bracket written as \u005b, an escaped backslash before a closing quote
    (b'["line\\n", "q\\\\\\"[", {"x": "\\u005b\\t", "y": ["\\\\"]}]', 3),
])
def test_depth_is_measured_outside_strings(text, depth):
    assert not inspect_bounds.depth_exceeds(text, depth)
    assert inspect_bounds.depth_exceeds(text, depth - 1)


# --------------------------------------------------------------------------------------------
# a log that would replace runs of another model or task


def _ingest(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "agenthop-ingest"), "--db", str(db), *args],
                          capture_output=True, text=True, env=ENV, timeout=600)


def _runs(db: Path) -> list[tuple]:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT run_id, model, benchmark FROM raw.runs ORDER BY ALL").fetchall()
    finally:
        con.close()


def _with_eval_id(src: Path, dst: Path, eval_id: str) -> Path:
    def change(members: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
        out = []
        for name, value in members:
            if name in ("header.json", "_journal/start.json"):
                value = {**value, "eval": {**value["eval"], "eval_id": eval_id}}
            out.append((name, value))
        return out

    return hl._eval_members(change, dst.name)(src, src, dst.parent)


def test_a_log_replacing_runs_of_another_model_is_refused_unless_asked(inspect_logs, tmp_path):
    alpha, beta = inspect_logs.eval_logs
    eval_id = json.loads(json.dumps(hl.member_value(alpha, "header.json")))["eval"]["eval_id"]
    db = tmp_path / "wh.duckdb"
    # a log still being written, then finished: the same model and task replace it without a flag
    running = fx.still_running(alpha, tmp_path / "running.eval")
    assert _ingest(db, "--inspect-log", str(running)).returncode == 0
    done = _ingest(db, "--inspect-log", str(alpha))
    assert done.returncode == 0 and "2 replaced" in done.stdout, done.stderr
    before = _runs(db)
    assert {m for _, m, _ in before} == {"mockllm/alpha"}

    imposter = _with_eval_id(beta, tmp_path / "imposter.eval", eval_id)
    refused = _ingest(db, "--inspect-log", str(imposter))
    lines = refused.stderr.strip().splitlines()
    assert refused.returncode == 2 and len(lines) == 1, refused.stderr
    assert (f"error: {imposter}: run inspect-{eval_id}-e1 is loaded as model mockllm/alpha on inspect:toolbox; "
            f"this log would replace it with model mockllm/beta on inspect:toolbox") in lines[0]
    assert "--replace-changed" in lines[0]
    assert _runs(db) == before

    replaced = _ingest(db, "--inspect-log", str(imposter), "--replace-changed")
    assert replaced.returncode == 0 and "2 replaced" in replaced.stdout, replaced.stderr
    assert {m for _, m, _ in _runs(db)} == {"mockllm/beta"}
    assert "--replace-changed" in _ingest(db, "--help").stdout

