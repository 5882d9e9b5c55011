"""RunWriter: atomic part files, one part number per flush, crash recovery, _SUCCESS."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from agenthop.harness import writer as W
from agenthop.harness.errors import AgentHopError
from agenthop.harness.writer import RunWriter, finished_samples, rows_to_table
from agenthop.schemas.trajectory import TABLES

RUN_ID = "demo__full__r0__0123abcd"


@dataclass
class FakeAttempt:
    trajectory: dict[str, Any]
    turns: list[dict[str, Any]]
    tool_calls: list[dict[str, Any]]
    messages: list[dict[str, Any]] = field(default_factory=list)


def attempt(sid: str, k: int, final: bool, *, terminated: str = "answer", correct: bool = True,
            n_turns: int = 2, tokens: int = 100) -> FakeAttempt:
    traj = {
        "sample_id": sid, "attempt": k, "is_final": final, "predicted_answer": "A" if correct else "B",
        "predicted_index": 0 if correct else 1, "is_correct": correct, "terminated_by": terminated,
        "total_turns": n_turns, "budget_used": 3, "total_prompt_tokens": tokens - 10,
        "total_completion_tokens": 10, "cache_read_tokens": 0, "cache_creation_tokens": 0,
        "total_tokens": tokens, "tool_errors": 0, "api_error_count": 0, "transient_retry_count": 0,
        "wall_time_s": 0.01, "reasoning": None,
    }
    turns = [
        {"sample_id": sid, "attempt": k, "turn": t, "role": "assistant", "n_tool_calls": 1, "prompt_tokens": 5,
         "completion_tokens": 5, "cache_read_tokens": 0, "cache_creation_tokens": 0, "cumulative_tokens": 10 * (t + 1),
         "budget_before": 30, "budget_after": 29, "content_chars": 3, "t_offset_s": 0.0}
        for t in range(n_turns)
    ]
    calls = [
        {"sample_id": sid, "attempt": k, "turn": t, "call_index": 0, "seq": t, "tool": "think", "args_json": "{}",
         "paper_id": None, "section_query": None, "resolved_header": None, "resolved_section_index": None,
         "search_query": None, "answer": None, "cost": 0, "status": "ok", "output_chars": 4, "budget_after": 30}
        for t in range(n_turns)
    ]
    msgs = [{"sample_id": sid, "attempt": k, "idx": 0, "role": "user", "name": None, "tool_call_id": None,
             "content": "hello"}]
    return FakeAttempt(traj, turns, calls, msgs)


def meta(run_id: str = RUN_ID) -> dict[str, Any]:
    return {
        "run_id": run_id, "model": "demo", "backend": "sim", "condition": "full", "replicate": 0,
        "benchmark_sha256": "0" * 16, "budget_total": 30, "max_turns": 20, "max_total_tokens": 200_000,
        "harness_version": "0.1.0", "config_json": "{}", "family": None, "tier": None,
        "generation": None,
    }


def table_rows(run_dir: Path, table: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for p in sorted(run_dir.glob(f"{table}-*.parquet")):
        rows.extend(pq.read_table(p).to_pylist())
    return rows


def names(run_dir: Path) -> list[str]:
    return sorted(p.name for p in run_dir.iterdir())


def test_rows_to_table_adds_run_id_and_matches_schema() -> None:
    a = attempt("s1", 0, True)
    t = rows_to_table(a.turns, "turns", RUN_ID)
    assert t.schema == TABLES["turns"]
    assert t.column("run_id").to_pylist() == [RUN_ID, RUN_ID]
    assert t.column("turn").to_pylist() == [0, 1]
    bad = dict(a.trajectory)
    del bad["terminated_by"]
    with pytest.raises(ValueError, match=r"trajectories\.terminated_by.*sample s1"):
        rows_to_table([bad], "trajectories", RUN_ID)


def test_flush_writes_one_part_per_table_trajectories_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[tuple[str, str]] = []
    real_replace, real_fsync = os.replace, os.fsync

    def rec_replace(src: Any, dst: Any) -> None:
        src, dst = Path(src), Path(dst)
        assert src.parent == dst.parent and src.name.startswith(".tmp-")  # temp name in the same directory
        events.append(("replace", dst.name))
        real_replace(src, dst)

    def rec_fsync(fd: int) -> None:
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}").rsplit("/", 1)[-1]))
        real_fsync(fd)

    monkeypatch.setattr(W.os, "replace", rec_replace)
    monkeypatch.setattr(W.os, "fsync", rec_fsync)
    w = RunWriter(tmp_path, meta(), record_messages=True, flush_every=2, flush_seconds=1e9, compact=False)
    w.begin()
    events.clear()
    w.add("s1", [attempt("s1", 0, False, terminated="error"), attempt("s1", 1, True)])
    assert not list(w.run_dir.glob("trajectories-*"))  # buffered until 2 samples
    w.add("s2", [attempt("s2", 0, True, correct=False)])
    replaced = [name for kind, name in events if kind == "replace"]
    assert replaced == ["messages-00000.parquet", "tool_calls-00000.parquet", "turns-00000.parquet",
                        "trajectories-00000.parquet"]
    # every temp file was fsynced before its rename
    for i, (kind, name) in enumerate(events):
        if kind == "replace":
            assert ("fsync", f".tmp-{name}.{os.getpid()}") in events[:i]
    w.add("s3", [attempt("s3", 0, True)])
    info = w.close(complete=True)
    run_dir = tmp_path / RUN_ID
    assert names(run_dir) == sorted([
        ".lock", "_SUCCESS", "runs-00000.parquet",
        *(f"{t}-{k:05d}.parquet" for t in ("messages", "tool_calls", "turns", "trajectories") for k in (0, 1)),
    ])
    traj = table_rows(run_dir, "trajectories")
    assert [(r["sample_id"], r["attempt"], r["is_final"]) for r in traj] == [
        ("s1", 0, False), ("s1", 1, True), ("s2", 0, True), ("s3", 0, True)]
    assert {r["run_id"] for r in traj} == {RUN_ID}
    # the failed attempt's rows sit in the same part as the final one
    assert pq.read_table(run_dir / "turns-00000.parquet").column("sample_id").to_pylist() == ["s1"] * 4 + ["s2"] * 2
    assert info is not None and info == json.loads((run_dir / "_SUCCESS").read_text())
    assert info["n_samples"] == 3 and info["n_correct"] == 2 and info["total_tokens"] == 400
    assert info["rows"] == {"runs": 1, "trajectories": 4, "turns": 8, "tool_calls": 8, "messages": 4}
    assert info["parts"] == 2
    runs = pq.read_table(run_dir / "runs-00000.parquet").to_pylist()
    assert len(runs) == 1 and runs[0]["run_id"] == RUN_ID and runs[0]["finished_at"] is not None
    assert finished_samples(run_dir) == {"s1", "s2", "s3"}


def test_crash_between_parts_leaves_no_half_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = RunWriter(tmp_path, meta(), record_messages=True, flush_every=1, compact=False)
    w.begin()
    w.add("s1", [attempt("s1", 0, True)])  # part 0 complete
    real_replace = os.replace

    def crash_on_trajectories(src: Any, dst: Any) -> None:
        if Path(dst).name.startswith("trajectories-"):
            raise KeyboardInterrupt("simulated kill")
        real_replace(src, dst)

    monkeypatch.setattr(W.os, "replace", crash_on_trajectories)
    with pytest.raises(KeyboardInterrupt):
        w.add("s2", [attempt("s2", 0, True)])
    monkeypatch.setattr(W.os, "replace", real_replace)
    w._release()  # the process "died": its lock goes away
    run_dir = tmp_path / RUN_ID
    (run_dir / f".tmp-turns-00007.parquet.{os.getpid() + 1}").write_bytes(b"partial")  # a temp of a dead process
    assert (run_dir / "turns-00001.parquet").exists() and not (run_dir / "trajectories-00001.parquet").exists()
    assert finished_samples(run_dir) == {"s1"}

    w2 = RunWriter(tmp_path, meta(), record_messages=True, flush_every=1, compact=False)
    assert w2.finished == {"s1"}
    assert sorted(w2.state.removed_orphan_parts) == ["messages-00001.parquet", "tool_calls-00001.parquet",
                                                     "turns-00001.parquet"]
    assert not any(n.startswith(".tmp-") for n in names(run_dir))
    w2.begin()
    w2.add("s2", [attempt("s2", 0, True)])
    w2.close(complete=True)
    for table in ("trajectories", "turns", "tool_calls", "messages"):
        ids = [r["sample_id"] for r in table_rows(run_dir, table)]
        assert sorted(set(ids)) == ["s1", "s2"]
    assert [r["sample_id"] for r in table_rows(run_dir, "trajectories")] == ["s1", "s2"]
    assert [r["turn"] for r in table_rows(run_dir, "turns") if r["sample_id"] == "s2"] == [0, 1]


def test_resume_keeps_started_at_and_continues_part_numbers(tmp_path: Path) -> None:
    w = RunWriter(tmp_path, meta(), record_messages=False, flush_every=1, compact=False)
    w.begin()
    w.add("s1", [attempt("s1", 0, True)])
    w.close(complete=False)
    run_dir = tmp_path / RUN_ID
    started = pq.read_table(run_dir / "runs-00000.parquet").to_pylist()[0]
    assert started["finished_at"] is None and not (run_dir / "_SUCCESS").exists()
    assert not list(run_dir.glob("messages-*"))  # messages not recorded

    w2 = RunWriter(tmp_path, meta(), record_messages=False, flush_every=1, compact=False)
    assert w2.finished == {"s1"} and w2.state.next_part == 1
    w2.begin()
    with pytest.raises(ValueError, match="already finished"):
        w2.add("s1", [attempt("s1", 0, True)])
    w2.add("s2", [attempt("s2", 0, True)])
    w2.close(complete=True)
    assert (run_dir / "trajectories-00001.parquet").exists()
    row = pq.read_table(run_dir / "runs-00000.parquet").to_pylist()[0]
    assert row["started_at"] == started["started_at"] and row["finished_at"] is not None


def test_error_samples_are_unfinalised_for_retry_unless_kept(tmp_path: Path) -> None:
    w = RunWriter(tmp_path, meta(), record_messages=True, flush_every=10, compact=False)
    w.begin()
    w.add("ok", [attempt("ok", 0, True)])
    w.add("bad", [attempt("bad", k, k == 2, terminated="error") for k in range(3)])
    w.close(complete=True)
    run_dir = tmp_path / RUN_ID
    assert finished_samples(run_dir) == {"ok", "bad"}

    kept = RunWriter(tmp_path, meta(), retry_errors=False, compact=False)
    assert kept.finished == {"ok", "bad"} and kept.state.tokens == 400
    kept.close(complete=False)
    assert (run_dir / "_SUCCESS").exists()

    w2 = RunWriter(tmp_path, meta(), record_messages=True, compact=False)
    assert w2.finished == {"ok"} and w2.state.retried_error_samples == ["bad"]
    assert w2.state.tokens == 400  # the failed attempts were spent and still count
    assert w2.state.next_attempt == {"ok": 1, "bad": 3}  # a retry continues the numbering
    assert not (run_dir / "_SUCCESS").exists()
    for table in ("trajectories", "turns", "tool_calls", "messages"):  # every row is kept ...
        assert {r["sample_id"] for r in table_rows(run_dir, table)} == {"ok", "bad"}
    finals_now = {(r["sample_id"], r["attempt"]) for r in table_rows(run_dir, "trajectories") if r["is_final"]}
    assert finals_now == {("ok", 0)}  # ... but 'bad' no longer has a final attempt
    w2.begin()
    w2.add("bad", [attempt("bad", 3, True)])
    w2.close(complete=True)
    traj = sorted((r["sample_id"], r["attempt"], r["is_final"]) for r in table_rows(run_dir, "trajectories"))
    assert traj == [("bad", 0, False), ("bad", 1, False), ("bad", 2, False), ("bad", 3, True), ("ok", 0, True)]


def test_orphan_rows_of_an_interrupted_rewrite_are_dropped(tmp_path: Path) -> None:
    w = RunWriter(tmp_path, meta(), record_messages=False, flush_every=10, compact=False)
    w.begin()
    w.add("a", [attempt("a", 0, True)])
    w.add("b", [attempt("b", 0, True)])
    w.close(complete=False)
    run_dir = tmp_path / RUN_ID
    # as if a rewrite had removed b from the trajectories part and then died
    t = pq.read_table(run_dir / "trajectories-00000.parquet")
    W.write_parquet_atomic(run_dir / "trajectories-00000.parquet",
                           t.filter(t.column("sample_id").to_numpy(zero_copy_only=False) == "a"))
    w2 = RunWriter(tmp_path, meta(), record_messages=False, compact=False)
    assert w2.finished == {"a"} and w2.state.removed_orphan_rows == 4  # 2 turns + 2 tool calls of b
    assert {r["sample_id"] for r in table_rows(run_dir, "turns")} == {"a"}
    assert {r["sample_id"] for r in table_rows(run_dir, "tool_calls")} == {"a"}
    w2.close(complete=False)


def test_second_writer_on_the_same_run_is_refused(tmp_path: Path) -> None:
    w = RunWriter(tmp_path, meta(), compact=False)
    with pytest.raises(AgentHopError, match="another process"):
        RunWriter(tmp_path, meta(), compact=False)
    w.close(complete=False)
    RunWriter(tmp_path, meta(), compact=False).close(complete=False)  # lock released


def test_empty_complete_run_has_every_required_table(tmp_path: Path) -> None:
    w = RunWriter(tmp_path, meta(), record_messages=False, compact=False)
    w.begin()
    info = w.close(complete=True)
    run_dir = tmp_path / RUN_ID
    assert info is not None and info["n_samples"] == 0 and info["accuracy"] is None
    for table in ("trajectories", "turns", "tool_calls"):
        t = pq.read_table(run_dir / f"{table}-00000.parquet")
        assert t.num_rows == 0 and t.schema == TABLES[table]


def test_unreadable_part_is_a_clear_error(tmp_path: Path) -> None:
    run_dir = tmp_path / RUN_ID
    run_dir.mkdir()
    (run_dir / "trajectories-00000.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(AgentHopError, match=r"trajectories-00000\.parquet: unreadable part file"):
        RunWriter(tmp_path, meta(), compact=False)


def test_inconsistent_attempt_flags_are_rejected(tmp_path: Path) -> None:
    w = RunWriter(tmp_path, meta(), compact=False)
    w.begin()
    with pytest.raises(ValueError, match="only the last attempt is final"):
        w.add("s", [attempt("s", 0, True), attempt("s", 1, True)])
    w.close(complete=False)


def test_time_based_flush(tmp_path: Path) -> None:
    w = RunWriter(tmp_path, meta(), record_messages=False, flush_every=100, flush_seconds=3600, compact=False)
    w.begin()
    w.add("s1", [attempt("s1", 0, True)])
    w.flush_if_due()
    assert w.pending == 1 and not list(w.run_dir.glob("trajectories-*"))
    w.flush_seconds = 0.0
    w.flush_if_due()
    assert w.pending == 0 and finished_samples(w.run_dir) == {"s1"}
    w.close(complete=False)
