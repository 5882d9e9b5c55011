"""The bench's generator of large Inspect logs (bench/inspect_corpus.py): AgentDojo-shaped samples of
about 60 KB of JSON, the same for one seed, in a ZIP that readers open (with ZIP64 end records past
65,535 members)."""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import inspect_corpus  # noqa: E402

from agenthop.ingest.sources.inspect_read import ZipLog  # noqa: E402


def test_samples_are_agentdojo_shaped_and_seeded() -> None:
    maker = inspect_corpus.SampleMaker(seed=0)
    sizes = [len(json.dumps(maker.sample(i))) for i in range(200)]
    assert 50_000 <= sum(sizes) / len(sizes) <= 70_000
    s = maker.sample(7)
    assert s == inspect_corpus.SampleMaker(seed=0).sample(7)  # the same on every run
    assert s != inspect_corpus.SampleMaker(seed=1).sample(7)
    assert s["id"] == "user_task_000007-injection_task_7"
    models = [e for e in s["events"] if e["event"] == "model"]
    assert models and all(e["input"] == [] and e["input_refs"] for e in models)  # condensed events
    assert any(str(m.get("content", "")).startswith("attachment://") for m in s["events_data"]["messages"])
    assert set(s["scores"]["injection_task_scorer"]["value"]) == {"utility", "security"}


def test_a_log_reads_back_through_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "dojo.eval"
    info = inspect_corpus.write_log(path, 5)
    assert info["samples"] == 5 and info["file_bytes"] == path.stat().st_size
    log = ZipLog(path)
    try:
        samples = list(log.samples())
        assert [s["id"] for s in samples] == [inspect_corpus.SampleMaker().sample_id(i) for i in range(5)]
        assert log.sample_bytes() < info["json_bytes"] + 1 and log.sample_bytes() > 0.9 * info["json_bytes"]
        # attachments resolved, events expanded: no reference is left
        assert "attachment://" not in json.dumps(samples)
    finally:
        log.close()


def test_zip64_end_records(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(inspect_corpus, "ZIP64_MEMBERS", 2)  # as past 65,535 members
    path = tmp_path / "dojo64.eval"
    inspect_corpus.write_log(path, 3)
    assert b"PK\x06\x06" in path.read_bytes()[-200:]
    with zipfile.ZipFile(path) as z:
        assert len(z.infolist()) == 5  # the journal, three samples, the header
    log = ZipLog(path)
    try:
        assert len(list(log.samples())) == 3
    finally:
        log.close()
