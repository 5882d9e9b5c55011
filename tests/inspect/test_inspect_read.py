"""Reading Inspect logs: the built-in reader and Inspect's API give identical tables; damage is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

import inspect_fixtures as fx
from inspect_fixtures import inspect_logs  # noqa: F401  (the session's logs)
from agenthop.ingest.conform import IngestError
from agenthop.ingest.sources import inspect_import, inspect_read


def _tables(path: Path, reader: str) -> dict[str, pa.Table]:
    lt = inspect_import.read_log(path, reader=reader)
    out: dict[str, list[pa.Table]] = {}
    for rd in lt.runs:
        for name, t in rd.tables.items():
            out.setdefault(name, []).append(t)
    tables = {name: pa.concat_tables(ts) for name, ts in out.items()}
    tables["items"] = lt.items
    return tables


@pytest.mark.parametrize("kind", ["eval_logs", "json_logs"])
def test_builtin_reader_and_inspect_api_give_identical_tables(inspect_logs, kind):
    for path in getattr(inspect_logs, kind):
        ours, theirs = _tables(path, "builtin"), _tables(path, "inspect")
        assert ours.keys() == theirs.keys()
        for name in ours:
            assert ours[name].num_rows > 0, name
            assert ours[name].equals(theirs[name]), f"{path.name}: {name} differs between the readers"


def test_both_readers_give_identical_tables_for_the_agentdojo_shaped_log(inspect_logs):
    ours, theirs = _tables(inspect_logs.agentdojo, "builtin"), _tables(inspect_logs.agentdojo, "inspect")
    assert ours.keys() == theirs.keys()
    for name in ours:
        assert ours[name].equals(theirs[name]), f"{name} differs between the readers"


def test_eval_and_json_formats_give_the_same_rows(inspect_logs):
    # the same task and scripts, written once as .eval and once as .json: equal apart from ids and times
    def key_rows(path: Path) -> list[tuple]:
        t = _tables(path, "builtin")
        traj = t["trajectories"].to_pylist()
        return sorted((r["sample_id"], r["predicted_answer"], r["score"], r["terminated_by"], r["total_tokens"])
                      for r in traj)

    for e, j in zip(inspect_logs.eval_logs, inspect_logs.json_logs):
        assert key_rows(e) == key_rows(j)


def test_members_are_zstd_and_condensed_events_are_expanded(inspect_logs):
    import zipfile

    path = inspect_logs.eval_logs[0]
    with zipfile.ZipFile(path) as z:
        assert {i.compress_type for i in z.infolist()} == {inspect_read.ZIP_ZSTD}
    log = inspect_read.ZipLog(path)
    raw = log.member("samples/s3_epoch_1.json")
    model = [e for e in raw["events"] if e["event"] == "model"]
    assert model[0]["input"] == [] and model[0]["input_refs"]  # condensed on disk
    s3 = next(s for s in log.samples() if s["id"] == "s3")
    expanded = [e for e in s3["events"] if e["event"] == "model"]
    assert [m["role"] for m in expanded[1]["input"]] == ["user", "assistant", "tool"]
    assert "events_data" not in s3
    log.close()


def test_attachments_are_resolved(inspect_logs):
    log = inspect_read.ZipLog(inspect_logs.eval_logs[0])
    raw = log.member("samples/s2_epoch_1.json")
    assert raw["attachments"], "the long question should be stored as an attachment"
    assert "attachment://" in json.dumps(raw["events"])
    s2 = next(s for s in log.samples() if s["id"] == "s2")
    assert s2["input"] == "s2: " + fx.QUESTIONS["s2"]
    assert "attachment://" not in str(s2)
    log.close()


@pytest.mark.parametrize("reader", ["builtin", "inspect"])
def test_log_still_being_written_is_read_from_its_journal(inspect_logs, tmp_path, reader):
    running = fx.still_running(inspect_logs.eval_logs[0], tmp_path / "running.eval")
    lt = inspect_import.read_log(running, reader=reader)
    assert all(rd.partial for rd in lt.runs)
    done = inspect_import.read_log(inspect_logs.eval_logs[0], reader=reader)
    for a, b in zip(lt.runs, done.runs):
        assert a.run_id == b.run_id
        assert a.tables["trajectories"].equals(b.tables["trajectories"])
        assert a.tables["runs"].column("finished_at").to_pylist() == [None]


READERS = ("builtin", "inspect")


def _corrupt_member(src: Path, dst: Path) -> Path:
    data = bytearray(src.read_bytes())
    at = data.find(b"samples/s1_epoch_1.json") + len("samples/s1_epoch_1.json") + 8
    data[at : at + 16] = b"\0" * 16  # inside the first sample's compressed bytes
    dst.write_bytes(bytes(data))
    return dst


def _truncated_json(src: Path, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes()[: src.stat().st_size // 2])
    return dst


def _json_without_a_sample(src: Path, dst: Path) -> Path:
    doc = json.loads(src.read_text())
    doc["samples"] = [s for s in doc["samples"] if not (s["id"] == "s2" and s["epoch"] == 1)]
    dst.write_text(json.dumps(doc))
    return dst


def _json_with_a_bad_field(src: Path, dst: Path) -> Path:
    return fx.edit_json_log(src, dst, "s1", 1, lambda s: s.update(messages={"not": "a list"}))


# damage -> (the log it spoils, what both readers must say besides the file's name)
REFUSED = {
    "truncated zip": ("eval", fx.truncated, "damaged or truncated ZIP"),
    "no header, no journal": ("eval", fx.without_header_and_start, "neither header.json nor _journal/start.json"),
    "a sample member missing": ("eval", fx.without_a_sample,
                                "member samples/s2_epoch_1.json is missing from the log"),
    "a corrupt member": ("eval", _corrupt_member, "(member samples/s1_epoch_1.json): cannot be decompressed"),
    "truncated json": ("json", _truncated_json, "not valid JSON"),
    "a sample missing from a json log": ("json", _json_without_a_sample,
                                         "sample 's2' (epoch 1) is missing from the log"),
    "a sample field of the wrong type": ("json", _json_with_a_bad_field,
                                         "sample 's1' epoch 1: field 'messages' must be a list"),
}


@pytest.mark.parametrize("damage", sorted(REFUSED))
def test_damaged_logs_are_refused_by_both_readers_with_one_message(inspect_logs, tmp_path, damage):
    kind, spoil, reason = REFUSED[damage]
    src = (inspect_logs.eval_logs if kind == "eval" else inspect_logs.json_logs)[0]
    bad = spoil(src, tmp_path / f"bad.{kind}")
    messages = []
    for reader in READERS:
        with pytest.raises(IngestError) as exc:
            inspect_import.read_log(bad, reader=reader)
        messages.append(str(exc.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"{bad}") and reason in messages[0] and "\n" not in messages[0]


def test_auto_reads_through_inspects_api_when_it_is_installed(inspect_logs, monkeypatch):
    path = inspect_logs.eval_logs[0]
    assert isinstance(inspect_read.open_log(path, "auto"), inspect_read.InspectApiLog)
    assert isinstance(inspect_read.open_log(path, "builtin"), inspect_read.ZipLog)
    # without inspect-ai, auto falls back to the built-in reader; --inspect-reader inspect is refused
    monkeypatch.setattr(inspect_read, "inspect_installed", lambda: False)
    assert isinstance(inspect_read.open_log(path, "auto"), inspect_read.ZipLog)
    with pytest.raises(IngestError, match="needs inspect-ai"):
        inspect_read.open_log(path, "inspect")


def test_unknown_format_version_without_inspect_is_refused(inspect_logs, tmp_path, monkeypatch):
    doc = json.loads(inspect_logs.json_logs[0].read_text())
    doc["version"] = 99
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(doc))
    monkeypatch.setattr(inspect_read, "inspect_installed", lambda: False)
    with pytest.raises(IngestError) as exc:
        inspect_read.open_log(newer, "auto")
    assert str(newer) in str(exc.value) and "version 99 is newer than this reader knows" in str(exc.value)


@pytest.mark.parametrize("reader", READERS)
def test_nan_score_is_loaded_as_null_with_a_recorded_reason(inspect_logs, tmp_path, reader):
    def nan(sample):
        sample["scores"]["exact"]["value"] = float("nan")

    bad = fx.edit_json_log(inspect_logs.json_logs[0], tmp_path / "nan.json", "s1", 1, nan)
    assert "NaN" in bad.read_text()
    lt = inspect_import.read_log(bad, score="exact", reader=reader)
    run = next(rd for rd in lt.runs if rd.run_id.endswith("-e1"))
    traj = {r["sample_id"]: r for r in run.tables["trajectories"].to_pylist()}
    assert traj["s1"]["score"] is None and traj["s3"]["score"] == 1.0
    scores = [r for r in run.tables["scores"].to_pylist() if r["sample_id"] == "s1" and r["scorer"] == "exact"]
    assert scores == [{**scores[0], "value_text": "nan", "value_num": None}]
    notes = run.tables["runs"].column("config_json")[0].as_py()
    assert "sample s1 epoch 1: score exact is nan, kept as text" in notes
    assert any("score exact is nan" in n for n in lt.notes)


@pytest.mark.parametrize("reader", READERS)
def test_sample_without_messages_is_loaded_with_a_recorded_reason(inspect_logs, tmp_path, reader):
    def strip(sample):
        sample["messages"] = []

    bad = fx.edit_json_log(inspect_logs.json_logs[0], tmp_path / "nomsg.json", "s2", 2, strip)
    lt = inspect_import.read_log(bad, reader=reader)
    run = next(rd for rd in lt.runs if rd.run_id.endswith("-e2"))
    assert "s2" not in run.tables["messages"].column("sample_id").to_pylist()
    assert "s2" in run.tables["trajectories"].column("sample_id").to_pylist()
    assert "sample s2 epoch 2: the sample has no messages (no transcript loaded)" in lt.notes


@pytest.mark.parametrize("kind", ["nan_score", "no_messages", "still_running"])
def test_readable_damage_gives_identical_tables_through_both_readers(inspect_logs, tmp_path, kind):
    if kind == "still_running":
        path = fx.still_running(inspect_logs.eval_logs[0], tmp_path / "running.eval")
    elif kind == "nan_score":
        path = fx.edit_json_log(inspect_logs.json_logs[0], tmp_path / "nan.json", "s1", 1,
                                lambda s: s["scores"]["grade"]["value"].update(utility=float("nan")))
    else:
        path = fx.edit_json_log(inspect_logs.json_logs[0], tmp_path / "nomsg.json", "s2", 2,
                                lambda s: s.update(messages=[]))
    ours, theirs = _tables(path, "builtin"), _tables(path, "inspect")
    assert ours.keys() == theirs.keys()
    for name in ours:
        assert ours[name].equals(theirs[name]), f"{kind}: {name} differs between the readers"


def test_unknown_score_choice_names_the_scores_the_log_has(inspect_logs):
    with pytest.raises(IngestError) as exc:
        inspect_import.read_log(inspect_logs.json_logs[0], score="nope")
    assert "exact, grade.security, grade.utility" in str(exc.value)


def test_directory_discovery_finds_both_formats(inspect_logs, tmp_path):
    root = inspect_logs.eval_logs[0].parent.parent
    found = inspect_read.discover(root)
    assert set(found) >= set(inspect_logs.eval_logs) | set(inspect_logs.json_logs)
    with pytest.raises(IngestError, match="no Inspect logs"):
        inspect_read.discover(tmp_path)
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(IngestError, match="not an Inspect log"):
        inspect_read.discover(tmp_path / "notes.txt")
