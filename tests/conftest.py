"""Shared fixtures: one end-to-end warehouse per test run.

`built_warehouse` runs the real pipeline once (synthetic benchmark -> simulated panel -> ingest ->
dbt build) through the installed console scripts, as a user would (dbt's own command line, run in this
process: dbt_in_process), and yields the paths.
Tests that only read the warehouse share it; tests that modify data build their own. Under pytest-xdist
the workers share one build (built_once) and each reads its own copy of the warehouse file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def cli(name: str) -> str:
    """Path of a console script installed in the running interpreter's environment."""
    path = BIN / name
    return str(path) if path.exists() else shutil.which(name) or name


def dbt_env(db: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        AGENTHOP_DB=str(db),
        DO_NOT_TRACK="1",
        DBT_SEND_ANONYMOUS_USAGE_STATS="False",
    )
    return env


def run_dbt_build(db: Path, work: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """`dbt build` from the repository root against `db`, with target/log dirs under `work`."""
    return run_dbt(db, work, "build", *extra)


#: Per test process: where run_dbt keeps, for each warehouse file name, a fixed path to the warehouse
#: dbt works on and the parsed project of the first build through that path (see run_dbt).
_PARSE_HOME: Path | None = None


def _parse_home() -> Path:
    global _PARSE_HOME
    if _PARSE_HOME is None:
        import atexit
        import tempfile

        _PARSE_HOME = Path(tempfile.mkdtemp(prefix="agenthop-dbt-parse-"))
        atexit.register(shutil.rmtree, _PARSE_HOME, True)
    return _PARSE_HOME


#: set to 1 to run the tests' dbt commands as subprocesses (the `dbt` console script) instead of in the test process
SUBPROCESS_ENV = "AGENTHOP_TEST_DBT_SUBPROCESS"


def dbt_in_process(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Runs the dbt command line `cmd` (cmd[0] is the dbt script) as `dbt` would run it from `cwd` with the
    environment `env`, but in this process (dbt's dbtRunner): each dbt process would spend ~2 CPU seconds
    importing dbt and its adapter before reading the project. Returns what the subprocess would have: dbt's
    exit code (0 success, 1 a failed node, 2 an error), its console output as stdout, anything else written
    to stderr and, for an error, the exception's type and message (dbt's console output names it too).

    The environment and the current folder are this process's for the run, then restored; dbt-duckdb's
    connection to the warehouse is closed after it (its file is free for the test to open or copy) and its
    once-per-process warnings forgotten, and the objects dbt_gc froze are handed back to the garbage
    collector, so each run starts as a new process would. Tests run one at a time in a test process, and so
    do these runs. Set AGENTHOP_TEST_DBT_SUBPROCESS=1 to run subprocesses instead.
    """
    import contextlib
    import gc
    import io

    if os.environ.get(SUBPROCESS_ENV) == "1":
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    from dbt.cli.main import dbtRunner

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            result = dbtRunner().invoke(cmd[1:])
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        with DuckDBConnectionManager._LOCK:
            if DuckDBConnectionManager._ENV is not None:
                DuckDBConnectionManager._ENV.close()
            DuckDBConnectionManager._ENV = None
            DuckDBConnectionManager._LOGGED_MESSAGES.clear()
        gc.unfreeze()
    if isinstance(result.exception, KeyboardInterrupt):
        raise result.exception
    if result.success:
        code = 0
    elif result.exception is None:
        code = 1
    else:
        code = 2
        err.write(f"{type(result.exception).__name__}: {result.exception}\n")
    return subprocess.CompletedProcess(cmd, code, out.getvalue(), err.getvalue())


def run_dbt(db: Path, work: Path, command: str, *extra: str, project: Path = REPO) -> subprocess.CompletedProcess[str]:
    """`dbt COMMAND` of `project` (default: the repository's) against `db`, with target/log dirs under `work`.

    A full parse of the project costs each dbt run ~10 CPU seconds, and dbt can only reuse an earlier
    parse for the same warehouse path (the path is part of the profile it checks). So the tests' builds
    of the repository's project reach their warehouse through one fixed path per file name and test
    process (a symlink to `db`, named as `db` so the database keeps its name), and every build after the
    first reads that first build's parse (DBT_PARTIAL_PARSE_FILE_PATH; dbt checks it is still valid and
    parses again what changed). dbt builds `db` itself: the symlink only names it. A copy of the project
    (`project`, edited by a test) reads that parse too: dbt compares every file of the copy with it by
    content and parses again the files the test edited; only builds of the repository's project save it.
    """
    import fcntl

    cmd = [cli("dbt"), command, "--project-dir", str(project), "--profiles-dir", str(project),
           "--target-path", str(work / "target"), "--log-path", str(work / "logs"), *extra]
    db = Path(db).absolute()
    if not db.is_file():
        return dbt_in_process(cmd, project, dbt_env(db))
    home = _parse_home() / db.name
    home.mkdir(exist_ok=True)
    with open(home / "lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # another build through this path is running: build without it
            return dbt_in_process(cmd, project, dbt_env(db))
        link, wal, parsed = home / db.name, home / (db.name + ".wal"), home / "partial_parse.msgpack"
        link.unlink(missing_ok=True)
        wal.unlink(missing_ok=True)
        link.symlink_to(db)
        env = dbt_env(link)
        if parsed.is_file():
            env["DBT_PARTIAL_PARSE_FILE_PATH"] = str(parsed)
        try:
            proc = dbt_in_process(cmd, project, env)
        finally:
            link.unlink()
            if wal.exists():  # a log DuckDB did not fold into the file belongs beside the file
                shutil.move(wal, db.with_name(db.name + ".wal"))
        written = work / "target" / "partial_parse.msgpack"
        if project == REPO and not parsed.is_file() and written.is_file():
            shutil.copyfile(written, parsed)
        return proc


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Under `--dist loadfile` (make test), the costly test files go to the workers first (tests/scheduling.py)."""
    from scheduling import costly_first_scheduler

    return costly_first_scheduler(config, log)


@dataclass(frozen=True)
class BuiltWarehouse:
    db: Path
    benchmark: Path
    runs: Path
    work: Path


def raw_content(db: Path) -> dict[str, list[tuple]]:
    """Every raw table but the ingest log, sorted, without source, load-time or underscore columns:
    what two ingests of the same inputs from different places must agree on."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {}
        tables = [t for (t,) in con.sql("SELECT table_name FROM information_schema.tables "
                                        "WHERE table_schema = 'raw' AND table_name <> 'ingest_log'").fetchall()]
        for t in tables:
            cols = [c for (c,) in con.sql(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = 'raw' AND table_name = ? "
                "ORDER BY ordinal_position", params=[t]).fetchall()
                if not c.startswith("_") and "source" not in c and not c.endswith("_at")]
            quoted = ", ".join('"' + c + '"' for c in cols)
            out[t] = con.sql(f"SELECT {quoted} FROM raw.{t} ORDER BY ALL").fetchall()
        return out
    finally:
        con.close()


def _check(proc: subprocess.CompletedProcess[str], what: str) -> None:
    if proc.returncode != 0:
        raise AssertionError(f"{what} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]) -> Path:
    """The folder `name` as `build` fills it, built once per test run, whichever test asks first.

    Under pytest-xdist the workers share one folder in the run's base temporary folder: the first worker
    that asks builds it while holding a file lock, the others wait for it and reuse it (a failed build
    leaves no mark, so the next test to ask tries again and fails alike). Callers only read what is
    in it and copy what a test may change, e.g. a warehouse file (worker_copy)."""
    import fcntl

    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "built-once"
    root.mkdir(exist_ok=True)
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


def worker_copy(tmp_path_factory: pytest.TempPathFactory, db: Path, name: str) -> Path:
    """A copy of the warehouse file `db` (shared by the workers, see built_once) for this test process,
    with the same file name (the database's name) in a new folder `name`."""
    copy = tmp_path_factory.mktemp(name) / db.name
    shutil.copyfile(db, copy)
    wal = db.with_name(db.name + ".wal")
    if wal.exists():
        shutil.copyfile(wal, copy.with_name(copy.name + ".wal"))
    return copy


def _build_pipeline(work: Path) -> None:
    """built_warehouse's pipeline in `work`: benchmark/, runs/, warehouse.duckdb (built by dbt)."""
    bench, runs, db = work / "benchmark", work / "runs", work / "warehouse.duckdb"
    env = dbt_env(db)
    _check(subprocess.run([cli("agenthop-harness"), "make-benchmark", "--out", str(bench), "--items", "48",
                           "--seed", "7"], env=env, capture_output=True, text=True), "make-benchmark")
    _check(subprocess.run([cli("agenthop-harness"), "run", "--panel", str(REPO / "tests/fixtures/panel_small.yaml"),
                           "--data", str(bench), "--out", str(runs), "--no-progress"],
                          env=env, capture_output=True, text=True), "harness run")
    _check(subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(bench), "--runs", str(runs)],
                          env=env, capture_output=True, text=True), "ingest")
    # SciExplore beside AgentHop, as in `make demo`: its release and a responses file of simulated systems
    sx, sx_resp = work / "sciexplore", work / "sciexplore_responses.jsonl"
    _check(subprocess.run([cli("agenthop-harness"), "make-benchmark", "--benchmark", "sciexplore", "--out", str(sx),
                           "--responses", str(sx_resp)], env=env, capture_output=True, text=True), "sciexplore release")
    _check(subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(sx), "--responses", str(sx_resp)],
                          env=env, capture_output=True, text=True), "sciexplore ingest")
    _check(run_dbt_build(db, work), "dbt build")


@pytest.fixture(scope="session")
def built_warehouse(tmp_path_factory: pytest.TempPathFactory) -> BuiltWarehouse:
    """The pipeline run once per test run (built_once); each test process reads its own copy of the
    warehouse file, and the shared benchmark and runs folders."""
    work = built_once(tmp_path_factory, "pipeline", _build_pipeline)
    db = worker_copy(tmp_path_factory, work / "warehouse.duckdb", "pipeline-warehouse")
    return BuiltWarehouse(db=db, benchmark=work / "benchmark", runs=work / "runs", work=work)


@dataclass(frozen=True)
class MessagesWarehouse:
    db: Path  # built_warehouse plus two runs recorded with messages, dbt-built again
    stale_db: Path  # the same after the ingest, before that dbt build (marts are stale)
    run_ids: tuple[str, ...]  # the runs recorded with messages


TRANSCRIBED_PANEL = """\
defaults: {backend: sim, conditions: [full], replicates: 1}
models:
  - {name: verifier-transcribed, backend: sim, family: sim-test, tier: closed_frontier, sim: {archetype: verifier}}
  - {name: greedy-transcribed, backend: sim, family: sim-test, tier: open_frontier, sim: {archetype: greedy_reader}}
"""


@pytest.fixture(scope="session")
def messages_warehouse(built_warehouse: BuiltWarehouse, tmp_path_factory: pytest.TempPathFactory) -> MessagesWarehouse:
    """built_warehouse plus two simulated runs that recorded their messages (for item pages that show
    what the agent received), and a copy taken between that ingest and the next dbt build; built once
    per test run (built_once), each test process reads its own copies."""

    def build(work: Path) -> None:
        db, stale, runs, panel = work / "warehouse.duckdb", work / "stale.duckdb", work / "runs", work / "panel.yaml"
        shutil.copyfile(built_warehouse.db, db)
        panel.write_text(TRANSCRIBED_PANEL)
        env = dbt_env(db)
        _check(subprocess.run([cli("agenthop-harness"), "run", "--panel", str(panel), "--data",
                               str(built_warehouse.benchmark), "--out", str(runs), "--messages", "--no-progress"],
                              env=env, capture_output=True, text=True), "harness run --messages")
        _check(subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--runs", str(runs)],
                              env=env, capture_output=True, text=True), "ingest")
        shutil.copyfile(db, stale)
        _check(run_dbt_build(db, work), "dbt build")

    work = built_once(tmp_path_factory, "messages", build)
    ids = tuple(sorted(p.name for p in (work / "runs").iterdir() if p.is_dir()))
    return MessagesWarehouse(db=worker_copy(tmp_path_factory, work / "warehouse.duckdb", "messages-warehouse"),
                             stale_db=worker_copy(tmp_path_factory, work / "stale.duckdb", "messages-stale"),
                             run_ids=ids)


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """One real S3-compatible server (SeaweedFS on 127.0.0.1) for the session; each test module that
    uses it makes a bucket of its own (tests/servers/s3_server.py)."""
    import secrets

    from servers.s3_server import start_s3

    server = start_s3(tmp_path_factory.mktemp("seaweedfs"), "AKAGENTHOPTEST", "sk-" + secrets.token_hex(16))
    try:
        yield server
    finally:
        server.stop()
