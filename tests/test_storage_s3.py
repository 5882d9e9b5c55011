"""s3:// run stores, releases and reference logs against a real S3-compatible server (SeaweedFS on
127.0.0.1, the session's): a release published with make-benchmark --out s3://, a run from and to
s3:// equals the same run written locally, ingest reads it back from s3://, and the secret key is
found in no byte written anywhere (objects, warehouse, temporary files, output)."""

from __future__ import annotations

import hashlib
import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from conftest import cli, dbt_env, run_dbt_build
from servers.s3_server import S3Server, client, objects

REPO = Path(__file__).resolve().parents[1]
BUCKET = "agenthop-test"
TIMING = {"wall_time_s", "t_offset_s", "started_at", "finished_at", "wait_s"}


@pytest.fixture(scope="module")
def s3(s3_server: S3Server) -> Iterator[S3Server]:
    client(s3_server).create_bucket(Bucket=BUCKET)
    yield s3_server


#: every command's captured output, for the secret scan at the end
OUTPUTS: list[str] = []


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    res = subprocess.run([cli(args[0]), *args[1:]], env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    OUTPUTS.append(res.stdout + res.stderr)
    return res


def _objects(s3: S3Server) -> dict[str, bytes]:
    return objects(s3, BUCKET)


def _upload_tree(s3: S3Server, local: Path, prefix: str) -> None:
    c = client(s3)
    for p in sorted(local.rglob("*")):
        if p.is_file():
            c.put_object(Bucket=BUCKET, Key=f"{prefix}/{p.relative_to(local).as_posix()}", Body=p.read_bytes())


def _rows(db: Path, table: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        cols = [c for (c,) in con.sql(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'raw' AND table_name = ? "
            "ORDER BY ordinal_position", params=[table]).fetchall() if c not in TIMING and not c.startswith("_")]
        return con.sql(f"SELECT {', '.join(cols)} FROM raw.{table} ORDER BY ALL").fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def stored(s3: S3Server, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A release published to s3:// by make-benchmark (and the same one written locally), two runs
    from it to s3:// and the same two runs written locally. Temporary files go below ``work/tmp``,
    so the secret scan sees them too."""
    work = tmp_path_factory.mktemp("s3runs")
    (work / "tmp").mkdir()
    env = dict(s3.env(dbt_env(work / "unused.duckdb")), TMPDIR=str(work / "tmp"))
    bench = work / "benchmark"
    made = [_run(["agenthop-harness", "make-benchmark", "--out", out, "--items", "12", "--seed", "5"], env, work)
            for out in (str(bench), f"s3://{BUCKET}/releases/small")]
    for res in made:
        assert res.returncode == 0, res.stderr
    panel = work / "panel.yaml"
    panel.write_text("defaults: {backend: sim, conditions: [full], replicates: 1}\n"
                     "models:\n  - {name: verifier, sim: {archetype: verifier}}\n"
                     "  - {name: greedy, sim: {archetype: greedy_reader}}\n")
    common = ["--panel", str(panel), "--no-progress", "--processes", "1"]
    remote = _run(["agenthop-harness", "run", *common, "--data", f"s3://{BUCKET}/releases/small",
                   "--out", f"s3://{BUCKET}/store/runs"], env, work)
    local = _run(["agenthop-harness", "run", *common, "--data", str(bench), "--out", str(work / "runs")], env, work)
    assert remote.returncode == 0, remote.stderr
    assert local.returncode == 0, local.stderr
    return {"work": work, "env": env, "bench": bench, "remote": remote, "local": local, "outputs": [*made]}


def test_published_release_is_the_local_one_and_its_marker(stored: dict, s3: S3Server) -> None:
    objects = {k[len("releases/small/"):]: v for k, v in _objects(s3).items() if k.startswith("releases/small/")}
    marker = json.loads(objects.pop("_RELEASE_COMPLETE"))
    local = {p.relative_to(stored["bench"]).as_posix(): p.read_bytes()
             for p in stored["bench"].rglob("*") if p.is_file()}
    assert objects == local, "the same bytes as make-benchmark writes locally"
    assert marker["files"] == {rel: {"size": len(b), "sha256": hashlib.sha256(b).hexdigest()}
                               for rel, b in local.items()}
    assert marker["n_files"] == len(local) and marker["bytes"] == sum(map(len, local.values()))
    out = stored["outputs"][1].stdout
    assert f"wrote synthetic release s3://{BUCKET}/releases/small: 12 items" in out, out
    assert "completion marker _RELEASE_COMPLETE last" in out and "agenthop-release-" not in out, out


def test_run_to_s3_writes_the_run_directories(stored: dict, s3: S3Server) -> None:
    objects = _objects(s3)
    runs = sorted({k.split("/")[2] for k in objects if k.startswith("store/runs/")})
    local = sorted(p.name for p in (stored["work"] / "runs").iterdir())
    assert runs == local and len(runs) == 2
    for rid in runs:
        names = {k.rsplit("/", 1)[1] for k in objects if k.startswith(f"store/runs/{rid}/")}
        assert {"_SUCCESS", "runs-00000.parquet"} <= names
        assert any(n.startswith("trajectories-") for n in names)
        assert not any(n.startswith(".") for n in names), "no lock or temporary file is uploaded"
    out = stored["remote"].stdout
    assert f"s3://{BUCKET}/store/runs/" in out and "agenthop-store-" not in out, out


def test_ingest_from_s3_equals_local(stored: dict, s3: S3Server) -> None:
    work, env = stored["work"], stored["env"]
    remote_db, local_db = work / "remote.duckdb", work / "local.duckdb"
    res = _run(["agenthop-ingest", "--db", str(remote_db), "--benchmark", f"s3://{BUCKET}/releases/small",
                "--runs", f"s3://{BUCKET}/store/runs"], env, work)
    assert res.returncode == 0, res.stderr
    res = _run(["agenthop-ingest", "--db", str(local_db), "--benchmark", str(stored["bench"]),
                "--runs", str(work / "runs")], env, work)
    assert res.returncode == 0, res.stderr
    for table in ("runs", "trajectories", "turns", "tool_calls", "items"):
        assert _rows(remote_db, table) == _rows(local_db, table), table
    con = duckdb.connect(str(remote_db), read_only=True)
    sources = {s for (s,) in con.sql("SELECT source FROM raw.ingest_log").fetchall()}
    con.close()
    assert f"s3://{BUCKET}/releases/small" in sources
    assert all(s.startswith(f"s3://{BUCKET}/") for s in sources), sources
    # unchanged on a second ingest: the copy's content hash is the store's
    res = _run(["agenthop-ingest", "--db", str(remote_db), "--runs", f"s3://{BUCKET}/store/runs"], env, work)
    assert res.returncode == 0 and "unchanged" in res.stdout, res.stdout + res.stderr


def test_rerun_to_s3_resumes(stored: dict, s3: S3Server) -> None:
    before = {k: hashlib.sha256(v).hexdigest() for k, v in _objects(s3).items() if k.startswith("store/")}
    panel = stored["work"] / "panel.yaml"
    res = _run(["agenthop-harness", "run", "--panel", str(panel), "--no-progress", "--processes", "1",
                "--data", f"s3://{BUCKET}/releases/small", "--out", f"s3://{BUCKET}/store/runs"],
               stored["env"], stored["work"])
    assert res.returncode == 0, res.stderr
    after = {k: hashlib.sha256(v).hexdigest() for k, v in _objects(s3).items() if k.startswith("store/")}
    assert {k for k in after if "-" in k.rsplit("/", 1)[1] and "runs-" not in k} == \
        {k for k in before if "-" in k.rsplit("/", 1)[1] and "runs-" not in k}, "no sample was run again"


def test_reference_json_from_s3(stored: dict, s3: S3Server) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    from reference_import import export_run

    work, env = stored["work"], stored["env"]
    exp = work / "experiments"
    bsha = hashlib.sha256((stored["bench"] / "qa" / "full.jsonl").read_bytes()).hexdigest()[:16]
    for d in sorted((work / "runs").iterdir()):
        export_run(d, exp, bsha)
    _upload_tree(s3, exp, "logs/experiments")
    db = work / "ref.duckdb"
    res = _run(["agenthop-ingest", "--db", str(db), "--benchmark", str(stored["bench"]),
                "--reference-json", f"s3://{BUCKET}/logs/experiments"], env, work)
    assert res.returncode == 0, res.stderr
    con = duckdb.connect(str(db), read_only=True)
    n, sources = con.sql("SELECT count(*), list(DISTINCT _source) FROM raw.runs").fetchall()[0]
    con.close()
    assert n == 2 and all(s.startswith(f"s3://{BUCKET}/logs/experiments/") for s in sources), sources


def test_bad_credentials_and_missing_prefix_are_one_line(stored: dict, s3: S3Server) -> None:
    work = stored["work"]
    env = dict(stored["env"], AWS_SECRET_ACCESS_KEY="wrong-" + secrets.token_hex(8))
    res = _run(["agenthop-ingest", "--db", str(work / "x.duckdb"), "--runs", f"s3://{BUCKET}/store/runs"], env, work)
    assert res.returncode == 2 and res.stderr.startswith(f"error: s3://{BUCKET}/store/runs: cannot list"), res.stderr
    assert env["AWS_SECRET_ACCESS_KEY"] not in res.stderr and s3.endpoint not in res.stderr
    assert "Traceback" not in res.stderr
    res = _run(["agenthop-ingest", "--db", str(work / "x.duckdb"), "--runs", f"s3://{BUCKET}/no/such"],
               stored["env"], work)
    assert res.returncode == 2 and "s3://agenthop-test/no/such: no such directory" in res.stderr, res.stderr
    assert not (work / "x.duckdb").exists()


def test_two_shards_on_s3_equal_the_local_run(stored: dict, s3: S3Server) -> None:
    """Two shard processes at once into one s3:// store (as two machines would): the run completes,
    with _SUCCESS, and ingests to the same rows as the unsharded local run."""
    work, env = stored["work"], stored["env"]
    cmd = [cli("agenthop-harness"), "run", "--panel", str(work / "panel.yaml"), "--no-progress", "--processes", "1",
           "--data", f"s3://{BUCKET}/releases/small", "--out", f"s3://{BUCKET}/store/sharded"]
    procs = [subprocess.Popen([*cmd, "--shard", f"{k}/2"], env=env, cwd=work, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for k in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=600)
        OUTPUTS.append(out + err)
        assert p.returncode == 0, err
    objects = _objects(s3)
    runs = {k.split("/")[2] for k in objects if k.startswith("store/sharded/")}
    assert len(runs) == 2 and all(f"store/sharded/{r}/_SUCCESS" in objects for r in runs)
    db = work / "sharded.duckdb"
    res = _run(["agenthop-ingest", "--db", str(db), "--benchmark", str(stored["bench"]),
                "--runs", f"s3://{BUCKET}/store/sharded"], env, work)
    assert res.returncode == 0, res.stderr
    local_db = work / "local.duckdb"  # test_ingest_from_s3_equals_local made it
    for table in ("runs", "trajectories", "turns", "tool_calls"):
        assert _rows(db, table) == _rows(local_db, table), table


def test_marts_of_the_s3_ingest(stored: dict) -> None:
    """make-benchmark -> run -> ingest, all through s3://, then dbt: one run_summary row per run."""
    db = stored["work"] / "remote.duckdb"  # test_ingest_from_s3_equals_local made it
    res = run_dbt_build(db, stored["work"], "--select", "+run_summary")
    OUTPUTS.append(res.stdout + res.stderr)
    assert res.returncode == 0, res.stdout[-3000:]
    con = duckdb.connect(str(db), read_only=True)
    try:
        runs = con.sql("SELECT run_id, model FROM raw.runs ORDER BY run_id").fetchall()
        summary = con.sql("SELECT run_id, model, n, benchmark FROM run_summary ORDER BY run_id").fetchall()
    finally:
        con.close()
    assert [(r, m) for r, m, _, _ in summary] == runs and len(runs) == 2
    assert {(n, b) for _, _, n, b in summary} == {(12, "agenthop")}


@pytest.mark.parametrize("where", ["local", "s3"])
def test_storage_write_list_read_delete(where: str, s3: S3Server, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from agenthop.harness import storage

    for name, value in s3.env({}).items():
        monkeypatch.setenv(name, value)
    root = str(tmp_path / "store") if where == "local" else f"s3://{BUCKET}/unit/{tmp_path.name}"
    assert storage.list_files(root) == {}
    storage.write_bytes(f"{root}/a/one.txt", b"first")
    storage.write_bytes(f"{root}/a/one.txt", b"second")  # replaced whole
    storage.write_bytes(f"{root}/two.bin", b"\x00" * 10)
    assert storage.list_files(root) == {"a/one.txt": 6, "two.bin": 10}
    assert storage.read_bytes(f"{root}/a/one.txt") == b"second"
    storage.delete(f"{root}/two.bin")
    storage.delete(f"{root}/two.bin")  # deleting what is gone is no error
    assert storage.list_files(root) == {"a/one.txt": 6}
    if where == "local":
        assert not list((tmp_path / "store").rglob(".*")), "no temporary file is left"
    else:
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-key")
        with pytest.raises(storage.StorageError) as err:
            storage.read_bytes(f"{root}/a/one.txt")
        assert str(err.value).startswith(f"{root}/a/one.txt: cannot read")
        assert "not-the-key" not in str(err.value) and s3.endpoint not in str(err.value)


def test_the_secret_is_in_no_written_byte(stored: dict, s3: S3Server) -> None:
    secret = s3.secret_key.encode()
    key_id = s3.access_key.encode()
    for key, body in _objects(s3).items():
        assert secret not in body and key_id not in body, key
    for p in stored["work"].rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            assert secret not in data and key_id not in data, p
    assert len(OUTPUTS) >= 8
    for text in OUTPUTS:
        assert s3.secret_key not in text and s3.access_key not in text and s3.endpoint not in text, text[-2000:]
    left = [p for p in (stored["work"] / "tmp").rglob("*")]
    assert left == [], f"temporary copies are removed: {left[:5]}"
