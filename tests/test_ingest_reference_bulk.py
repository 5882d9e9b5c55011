"""Reference-JSON import in bulk (ingest/reference_bulk.py) gives exactly the rows of the
record-by-record reading (ingest/reference_parse.py), on a generated set: simulated runs exported
as the reference harness logs them (failed attempts, full message histories), plus shapes the bulk
path hands back to the careful one (non-text message content, numeric arguments, 2.0 for 2)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from click.testing import CliRunner

from agenthop.harness.cli import main as harness_main
from agenthop.ingest import reference_bulk, reference_json
from agenthop.ingest.reference_parse import UNIT_TURN_COLUMN, parse_samples
from agenthop.ingest.transcripts.prepared import run_units

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from reference_import import export_run  # noqa: E402

PANEL = """\
defaults: {backend: sim, conditions: [full], replicates: 1}
models:
  - {name: flaky-verifier, sim: {archetype: verifier, parallel_calls: 2.5, empty_response_rate: 0.2}}
  - {name: flaky-greedy, sim: {archetype: greedy_reader, empty_response_rate: 0.3}}
  - {name: looper, sim: {archetype: metadata_looper}}
"""


@pytest.fixture(scope="module")
def experiments(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("refbulk")
    bench, runs, panel = work / "benchmark", work / "runs", work / "panel.yaml"
    panel.write_text(PANEL)
    cli = CliRunner()
    res = cli.invoke(harness_main, ["make-benchmark", "--out", str(bench), "--items", "40", "--seed", "3"])
    assert res.exit_code == 0, res.output
    res = cli.invoke(harness_main, ["run", "--panel", str(panel), "--data", str(bench), "--out", str(runs),
                                    "--no-progress", "--processes", "1"])
    assert res.exit_code == 0, res.output
    exp = work / "experiments"
    bsha = hashlib.sha256((bench / "qa" / "full.jsonl").read_bytes()).hexdigest()[:16]
    for d in sorted(p.parent for p in runs.glob("*/_SUCCESS")):
        export_run(d, exp, bsha)
    return exp


def _samples(folder: Path) -> list:
    return reference_json.folder_samples(folder)


def _check_unit_turns(result: dict) -> None:
    """The bulk path's turn of each message (UNIT_TURN_COLUMN) is the search index's (units.py's SQL
    rule, as prepared.run_units computes it); the column is then dropped."""
    t = result["tables"]
    if UNIT_TURN_COLUMN not in t["messages"].column_names:
        return
    turns = t["messages"].column(UNIT_TURN_COLUMN)
    t["messages"] = t["messages"].drop_columns([UNIT_TURN_COLUMN])
    expected = run_units(duckdb.connect(), "run", t["turns"], t["tool_calls"], t["messages"]).messages.column("turn")
    assert turns.equals(expected)


def _assert_same(a: dict, b: dict) -> None:
    assert a["error"] == b["error"]
    if a["error"] is not None:
        return
    for r in (a, b):
        _check_unit_turns(r)
    for key in ("sample_ids", "budget_total", "models", "segments"):
        assert a[key] == b[key], key
    for name, table in a["tables"].items():
        other = b["tables"][name]
        assert table.schema == other.schema, name
        for col in table.column_names:
            assert table.column(col).equals(other.column(col)), (name, col)


def test_bulk_equals_record_by_record(experiments: Path) -> None:
    folders = sorted(experiments.iterdir())
    assert len(folders) == 3
    n_failed = 0
    for folder in folders:
        samples = _samples(folder)
        n_failed += sum(len(f) for _, f in samples)
        old = parse_samples("run", samples)
        new = reference_bulk.parse_bulk("run", samples)  # raises Unsupported if it handed back
        assert old["tables"]["tool_calls"].num_rows > 0 and old["tables"]["messages"].num_rows > 0
        _assert_same(old, new)
    assert n_failed > 0, "the generated set has failed attempts"


def _edit(folder: Path, tmp_path: Path, change) -> Path:
    import shutil

    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    first = sorted(p for p in copy.glob("*.json") if p.name != "summary.json")[0]
    rec = json.loads(first.read_text())
    change(rec)
    first.write_text(json.dumps(rec))
    return copy


def _with_call(rec: dict) -> dict:
    return next(c for t in rec["turns"] for c in t.get("tool_calls") or [])


@pytest.mark.parametrize("case, change", [
    ("list content", lambda r: r["messages"].append({"role": "user", "content": [{"type": "text", "text": "é"}]})),
    ("numeric paper id", lambda r: _with_call(r)["args"].update(paper_id=1234)),
    ("args not an object", lambda r: _with_call(r).update(args=["x", 1.5])),
    ("2.0 for 2", lambda r: r.update(budget_used=float(r["budget_used"]))),
    ("1.5 for an integer", lambda r: r.update(budget_used=1.5)),
    ("true for a number", lambda r: r["turns"][0].update(timestamp=True)),
    ("empty role falls back to type", lambda r: r["messages"].append({"role": "", "type": "reasoning"})),
    # the messages' turns for the search index (UNIT_TURN_COLUMN) where messages and turns do not pair up
    ("assistant messages past the assistant turns", lambda r: r["messages"].extend(
        [{"role": "assistant", "content": "more"}, {"role": "user", "content": "go on"},
         {"role": "assistant", "content": "again"}])),
    ("no assistant message", lambda r: r.update(messages=[m for m in r["messages"] if m.get("role") != "assistant"])),
    ("an error turn", lambda r: r["turns"].insert(1, {"role": "error", "content": "API error"})),
])
def test_unusual_shapes_read_as_before(case: str, change, experiments: Path, tmp_path: Path) -> None:
    folder = _edit(sorted(experiments.iterdir())[0], tmp_path, change)
    samples = _samples(folder)
    _assert_same(parse_samples("run", samples), reference_bulk.parse_task("run", samples))


def test_every_table_column_is_filled(experiments: Path) -> None:
    """Columns the reference never records stay null; all others come from the files."""
    out = reference_bulk.parse_bulk("run", _samples(sorted(experiments.iterdir())[0]))
    for name, table in out["tables"].items():
        for col in table.column_names:
            if col not in ("wait_s", "repaired_chars", "resolved_section_index", "resolved_header",
                           "section_query", "search_query", "answer", "paper_id", "name", "tool_call_id",
                           "predicted_answer", "reasoning", reference_bulk.ALIAS_COLUMN):
                assert table.column(col).null_count == 0, (name, col)
    assert pa.types.is_int32(out["tables"]["tool_calls"].schema.field("seq").type)
