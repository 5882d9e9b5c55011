"""The DuckDB path of the reference import (ingest/reference_duck.py) against the record-by-record
parser (ingest/reference_parse.py), the oracle: same rows in the same order, segments, sample ids,
models and budget; input the oracle would word an error for (or the SQL cannot prove it reads as
the oracle does) is handed back (None), never converted differently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agenthop.ingest import reference_duck, reference_json
from agenthop.ingest.reference_parse import parse_samples
from ingest_fixtures import ref_trajectory, ref_turn, write_json
from tests.test_ingest_reference_bulk import experiments  # noqa: F401  (the generated set, a fixture)
from tests.test_ingest_reference_json import imported, ingest, q, write_experiments  # noqa: F401


def _item(folder: Path) -> tuple[str, list]:
    return reference_json.run_id_of(folder.name), reference_json.folder_samples(folder)


def _assert_same(old: dict, new: dict) -> None:
    assert old["error"] is None, old["error"]
    for key in ("sample_ids", "budget_total", "models", "segments"):
        assert old[key] == new[key], key
    for name, table in old["tables"].items():
        other = new["tables"][name]
        assert table.schema == other.schema, name
        for col in table.column_names:
            assert table.column(col).equals(other.column(col)), (name, col)


def _compare(folders: list[Path]) -> list[dict | None]:
    items = [_item(f) for f in folders]
    results = reference_duck.parse_folders(items, threads=2)
    for (run_id, samples), new in zip(items, results):
        if new is not None:
            _assert_same(parse_samples(run_id, samples), new)
    return results


def test_generated_set_equals_the_oracle(experiments: Path) -> None:  # noqa: F811
    """Simulated runs exported as the reference logs them: failed attempts, full message histories."""
    folders = sorted(experiments.iterdir())
    results = _compare(folders)
    assert all(r is not None for r in results), "every generated folder takes the DuckDB path"
    assert sum(len(f) for _, s in map(_item, folders) for _, f in s) > 0, "the set has failed attempts"
    assert all(r["tables"]["messages"].num_rows and r["tables"]["tool_calls"].num_rows for r in results)


def _hand_written(tmp_path: Path, plain_messages: bool) -> Path:
    exp = tmp_path / "experiments"
    write_experiments(exp, "0" * 16)
    if plain_messages:  # without the message whose content is a list (which the oracle formats)
        path = exp / "ref-model" / "st_0001.json"
        rec = json.loads(path.read_text())
        rec["messages"] = [m for m in rec["messages"] if not isinstance(m.get("content"), list)]
        path.write_text(json.dumps(rec, indent=2, ensure_ascii=False))
    return exp


def test_hand_written_folders(tmp_path: Path) -> None:
    """Every tool outcome, a failed attempt merged into the final record, the token-limit turn, a
    turn without tool calls, a folder without summary.json; a list content is handed back."""
    exp = _hand_written(tmp_path / "a", plain_messages=True)
    assert all(r is not None for r in _compare(sorted(exp.iterdir())))
    exp = _hand_written(tmp_path / "b", plain_messages=False)
    results = _compare(sorted(exp.iterdir()))
    assert results[0] is None and results[1] is not None  # ref-model, ref-model_noretrieval


def _one(tmp_path: Path, rec: dict, fails: list[dict] = ()) -> dict | None:
    folder = tmp_path / "m"
    for k, f in enumerate(fails):
        write_json(folder / "_failed_attempts" / f"st_0001.attempt_{k}.json", f)
    write_json(folder / "st_0001.json", rec)
    return _compare([folder])[0]


def _base(**kw) -> dict:
    turns = [ref_turn(0, [("read_section", {"paper_id": "p1", "section": "(B)"})], [("=== Résumé ===\n\nx", 5)],
                      before=30, after=25),
             {"turn": 1, "role": "assistant", "content": "no calls here", "prompt_tokens": 5}]
    rec = ref_trajectory("st_0001", turns, messages=[{"role": "user", "content": "q"}])
    rec.update(kw)
    return rec


TAKEN = {
    "unicode and a big output": lambda r: r["turns"][0]["tool_results"][0].update(
        output="=== Ünïcode ☃ ===\n\n" + "é😀 " * 50_000),
    "missing optional fields": lambda r: [r.pop(k) for k in ("messages", "cache_read_tokens", "reasoning",
                                                              "wall_time_s", "retry_count")],
    "null lists": lambda r: r.update(messages=None) or r["turns"][1].update(tool_calls=None, tool_results=None),
    "numeric paper id": lambda r: r["turns"][0]["tool_calls"][0]["args"].update(paper_id=1234),
    "empty role falls back to type": lambda r: r["messages"].append({"role": "", "type": "reasoning"}),
    "call_id for tool_call_id": lambda r: r["messages"].append({"role": "tool", "call_id": "c1", "output": "o"}),
    "escapes in arguments": lambda r: r["turns"][0]["tool_calls"][0]["args"].update(q='a"b\\c\t/d, e: f'),
    "args absent": lambda r: r["turns"][0]["tool_calls"][0].pop("args"),
    "nested args": lambda r: r["turns"][0]["tool_calls"][0]["args"].update(opts={"k": [1, True, None]}),
}

HANDED_BACK = {
    "a string for an integer": lambda r: r.update(budget_used="5"),
    "true for an integer": lambda r: r.update(predicted_index=True),
    "2.0 for an integer": lambda r: r.update(budget_used=2.0),
    "true for a number": lambda r: r["turns"][0].update(timestamp=True),
    "a number for a string": lambda r: r["turns"][0].update(role=5),
    "a number for an output": lambda r: r["turns"][0]["tool_results"][0].update(output=5),
    "int64 overflow of a 32-bit field": lambda r: r.update(budget_used=2**31),
    "list content": lambda r: r["messages"].append({"role": "user", "content": [{"type": "text", "text": "é"}]}),
    "text that looks like an object": lambda r: r["messages"].append({"role": "user", "content": '{"a": 1}'}),
    "a float argument": lambda r: r["turns"][0]["tool_calls"][0]["args"].update(k=1.5),
    "tool_calls not a list": lambda r: r["turns"][1].update(tool_calls={"name": "x"}),
    "messages not a list": lambda r: r.update(messages="hello"),
    "a turn not an object": lambda r: r["turns"].append(5),
    "sample id of another file": lambda r: r.update(sample_id="st_0002"),
    "more results than calls": lambda r: r["turns"][0]["tool_results"].append({"output": "x", "cost": 0}),
    "missing terminated_by": lambda r: r.pop("terminated_by"),
}


@pytest.mark.parametrize("case", sorted(TAKEN))
def test_shapes_the_sql_reads_as_the_oracle(case: str, tmp_path: Path) -> None:
    rec = _base()
    TAKEN[case](rec)
    assert _one(tmp_path, rec) is not None


@pytest.mark.parametrize("case", sorted(HANDED_BACK))
def test_shapes_handed_back(case: str, tmp_path: Path) -> None:
    rec = _base()
    HANDED_BACK[case](rec)
    assert _one(tmp_path, rec) is None


def test_failed_attempts(tmp_path: Path) -> None:
    """retry_count failed attempts become rows and their totals come off the final record; when every
    attempt failed, the extra file only holds totals; a count that does not add up is handed back."""
    fail = _base(terminated_by="error", total_prompt_tokens=7, total_completion_tokens=0, api_error_count=1)
    final = _base(retry_count=1, total_prompt_tokens=200 + 7, api_error_count=1)
    r = _one(tmp_path / "a", final, [fail])
    assert r is not None and r["tables"]["trajectories"].column("attempt").to_pylist() == [0, 1]
    every = _base(retry_count=1, terminated_by="error", total_prompt_tokens=200 + 14, api_error_count=2)
    r = _one(tmp_path / "b", every, [fail, fail])
    assert r is not None and r["tables"]["trajectories"].num_rows == 2
    assert _one(tmp_path / "c", _base(retry_count=1, total_prompt_tokens=3), [fail]) is None  # 3 < 7
    assert _one(tmp_path / "d", _base(retry_count=2), [fail]) is None


def test_import_through_either_path_gives_the_same_warehouse(
        imported: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """End to end (sections resolved, conformed, written): the DuckDB path and the careful one."""
    exp = tmp_path / "plain"
    shutil.copytree(imported["exp"], exp)
    path = exp / "ref-model" / "st_0001.json"
    rec = json.loads(path.read_text())
    rec["messages"] = [m for m in rec["messages"] if not isinstance(m.get("content"), list)]
    path.write_text(json.dumps(rec))
    taken: list[int] = []
    real = reference_duck.parse_folders

    def counted(items, threads=None):
        out = real(items, threads)
        taken.append(sum(r is not None for r in out))
        return out

    fast_db, slow_db = tmp_path / "fast.duckdb", tmp_path / "slow.duckdb"
    monkeypatch.setattr(reference_duck, "parse_folders", counted)
    res = ingest("--db", str(fast_db), "--benchmark", str(imported["bench"]), "--reference-json", str(exp))
    assert res.exit_code == 0, res.output
    assert taken == [2]
    monkeypatch.setattr(reference_duck, "parse_folders", lambda items, threads=None: [None] * len(items))
    res = ingest("--db", str(slow_db), "--benchmark", str(imported["bench"]), "--reference-json", str(exp))
    assert res.exit_code == 0, res.output
    for table in ("runs", "trajectories", "turns", "tool_calls", "messages", "ingest_log"):
        cols = "* EXCLUDE (load_id, loaded_at)" if table == "ingest_log" else "*"
        sql = f"SELECT {cols} FROM raw.{table} ORDER BY ALL"
        assert q(fast_db, sql) == q(slow_db, sql), table
