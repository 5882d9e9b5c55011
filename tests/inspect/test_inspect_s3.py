"""`--inspect-log s3://bucket/prefix`: logs in an S3-compatible store (a real server on 127.0.0.1)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

from inspect_fixtures import inspect_logs  # noqa: F401  (the session's logs)
from servers.s3_server import start_s3

BUCKET = "agenthop-inspect"
BIN = Path(sys.executable).parent


def _rows(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_inspect_logs_from_s3_equal_the_local_ones(inspect_logs, tmp_path):
    import botocore.session

    server = start_s3(tmp_path / "seaweedfs", "AKINSPECTTEST", "sk-" + secrets.token_hex(16))
    try:
        env = server.env(dict(os.environ, DO_NOT_TRACK="1"))
        client = botocore.session.get_session().create_client(
            "s3", endpoint_url=server.endpoint, aws_access_key_id=server.access_key,
            aws_secret_access_key=server.secret_key, region_name=server.region)
        client.create_bucket(Bucket=BUCKET)
        for p in inspect_logs.eval_logs:
            client.put_object(Bucket=BUCKET, Key=f"logs/{p.name}", Body=p.read_bytes())
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
    finally:
        server.stop()
