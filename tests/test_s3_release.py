"""Releases published to object storage with ``make-benchmark --out s3://…`` (both benchmarks),
against a real S3-compatible server (SeaweedFS on 127.0.0.1, the session's): the completion marker
is written last, a reader refuses a release without it (or whose files differ from it), a
re-publish never shows a mix of two releases as complete, and the secret is in no written byte."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from agenthop.harness import release_store, storage
from conftest import cli, dbt_env, raw_content
from servers.s3_server import S3Server, client, objects

BUCKET = "agenthop-releases"
MARKER = release_store.MARKER


@pytest.fixture(scope="module")
def s3(s3_server: S3Server) -> Iterator[S3Server]:
    client(s3_server).create_bucket(Bucket=BUCKET)
    yield s3_server


@pytest.fixture()
def in_env(s3: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """The server's credentials and endpoint in this process's environment (in-process calls)."""
    for name, value in s3.env({}).items():
        monkeypatch.setenv(name, value)
    return s3


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([cli(args[0]), *args[1:]], env=env, cwd=cwd, capture_output=True, text=True, timeout=600)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_sciexplore_release_to_s3_and_ingest_from_it(s3: S3Server, tmp_path: Path) -> None:
    (tmp_path / "tmp").mkdir()
    env = dict(s3.env(dbt_env(tmp_path / "unused.duckdb")), TMPDIR=str(tmp_path / "tmp"))
    url, local = f"s3://{BUCKET}/sx/seed1", tmp_path / "sx"
    outputs = []
    for out in (str(local), url):
        res = _run(["agenthop-harness", "make-benchmark", "--benchmark", "sciexplore", "--out", out, "--seed", "1"],
                   env, tmp_path)
        assert res.returncode == 0, res.stderr
        outputs.append(res.stdout + res.stderr)
    assert f"wrote synthetic SciExplore release {url}: 103 tasks" in outputs[1], outputs[1]
    stored = {k[len("sx/seed1/"):]: v for k, v in objects(s3, BUCKET, "sx/seed1/").items()}
    assert json.loads(stored.pop(MARKER))["n_files"] == len(_tree(local))
    assert stored == _tree(local)
    dbs = {}
    for name, bench in (("local", str(local)), ("remote", url)):
        dbs[name] = tmp_path / f"{name}.duckdb"
        res = _run(["agenthop-ingest", "--db", str(dbs[name]), "--benchmark", bench, "--quiet"], env, tmp_path)
        assert res.returncode == 0, res.stderr
        outputs.append(res.stdout + res.stderr)
    remote = raw_content(dbs["remote"])
    assert remote == raw_content(dbs["local"]) and sum(map(len, remote.values())) >= 103
    con = duckdb.connect(str(dbs["remote"]), read_only=True)
    sources = {s for (s,) in con.sql("SELECT source FROM raw.ingest_log").fetchall()}
    con.close()
    assert sources == {url}, sources
    secret = s3.secret_key.encode()
    for key, body in objects(s3, BUCKET).items():
        assert secret not in body, key
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert secret not in p.read_bytes(), p
    for text in outputs:
        assert s3.secret_key not in text and s3.endpoint not in text
    assert list((tmp_path / "tmp").iterdir()) == [], "temporary copies are removed"


def _publish(env: dict[str, str], cwd: Path, url: str, *extra: str) -> None:
    res = _run(["agenthop-harness", "make-benchmark", "--out", url, "--items", "6", *extra], env, cwd)
    assert res.returncode == 0, res.stderr


def _readers(url: str, cwd: Path) -> list[list[str]]:
    return [["agenthop-harness", "describe-benchmark", url],
            ["agenthop-ingest", "--db", str(cwd / "w.duckdb"), "--benchmark", url],
            ["agenthop-harness", "run", "--model", "verifier", "--data", url, "--out", str(cwd / "runs"),
             "--no-progress"]]


def test_readers_refuse_a_release_without_its_marker(s3: S3Server, tmp_path: Path) -> None:
    env = s3.env(dbt_env(tmp_path / "unused.duckdb"))
    url = f"s3://{BUCKET}/nomarker"
    _publish(env, tmp_path, url)
    client(s3).delete_object(Bucket=BUCKET, Key=f"nomarker/{MARKER}")  # as if the upload stopped before it
    for args in _readers(url, tmp_path):
        res = _run(args, env, tmp_path)
        assert res.returncode == 2, (args, res.stderr)
        assert f"error: {url}: not a complete release: its completion marker {MARKER} is missing" in res.stderr, \
            res.stderr
        assert "Traceback" not in res.stderr
    assert not (tmp_path / "w.duckdb").exists() and not (tmp_path / "runs").exists()
    # an empty marker uploaded last (a release copied with other tools) makes it readable
    client(s3).put_object(Bucket=BUCKET, Key=f"nomarker/{MARKER}", Body=b"")
    res = _run(_readers(url, tmp_path)[0], env, tmp_path)
    assert res.returncode == 0 and "6: " in res.stdout, res.stderr


def test_readers_refuse_files_that_differ_from_the_marker(s3: S3Server, tmp_path: Path) -> None:
    env = s3.env(dbt_env(tmp_path / "unused.duckdb"))
    url = f"s3://{BUCKET}/changed"
    _publish(env, tmp_path, url)
    c = client(s3)
    body = c.get_object(Bucket=BUCKET, Key="changed/qa/full.jsonl")["Body"].read()
    c.put_object(Bucket=BUCKET, Key="changed/qa/full.jsonl", Body=body[:-1] + b" ")  # same size, other bytes
    res = _run(_readers(url, tmp_path)[1], env, tmp_path)
    assert res.returncode == 2 and "qa/full.jsonl changed while it was downloaded" in res.stderr, res.stderr
    c.put_object(Bucket=BUCKET, Key="changed/qa/full.jsonl", Body=body + b"\n")  # another size
    res = _run(_readers(url, tmp_path)[0], env, tmp_path)
    assert res.returncode == 2 and f"qa/full.jsonl has {len(body) + 1} bytes, {MARKER} says {len(body)}" in res.stderr
    c.delete_object(Bucket=BUCKET, Key="changed/qa/full.jsonl")
    res = _run(_readers(url, tmp_path)[2], env, tmp_path)
    assert res.returncode == 2 and f"qa/full.jsonl is listed in {MARKER} but missing" in res.stderr, res.stderr
    assert not (tmp_path / "w.duckdb").exists() and not (tmp_path / "runs").exists()


def test_an_interrupted_publish_leaves_no_release_marked_complete(in_env: S3Server, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Re-publishing over a release: the old marker goes first, so while (or if) the upload stops
    half-way, readers see no complete release, neither the old one nor a mix of the two."""
    from click.testing import CliRunner

    from agenthop.harness.cli import main as harness_main

    url = f"s3://{BUCKET}/interrupted"
    res = CliRunner().invoke(harness_main, ["make-benchmark", "--out", url, "--items", "6", "--seed", "1"])
    assert res.exit_code == 0, res.output
    with release_store.release_copy(url) as copy:
        assert (copy / "qa" / "full.jsonl").is_file() and not (copy / MARKER).exists()
    real_upload, calls = storage.upload_file, []

    def failing_upload(local: Path, target: str) -> None:
        calls.append(target)
        if len(calls) == 3:
            raise storage.StorageError(f"{target}: cannot upload (connection reset)")
        real_upload(local, target)

    monkeypatch.setattr(storage, "upload_file", failing_upload)
    res = CliRunner().invoke(harness_main, ["make-benchmark", "--out", url, "--items", "6", "--seed", "2"])
    assert res.exit_code == 2 and "cannot upload (connection reset)" in res.output, res.output
    assert len(calls) == 3
    assert MARKER not in storage.list_files(url)
    with pytest.raises(storage.StorageError, match=f"its completion marker {MARKER} is missing"):
        with release_store.release_copy(url):
            pass
    monkeypatch.setattr(storage, "upload_file", real_upload)
    res = CliRunner().invoke(harness_main, ["make-benchmark", "--out", url, "--items", "6", "--seed", "2"])
    assert res.exit_code == 0, res.output
    with release_store.release_copy(url) as copy:
        assert release_store.manifest(copy) == json.loads(storage.read_bytes(f"{url}/{MARKER}"))["files"]


def test_republish_removes_files_the_new_release_lacks(in_env: S3Server, tmp_path: Path) -> None:
    url = f"s3://{BUCKET}/stale"
    old, new = tmp_path / "old", tmp_path / "new"
    for root, files in ((old, {"README.md": b"r1", "a/one.txt": b"1", "b/two.txt": b"2"}),
                        (new, {"README.md": b"r2", "a/one.txt": b"11"})):
        for rel, data in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_bytes(data)
    storage.write_bytes(f"{url}/notes.txt", b"kept")  # in no release: left alone (as --force locally)
    assert release_store.publish(old, url) == (3, 4)
    assert release_store.publish(new, url) == (2, 4)
    assert sorted(storage.list_files(url)) == sorted([MARKER, "README.md", "a/one.txt", "notes.txt"])
    assert storage.read_bytes(f"{url}/a/one.txt") == b"11" and storage.read_bytes(f"{url}/notes.txt") == b"kept"


def test_make_benchmark_to_a_prefix_holding_something_else(s3: S3Server, tmp_path: Path) -> None:
    env = s3.env(dbt_env(tmp_path / "unused.duckdb"))
    client(s3).put_object(Bucket=BUCKET, Key="occupied/notes.txt", Body=b"not a release")
    url = f"s3://{BUCKET}/occupied"
    res = _run(["agenthop-harness", "make-benchmark", "--out", url, "--items", "6"], env, tmp_path)
    assert res.returncode == 2, res.stderr
    assert f"--out {url}: holds 1 object(s) that are not a synthetic release" in res.stderr, res.stderr
    assert sorted(objects(s3, BUCKET, "occupied/")) == ["occupied/notes.txt"], "nothing is uploaded"
    _publish(env, tmp_path, url, "--force")
    assert f"occupied/{MARKER}" in objects(s3, BUCKET, "occupied/")
    _publish(env, tmp_path, url)  # a synthetic release there now: replaced without --force
    res = _run(["agenthop-harness", "make-benchmark", "--benchmark", "sciexplore", "--out", url], env, tmp_path)
    assert res.returncode == 2 and "not a synthetic SciExplore release" in res.stderr, res.stderr


def test_a_broken_published_release_is_named_by_its_url(s3: S3Server, tmp_path: Path) -> None:
    env = s3.env(dbt_env(tmp_path / "unused.duckdb"))
    url = f"s3://{BUCKET}/broken"
    _publish(env, tmp_path, url)
    c = client(s3)
    c.put_object(Bucket=BUCKET, Key="broken/qa/full.jsonl", Body=b"{not json\n")
    c.put_object(Bucket=BUCKET, Key=f"broken/{MARKER}", Body=b"")  # complete by the uploader's word
    for args in _readers(url, tmp_path):
        res = _run(args, env, tmp_path)
        assert res.returncode == 2, (args, res.stderr)
        assert url in res.stderr and "agenthop-download-" not in res.stderr, (args, res.stderr)
        assert "Traceback" not in res.stderr
