"""``--eee`` and ``--atif`` from an S3-compatible store (the session's SeaweedFS server on 127.0.0.1) load the
same rows as the local files, each run named by its URL (docs/interchange.md#importing)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import cli
from servers.s3_server import S3Server, client
from test_interchange import FIXTURES, _rows

BUCKET = "agenthop-interchange"


@pytest.fixture(scope="module")
def s3(s3_server: S3Server) -> Iterator[S3Server]:
    client(s3_server).create_bucket(Bucket=BUCKET)
    yield s3_server


def test_interchange_files_from_s3_equal_the_local_ones(s3: S3Server, tmp_path: Path) -> None:
    c = client(s3)
    for fmt in ("eee", "atif"):
        root = FIXTURES / f"{fmt}_published"
        for f in root.rglob("*.json*"):
            c.put_object(Bucket=BUCKET, Key=f"{fmt}/{f.relative_to(root)}", Body=f.read_bytes())
    env = s3.env(dict(os.environ, DO_NOT_TRACK="1"))
    remote, local = tmp_path / "remote.duckdb", tmp_path / "local.duckdb"
    for db, eee, atif in ((remote, f"s3://{BUCKET}/eee", f"s3://{BUCKET}/atif"),
                          (local, FIXTURES / "eee_published", FIXTURES / "atif_published")):
        proc = subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--eee", str(eee), "--atif", str(atif)],
                              capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stderr
    for table in ("trajectories", "turns", "tool_calls", "scores", "inspect_items", "metric_defs"):
        sql = f"SELECT * FROM raw.{table} ORDER BY ALL"
        assert _rows(remote, sql) == _rows(local, sql), table
    sources = sorted(s for (s,) in _rows(remote, "SELECT _source FROM raw.runs"))
    assert sources[0].startswith(f"s3://{BUCKET}/atif/") and sources[1].startswith(f"s3://{BUCKET}/eee/"), sources
