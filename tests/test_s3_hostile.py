"""Hostile object stores and URLs (a fake S3 endpoint on 127.0.0.1 that lists keys a real store may
refuse to create, and trickles bytes): every command that reads ``s3://`` refuses a key that would be
written outside its download folder, naming it, and writes nothing; an endpoint that trickles bytes
fails the command once reads fall below the throughput bound; a temporary folder a killed process
left is removed by the next run; a malformed URL is one line that shows no credential."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agenthop.harness.storage import shown_url
from conftest import cli, dbt_env
from servers.fake_s3 import FakeS3, FakeS3Server

BUCKET = "hostile"
PANEL = ("defaults: {backend: sim, conditions: [full], replicates: 1}\n"
         "models:\n  - {name: verifier, sim: {archetype: verifier}}\n")


@pytest.fixture()
def fake() -> Iterator[FakeS3Server]:
    server = FakeS3Server(FakeS3(BUCKET))
    try:
        yield server
    finally:
        server.stop()


def _run(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([cli(args[0]), *args[1:]], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The files of a small synthetic release (8 items)."""
    root = tmp_path_factory.mktemp("hostile-release") / "bench"
    res = _run(["agenthop-harness", "make-benchmark", "--out", str(root), "--items", "8", "--seed", "2"],
               dict(os.environ), root.parent)
    assert res.returncode == 0, res.stderr
    return _tree(root)


def _escaping(prefix: str, depth: int, tmp_path: Path) -> dict[str, bytes]:
    """Two keys below ``prefix`` that a download would write outside its folder: ``depth`` ``..``
    parts up from the folder the prefix is copied to (into ``tmp_path``), and an absolute path."""
    return {f"{prefix}/{'../' * depth}PWNED.txt": b"pwned by dot-dot",
            f"{prefix}/{tmp_path}/PWNED-ABS.txt": b"pwned by a leading slash"}


def _refused(res: subprocess.CompletedProcess[str], tmp_path: Path) -> None:
    assert res.returncode != 0, res.stdout + res.stderr
    assert "Traceback" not in res.stderr, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "refusing object key" in lines[0] and "PWNED" in lines[0], res.stderr
    assert "nothing was downloaded" in lines[0]
    assert "127.0.0.1" not in res.stderr and "sk-fake-secret" not in res.stderr
    assert not (tmp_path / "PWNED.txt").exists() and not (tmp_path / "PWNED-ABS.txt").exists()
    assert not list((tmp_path / "t").iterdir()), "the temporary download folder is removed"


@pytest.mark.parametrize("option", ["--runs", "--reference-json", "--inspect-log", "--benchmark"])
def test_ingest_refuses_keys_that_leave_the_download_folder(option: str, fake: FakeS3Server, tmp_path: Path,
                                                            release: dict[str, bytes]) -> None:
    (tmp_path / "t").mkdir()
    env = dict(fake.env(dbt_env(tmp_path / "w.duckdb")), TMPDIR=str(tmp_path / "t"))
    objects = {"in/ok/file.txt": b"harmless"}
    if option == "--benchmark":  # a release with its completion marker (empty: no manifest to check)
        objects = {**{f"in/{rel}": data for rel, data in release.items()}, "in/_RELEASE_COMPLETE": b""}
    # TMPDIR/agenthop-download-…/in/x -> up four is tmp_path
    fake.store.objects = {**objects, **_escaping("in/x", 4, tmp_path)}
    res = _run(["agenthop-ingest", option, f"s3://{BUCKET}/in"], env, tmp_path)
    _refused(res, tmp_path)
    assert not (tmp_path / "w.duckdb").exists()


def test_describe_benchmark_and_run_data_refuse_such_keys(fake: FakeS3Server, tmp_path: Path,
                                                          release: dict[str, bytes]) -> None:
    (tmp_path / "t").mkdir()
    env = dict(fake.env(dbt_env(tmp_path / "w.duckdb")), TMPDIR=str(tmp_path / "t"))
    fake.store.objects = {**{f"rel/{rel}": data for rel, data in release.items()}, "rel/_RELEASE_COMPLETE": b"",
                          **_escaping("rel/qa", 4, tmp_path)}
    res = _run(["agenthop-harness", "describe-benchmark", f"s3://{BUCKET}/rel"], env, tmp_path)
    _refused(res, tmp_path)
    (tmp_path / "panel.yaml").write_text(PANEL)
    res = _run(["agenthop-harness", "run", "--panel", str(tmp_path / "panel.yaml"), "--no-progress",
                "--data", f"s3://{BUCKET}/rel", "--out", str(tmp_path / "runs")], env, tmp_path)
    _refused(res, tmp_path)
    assert not (tmp_path / "runs").exists()


def test_run_out_mirror_refuses_such_keys(fake: FakeS3Server, tmp_path: Path, release: dict[str, bytes]) -> None:
    (tmp_path / "t").mkdir()
    env = dict(fake.env(dbt_env(tmp_path / "w.duckdb")), TMPDIR=str(tmp_path / "t"))
    bench = tmp_path / "bench"
    for rel, data in release.items():
        (bench / rel).parent.mkdir(parents=True, exist_ok=True)
        (bench / rel).write_bytes(data)
    (tmp_path / "panel.yaml").write_text(PANEL)
    args = ["agenthop-harness", "run", "--panel", str(tmp_path / "panel.yaml"), "--no-progress", "--data", str(bench)]
    local = _run([*args, "--out", str(tmp_path / "local")], env, tmp_path)
    assert local.returncode == 0, local.stderr
    (run_id,) = [p.name for p in (tmp_path / "local").iterdir()]
    # the store's copy of the run: TMPDIR/agenthop-store-…/<run_id> -> up three is tmp_path
    fake.store.objects = {f"store/{run_id}/../../../PWNED.txt": b"pwned by dot-dot"}
    res = _run([*args, "--out", f"s3://{BUCKET}/store"], env, tmp_path)
    _refused(res, tmp_path)


@pytest.mark.parametrize("url", [f"s3://AKIDKEY:sk-hush-1234@{BUCKET}/runs", f"s3:AKIDKEY:sk-hush-1234@{BUCKET}",
                                 "s3://AKIDKEY@bucket-x/runs"])
def test_a_url_with_credentials_is_refused_without_showing_them(url: str, tmp_path: Path) -> None:
    res = _run(["agenthop-ingest", "--db", str(tmp_path / "w.duckdb"), "--runs", url], dict(os.environ), tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert "malformed s3 URL" in res.stderr and "***@" in res.stderr, res.stderr
    assert "sk-hush-1234" not in res.stderr + res.stdout and "AKIDKEY" not in res.stderr + res.stdout
    res = _run(["agenthop-harness", "run", "--panel", str(tmp_path / "p.yaml"), "--data", url], dict(os.environ),
               tmp_path)
    assert res.returncode == 2 and "sk-hush-1234" not in res.stderr and "AKIDKEY" not in res.stderr, res.stderr


@pytest.mark.parametrize("url", [f"s3://{BUCKET}/..", f"s3://{BUCKET}/runs/../x", f"s3://{BUCKET}/./runs",
                                 f"s3://{BUCKET}//runs"])
def test_a_prefix_with_dot_parts_is_one_line(url: str, fake: FakeS3Server, tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    env = dict(fake.env(dbt_env(tmp_path / "w.duckdb")), TMPDIR=str(tmp_path / "t"))
    res = _run(["agenthop-ingest", "--runs", url], env, tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    error = [line for line in res.stderr.splitlines() if line.startswith("Error")]
    assert len(error) == 1 and "malformed s3 URL" in error[0] and "'..' parts" in error[0], res.stderr
    assert not fake.store.fetched and not list((tmp_path / "t").iterdir())


def _trickling(fake: FakeS3Server, tmp_path: Path) -> dict[str, str]:
    """The store holds one run-like object whose bytes come one per 30 s; the environment's TMPDIR
    is ``tmp_path/t``."""
    (tmp_path / "t").mkdir(exist_ok=True)
    fake.store.objects = {"slow/r1/runs-00000.parquet": b"x" * 64}
    fake.store.trickle = {"slow/r1/runs-00000.parquet"}
    fake.store.trickle_s = 30.0
    return dict(fake.env(dbt_env(tmp_path / "w.duckdb")), TMPDIR=str(tmp_path / "t"))


def test_a_trickling_endpoint_fails_at_the_throughput_bound(fake: FakeS3Server, tmp_path: Path) -> None:
    env = dict(_trickling(fake, tmp_path), AGENTHOP_S3_GRACE_S="1", AGENTHOP_S3_MIN_BYTES_PER_S="1000")
    res = _run(["agenthop-ingest", "--runs", f"s3://{BUCKET}/slow"], env, tmp_path, timeout=60)
    assert res.returncode != 0 and "Traceback" not in res.stderr, res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith(f"error: s3://{BUCKET}/slow/r1/runs-00000.parquet: cannot download (too slow: "), line
    assert "AGENTHOP_S3_GRACE_S" in line and "AGENTHOP_S3_MIN_BYTES_PER_S" in line, line
    assert "127.0.0.1" not in line
    assert not list((tmp_path / "t").iterdir()), "the temporary download folder is removed"
    assert not (tmp_path / "w.duckdb").exists()


def test_a_bad_bound_setting_is_one_line(fake: FakeS3Server, tmp_path: Path) -> None:
    env = dict(_trickling(fake, tmp_path), AGENTHOP_S3_MIN_BYTES_PER_S="fast")
    res = _run(["agenthop-ingest", "--runs", f"s3://{BUCKET}/slow"], env, tmp_path)
    assert res.returncode != 0 and res.stderr.strip() == \
        "error: AGENTHOP_S3_MIN_BYTES_PER_S='fast': expected a positive number", res.stderr


def test_a_killed_download_leaves_a_folder_the_next_run_removes(fake: FakeS3Server, tmp_path: Path) -> None:
    env = _trickling(fake, tmp_path)  # the default bound: the download waits
    proc = subprocess.Popen([cli("agenthop-ingest"), "--runs", f"s3://{BUCKET}/slow"], env=env, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not fake.store.fetched and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert fake.store.fetched, "the download started"
        left = list((tmp_path / "t").iterdir())
        assert len(left) == 1 and left[0].name.startswith(f"agenthop-download-{proc.pid}@"), left
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert left[0].exists(), "SIGKILL runs no cleanup"
    fake.store.trickle = set()
    fake.store.objects = {"ok/r1/notes.txt": b"hello"}
    res = _run(["agenthop-ingest", "--runs", f"s3://{BUCKET}/ok"], env, tmp_path)
    assert "Traceback" not in res.stderr, res.stderr
    assert not left[0].exists(), "the next run removes the dead process's folder"
    assert not list((tmp_path / "t").iterdir())


def test_shown_url_hides_the_user_part() -> None:
    assert shown_url("s3://KEY:secret@bucket/runs") == "s3://***@bucket/runs"
    assert shown_url("s3:KEY:secret@bucket") == "s3:***@bucket"
    assert shown_url("https://user:pw@host:8333/x") == "https://***@host:8333/x"
    assert shown_url("s3://bucket/a@b") == "s3://bucket/a@b", "an @ in a key is not a credential"


def test_agenthop_db_with_credentials_is_not_shown(tmp_path: Path) -> None:
    env = dict(os.environ, AGENTHOP_DB="s3://AKIDKEY:sk-hush-1234@bucket/w.duckdb")
    res = _run(["agenthop-ingest", "--runs", str(tmp_path)], env, tmp_path)
    assert res.returncode == 2 and "AGENTHOP_DB=s3://***@bucket/w.duckdb: the warehouse is a local" in res.stderr, \
        res.stderr
    assert "sk-hush-1234" not in res.stderr + res.stdout and "AKIDKEY" not in res.stderr + res.stdout
    res = _run(["agenthop-report", "leaderboard", "--db", "https://user:pw-hush@host/w.duckdb"], dict(os.environ), tmp_path)
    assert res.returncode == 2 and "***@host" in res.stderr and "pw-hush" not in res.stderr + res.stdout, res.stderr
