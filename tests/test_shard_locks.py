"""An unsharded run and a shard of the same run refuse each other while one of them writes the run
directory (either would run the other's samples again); shards of a run still write it side by side."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from agenthop.harness.errors import AgentHopError
from agenthop.harness.shards import SPAN, Shard
from agenthop.harness.writer import RunWriter
from test_run_shards import _holds_lock, _pause_inside_a_run, _run, release  # noqa: F401 - release is a fixture
from test_run_writer import meta


def test_an_unsharded_writer_beside_a_shard_is_refused_naming_its_lock(tmp_path: Path) -> None:
    shard0 = RunWriter(tmp_path, meta(), compact=False, shard=Shard(0, 2))
    shard1 = RunWriter(tmp_path, meta(), compact=False, shard=Shard(1, 2))  # shards side by side
    run_dir = tmp_path / meta()["run_id"]
    with pytest.raises(AgentHopError) as refused:
        RunWriter(tmp_path, meta(), compact=False)
    assert str(refused.value) == (
        f"{run_dir}: shards of this run are writing it (locks .lock-0of2, .lock-1of2); an unsharded run beside "
        "them would run their samples again: wait until they finish, or run the missing shards with --shard")
    shard1.close(complete=False)
    with pytest.raises(AgentHopError, match=r"\(locks \.lock-0of2\)"):
        RunWriter(tmp_path, meta(), compact=False)
    shard0.close(complete=False)
    RunWriter(tmp_path, meta(), compact=False).close(complete=False)  # afterwards is fine


def test_a_shard_beside_an_unsharded_writer_is_refused(tmp_path: Path) -> None:
    whole = RunWriter(tmp_path, meta(), compact=False)
    run_dir = tmp_path / meta()["run_id"]
    with pytest.raises(AgentHopError) as refused:
        RunWriter(tmp_path, meta(), compact=False, shard=Shard(0, 2))
    assert str(refused.value) == (
        f"{run_dir}: an unsharded run is writing this run (lock .lock); shard 0/2 beside it would run its "
        "samples again: wait until it finishes (a shard started afterwards finds its share done)")
    with pytest.raises(AgentHopError, match=r"being written by another process \(lock \.lock\)"):
        RunWriter(tmp_path, meta(), compact=False)  # a second unsharded writer, as before
    whole.close(complete=False)
    RunWriter(tmp_path, meta(), compact=False, shard=Shard(0, 2)).close(complete=False)  # its own lock is free


def test_an_unsharded_run_started_beside_a_running_shard_is_refused(release: Path, tmp_path: Path) -> None:  # noqa: F811
    """End to end: shard 0/2 is stopped inside a run directory; an unsharded run of the same panel into
    the same store is refused for that run, naming the shard's lock, and writes none of its samples."""
    for attempt in range(5):
        out = tmp_path / f"runs-{attempt}"
        shard = _run(release, out, "--shard", "0/2")
        if _pause_inside_a_run(shard, out, Shard(0, 2).lock_name):
            break
        shard.communicate(timeout=600)
    else:
        pytest.fail("shard 0 was never caught inside a run")
    try:
        held = [p.parent for p in out.glob("*/.lock-0of2") if _holds_lock(p)]  # not a run it has finished
        assert len(held) == 1
        before = {d: sorted(p.name for p in d.iterdir()) for d in held}
        whole = _run(release, out)
        stdout, stderr = whole.communicate(timeout=600)
    finally:
        shard.send_signal(signal.SIGCONT)
    shard.communicate(timeout=600)
    assert whole.returncode != 0, stdout + stderr
    assert "Traceback" not in stderr, stderr
    assert "shards of this run are writing it (locks .lock-0of2)" in stdout + stderr, stdout + stderr
    for d in held:
        new = [p.name for p in d.glob("trajectories-*.parquet") if p.name not in before[d]]
        assert not [n for n in new if int(n.split("-")[1].split(".")[0]) < SPAN], "the unsharded run wrote no part"
        keys = pq.read_table(sorted(d.glob("trajectories-*.parquet")), columns=["sample_id", "attempt"]).to_pylist()
        assert len(keys) == len({(k["sample_id"], k["attempt"]) for k in keys}), "no sample was run twice"
