"""More places that read s3://: ``describe-benchmark s3://…`` and SciExplore ``--responses`` /
``--judgments`` objects for ``agenthop-ingest``, against a real S3-compatible server (SeaweedFS on
127.0.0.1, the session's): the same output and rows as the local files, and the secret in no written byte."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import cli, dbt_env, raw_content
from servers.s3_server import S3Server, client

BUCKET = "agenthop-inputs"


@pytest.fixture(scope="module")
def s3(s3_server: S3Server) -> Iterator[S3Server]:
    client(s3_server).create_bucket(Bucket=BUCKET)
    yield s3_server


_client = client


def _upload(s3: S3Server, local: Path, key: str) -> None:
    client = _client(s3)
    if local.is_file():
        client.put_object(Bucket=BUCKET, Key=key, Body=local.read_bytes())
        return
    for p in sorted(local.rglob("*")):
        if p.is_file():
            client.put_object(Bucket=BUCKET, Key=f"{key}/{p.relative_to(local).as_posix()}", Body=p.read_bytes())


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([cli(args[0]), *args[1:]], env=env, cwd=cwd, capture_output=True, text=True, timeout=600)


def test_describe_benchmark_from_s3_equals_local(s3: S3Server, tmp_path: Path) -> None:
    env = s3.env(dbt_env(tmp_path / "unused.duckdb"))
    bench = tmp_path / "benchmark"
    for out in (str(bench), f"s3://{BUCKET}/releases/eight"):  # written locally, and published
        res = _run(["agenthop-harness", "make-benchmark", "--out", out, "--items", "8", "--seed", "3"], env, tmp_path)
        assert res.returncode == 0, res.stderr
    local = _run(["agenthop-harness", "describe-benchmark", "--json", str(bench)], env, tmp_path)
    remote = _run(["agenthop-harness", "describe-benchmark", "--json", f"s3://{BUCKET}/releases/eight"], env, tmp_path)
    assert local.returncode == 0 and remote.returncode == 0, remote.stderr
    shown, expected = json.loads(remote.stdout), json.loads(local.stdout)
    assert shown.pop("root") == f"s3://{BUCKET}/releases/eight" and expected.pop("root") == str(bench)
    assert shown == expected
    missing = _run(["agenthop-harness", "describe-benchmark", f"s3://{BUCKET}/releases/none"], env, tmp_path)
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert f"s3://{BUCKET}/releases/none" in missing.stderr, missing.stderr
    for r in (local, remote, missing):
        assert s3.secret_key not in r.stdout + r.stderr


def test_sciexplore_responses_and_judgments_from_s3(s3: S3Server, tmp_path: Path) -> None:
    env = s3.env(dbt_env(tmp_path / "unused.duckdb"))
    bench, resp, judg = tmp_path / "sx", tmp_path / "responses.jsonl", tmp_path / "judgments.jsonl"
    res = _run(["agenthop-harness", "make-benchmark", "--benchmark", "sciexplore", "--out", str(bench), "--seed", "0",
                "--responses", str(resp), "--judgments", str(judg)], env, tmp_path)
    assert res.returncode == 0, res.stderr
    _upload(s3, resp, "sx/responses.jsonl")
    _upload(s3, judg, "sx/judgments.jsonl")
    local_db, remote_db = tmp_path / "local.duckdb", tmp_path / "remote.duckdb"
    res = _run(["agenthop-ingest", "--db", str(local_db), "--benchmark", str(bench), "--responses", str(resp),
                "--judgments", str(judg), "--quiet"], env, tmp_path)
    assert res.returncode == 0, res.stderr
    res = _run(["agenthop-ingest", "--db", str(remote_db), "--benchmark", str(bench),
                "--responses", f"s3://{BUCKET}/sx/responses.jsonl",
                "--judgments", f"s3://{BUCKET}/sx/judgments.jsonl", "--quiet"], env, tmp_path)
    assert res.returncode == 0, res.stderr
    local, remote = raw_content(local_db), raw_content(remote_db)
    assert sum(len(v) for v in remote.values()) > 0
    assert remote == local
    res = _run(["agenthop-ingest", "--db", str(tmp_path / "x.duckdb"), "--benchmark", str(bench),
                "--responses", f"s3://{BUCKET}/sx/nothing.jsonl"], env, tmp_path)
    assert res.returncode == 2 and f"s3://{BUCKET}/sx/nothing.jsonl" in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "x.duckdb").exists()
    secret = s3.secret_key.encode()
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert secret not in p.read_bytes(), p
