"""Inspect and an S3-compatible store (the session's real SeaweedFS server on 127.0.0.1, tests/conftest.py;
this module keeps to a bucket of its own): ``--inspect-log s3://bucket/prefix``, and the AgentHop task
reading ``-T data=s3://bucket/release`` as every other reader of a release does (a complete release
only: the completion marker, the manifest)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

from inspect_fixtures import inspect_logs  # noqa: F401  (the session's logs)
from inspect_fixtures import query_rows as _rows
from servers.s3_server import S3Server, client

from agenthop.harness import storage
from agenthop.harness.release_store import MARKER

BUCKET = "agenthop-inspect"
BIN = Path(sys.executable).parent
ITEMS = 4


@pytest.fixture(scope="module")
def s3(s3_server: S3Server) -> Iterator[S3Server]:
    client(s3_server).create_bucket(Bucket=BUCKET)
    yield s3_server


def _env(s3: S3Server) -> dict[str, str]:
    return s3.env(dict(os.environ, DO_NOT_TRACK="1"))


def test_inspect_logs_from_s3_equal_the_local_ones(inspect_logs, s3: S3Server, tmp_path):  # noqa: F811
    env = _env(s3)
    c = client(s3)
    for p in inspect_logs.eval_logs:
        c.put_object(Bucket=BUCKET, Key=f"logs/{p.name}", Body=p.read_bytes())
    remote, local = tmp_path / "remote.duckdb", tmp_path / "local.duckdb"
    for db, where in ((remote, f"s3://{BUCKET}/logs"), (local, str(inspect_logs.eval_logs[0].parent))):
        proc = subprocess.run([str(BIN / "agenthop-ingest"), "--db", str(db), "--inspect-log", where],
                              capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
    for table in ("trajectories", "turns", "tool_calls", "messages", "scores", "inspect_items"):
        sql = f"SELECT * FROM raw.{table} ORDER BY ALL"
        assert _rows(remote, sql) == _rows(local, sql), table
    sources = _rows(remote, "SELECT DISTINCT _source FROM raw.runs")
    assert all(s.startswith(f"s3://{BUCKET}/logs") for (s,) in sources), sources
    again = subprocess.run([str(BIN / "agenthop-ingest"), "--db", str(remote), "--inspect-log",
                            f"s3://{BUCKET}/logs"], capture_output=True, text=True, env=env)
    assert again.returncode == 0 and "4 unchanged" in again.stdout, again.stdout + again.stderr


@pytest.fixture(scope="module")
def published(s3: S3Server, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One AgentHop release, written locally and published with ``make-benchmark --out s3://``."""
    local = tmp_path_factory.mktemp("inspect-s3") / "release"
    url = f"s3://{BUCKET}/release"
    for out in (str(local), url):
        proc = subprocess.run([str(BIN / "agenthop-harness"), "make-benchmark", "--out", out, "--items", str(ITEMS),
                               "--seed", "0"], capture_output=True, text=True, env=_env(s3))
        assert proc.returncode == 0, proc.stderr
    return local, url


@pytest.fixture()
def in_env(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """The server's credentials and endpoint in this process's environment (the task runs in-process)."""
    for name, value in s3.env({}).items():
        monkeypatch.setenv(name, value)
    return s3


def _samples(task) -> list[tuple]:  # type: ignore[no-untyped-def]
    return [(s.id, s.input, s.target, s.choices, s.metadata) for s in task.dataset]


def test_the_task_reads_a_published_release_like_the_local_one(published, in_env, tmp_path) -> None:
    from agenthop_sim import SimScript
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from agenthop.harness.benchmarks.agenthop.inspect_task import agenthop
    from agenthop.harness.benchmarks.agenthop.loader import load_release

    local, url = published
    remote_task, local_task = agenthop(data=url, limit=3), agenthop(data=str(local), limit=3)
    assert len(_samples(remote_task)) == 3
    assert _samples(remote_task) == _samples(local_task)
    assert remote_task.metadata == local_task.metadata
    # the harness's simulated agent as the model (its outputs carry usage: Inspect needs no tokenizer)
    model = get_model("mockllm/verifier", custom_outputs=SimScript(load_release(local), "verifier",
                                                                     {"archetype": "verifier"}))
    logs = inspect_eval(remote_task, model=model, log_dir=str(tmp_path / "logs"), display="none", max_samples=1,
                        limit=1)
    assert logs[0].status == "success", logs[0].error
    assert logs[0].eval.task_args.get("data") == url
    assert logs[0].samples and logs[0].samples[0].scores


def test_the_task_refuses_an_incomplete_s3_release(published, in_env) -> None:
    from agenthop.harness.benchmarks.agenthop.inspect_task import agenthop

    local, _ = published
    c = client(in_env)
    for p in sorted(local.rglob("*")):  # the files of a release whose upload has not finished
        if p.is_file():
            c.put_object(Bucket=BUCKET, Key=f"partial/{p.relative_to(local).as_posix()}", Body=p.read_bytes())
    with pytest.raises(storage.StorageError, match=f"s3://{BUCKET}/partial: not a complete release: .*{MARKER}"):
        agenthop(data=f"s3://{BUCKET}/partial")
    with pytest.raises(storage.StorageError, match="nothing is stored under it"):
        agenthop(data=f"s3://{BUCKET}/no-such-release")


def test_an_invalid_s3_release_is_named_by_its_url(published, in_env) -> None:
    """A release with its marker whose content is invalid: the error names the URL, not a temporary copy."""
    from agenthop.harness.benchmarks.agenthop.inspect_task import agenthop
    from agenthop.harness.errors import AgentHopError

    local, _ = published
    c = client(in_env)
    c.put_object(Bucket=BUCKET, Key="broken/qa/full.jsonl", Body=b"{not json\n")
    c.put_object(Bucket=BUCKET, Key=f"broken/{MARKER}", Body=b"")  # complete by the uploader's word
    with pytest.raises(AgentHopError) as info:
        agenthop(data=f"s3://{BUCKET}/broken")
    assert f"s3://{BUCKET}/broken" in str(info.value) and "agenthop-download-" not in str(info.value)


def test_inspect_eval_cli_passes_the_s3_release_to_the_same_reader(published, s3: S3Server, tmp_path) -> None:
    """``inspect eval agenthop -T data=s3://…`` as a user runs it: the task argument reaches the release
    reader (here refusing a prefix without its completion marker, before any model call), in one
    message that names the URL and no credential."""
    local, _ = published
    c = client(s3)
    c.put_object(Bucket=BUCKET, Key="cli-partial/qa/full.jsonl", Body=(local / "qa" / "full.jsonl").read_bytes())
    url = f"s3://{BUCKET}/cli-partial"
    for name in ("agenthop/agenthop", "agenthop"):  # an editable install registers it without the prefix
        proc = subprocess.run([str(BIN / "inspect"), "eval", name, "-T", f"data={url}", "--model", "mockllm/model",
                               "--log-dir", str(tmp_path / "logs")],
                              capture_output=True, text=True, env=_env(s3), cwd=tmp_path, timeout=600)
        if "No inspect tasks were found" not in proc.stdout + proc.stderr:
            break
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-2000:]
    assert f"{url}: not a complete release: its completion marker {MARKER} is missing" in " ".join(out.split()), out[-3000:]
    assert s3.secret_key not in out
