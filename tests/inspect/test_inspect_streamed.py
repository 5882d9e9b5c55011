"""Inspect logs mapped in batches and streamed into the write transaction (docs/inspect.md#memory): the
same tables as mapping a log whole, a failure half-way through a log leaves the warehouse as it was, and
a log read whole (``.json``) larger than the memory allows is refused before it is read."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import inspect_fixtures as fx  # noqa: E402
from inspect_fixtures import inspect_logs  # noqa: E402,F401  (the session's logs)
import inspect_corpus  # noqa: E402

from agenthop.ingest import core  # noqa: E402
from agenthop.ingest.conform import IngestError  # noqa: E402
from agenthop.ingest.sources import inspect_bounds, inspect_import, inspect_map, inspect_read  # noqa: E402
from agenthop.schemas.trajectory import KEYS  # noqa: E402

BIN = Path(sys.executable).parent
MiB = 1 << 20
#: a whole log in one batch: the mapping as it was before batches
WHOLE = 10**9


@pytest.fixture(scope="module")
def corpus_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Forty AgentDojo-shaped samples of the bench's corpus generator."""
    path = tmp_path_factory.mktemp("corpus") / "dojo.eval"
    inspect_corpus.write_log(path, 40)
    return path


def _tables(path: Path, batch: int) -> dict[str, pa.Table]:
    """Every table one log's import writes: the run tables of each run, its items and catalogue rows."""
    lt = inspect_import.read_log(path, reader="builtin", batch=batch)
    out = {}
    for rd in lt.runs:
        assert rd.tables is not None
        for name, table in rd.tables.items():
            out[f"{rd.run_id}.{name}"] = table.combine_chunks()
    out["items"] = lt.items.combine_chunks() if lt.items is not None else pa.table({})
    out["metric_defs"] = pa.Table.from_pylist(lt.metric_defs) if lt.metric_defs else pa.table({})
    return out


@pytest.mark.parametrize("batch", [1, 3, 16])
def test_batched_mapping_gives_the_tables_of_the_whole_log(corpus_log: Path, inspect_logs, batch: int) -> None:  # noqa: F811
    for log in (corpus_log, *inspect_logs.eval_logs, *inspect_logs.json_logs):
        whole, batched = _tables(log, WHOLE), _tables(log, batch)
        assert sorted(whole) == sorted(batched)
        assert whole["items"].num_rows > 0
        assert whole["metric_defs"].num_rows > 0, log.name  # the catalogue is made from the scores the batches took
        for name in whole:
            assert batched[name].schema == whole[name].schema, (log.name, name)
            assert batched[name].to_pylist() == whole[name].to_pylist(), (log.name, name)
    # the corpus log's 40 samples: every per-sample table has rows from more than one batch of 16
    tables = _tables(corpus_log, batch)
    run = next(k.split(".")[0] for k in tables if k.endswith(".trajectories"))
    assert tables[f"{run}.trajectories"].num_rows == 40
    assert tables[f"{run}.messages"].num_rows > 40 * 10


def test_import_budget_from_the_available_memory() -> None:
    limits = inspect_bounds.Limits()
    # 1,000 MiB available: 80% of it, at 2 bytes of memory per byte of JSON
    assert inspect_bounds.import_budget(limits, available=1000 * MiB) == 400 * MiB
    assert inspect_bounds.import_budget(inspect_bounds.Limits(max_import_bytes=5 * MiB), available=1000 * MiB) == 5 * MiB
    assert inspect_bounds.limits_from_env({"AGENTHOP_INSPECT_MAX_IMPORT_MB": "7"}).max_import_bytes == 7 * MiB
    budget = inspect_bounds.ImportBudget(limits, available=10 * MiB)  # 4 MiB of JSON
    budget.take(3 * MiB)
    with pytest.raises(inspect_bounds.BoundError, match="with the 3 MiB of the logs read before it"):
        budget.take(2 * MiB)


def test_available_memory_reads_meminfo(tmp_path: Path) -> None:
    info = tmp_path / "meminfo"
    info.write_text("MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n")
    assert inspect_bounds.available_memory(str(info)) == 2048 * 1024
    assert inspect_bounds.available_memory(str(tmp_path / "absent")) is None


def _json_log(src: Path, dst: Path) -> Path:
    """The .eval log ``src`` as an older .json log (one document, read whole)."""
    members = dict(fx.eval_members(src))
    doc = {**members["header.json"], "samples": [v for n, v in members.items() if n.startswith("samples/")]}
    dst.write_text(json.dumps(doc))
    return dst


def test_a_log_read_whole_past_the_budget_is_refused_before_it_is_read(corpus_log: Path, tmp_path: Path) -> None:
    whole = _json_log(corpus_log, tmp_path / "dojo.json")  # 40 samples: more than 1 MiB of JSON
    db = tmp_path / "w.duckdb"
    env = dict(os.environ, AGENTHOP_INSPECT_MAX_IMPORT_MB="1")
    proc = subprocess.run([str(BIN / "agenthop-ingest"), "--db", str(db), "--inspect-reader", "builtin",
                           "--inspect-log", str(whole)], capture_output=True, text=True, env=env)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert str(whole) in lines[0] and "AGENTHOP_INSPECT_MAX_IMPORT_MB" in lines[0]
    assert not db.exists()  # no half-written warehouse
    # the same samples in a .eval log are streamed: not held, so the budget does not apply
    ok = subprocess.run([str(BIN / "agenthop-ingest"), "--db", str(db), "--inspect-reader", "builtin",
                         "--inspect-log", str(corpus_log), "--quiet"], capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr


def _ordered(con: duckdb.DuckDBPyConnection, name: str, run_ids: list[str]) -> list[dict]:
    cols = [c for (c,) in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = 'raw' AND table_name = ? "
        "AND column_name NOT IN ('_partial', '_source') ORDER BY ordinal_position", [name]).fetchall()]
    cur = con.execute(f"SELECT {', '.join(cols)} FROM raw.{name} WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
                      f"ORDER BY {', '.join(KEYS[name])}", [run_ids])
    return [dict(zip(cols, row)) for row in cur.fetchall()]


@pytest.mark.parametrize("elsewhere", [False, True], ids=["one-process", "read-in-a-second-process"])
def test_the_streamed_import_writes_the_tables_of_the_one_batch_mapping(
        corpus_log: Path, inspect_logs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, elsewhere: bool) -> None:  # noqa: F811
    logs = [corpus_log, *inspect_logs.eval_logs, inspect_logs.agentdojo]
    expected = {log: inspect_import.read_log(log, reader="builtin", batch=WHOLE) for log in logs}
    read_elsewhere = inspect_read._read_elsewhere
    if elsewhere:  # every .eval log read by a second process, as a large one is
        monkeypatch.setattr(inspect_read, "PARALLEL_SAMPLES", 0)
        monkeypatch.setenv(inspect_read.SECOND_READER_ENV, "1")
    started: list[Path] = []
    monkeypatch.setattr(inspect_read, "_read_elsewhere", lambda p, r: started.append(p) or read_elsewhere(p, r))
    streamed: list[str] = []
    stream = core._EarlyWrite.stream

    def counted(self: core._EarlyWrite, batch: inspect_import.StreamedBatch) -> None:
        streamed.append(batch.run_id)
        stream(self, batch)

    monkeypatch.setattr(core._EarlyWrite, "stream", counted)
    monkeypatch.setattr(inspect_map, "BATCH", 3)
    db = tmp_path / "w.duckdb"
    result = core.run_ingest(db, inspect_logs=logs, inspect_reader="builtin")
    assert result.run_actions["inserted"] == 6
    assert streamed.count(next(rd.run_id for rd in expected[corpus_log].runs)) == 14  # 40 samples, 3 a batch
    assert started == ([log.resolve() for log in logs if log.suffix == ".eval"] if elsewhere else [])
    con = duckdb.connect(str(db), read_only=True)
    try:
        for log, lt in expected.items():
            run_ids = [rd.run_id for rd in lt.runs]
            for name in inspect_import.RUN_TABLE_NAMES:
                whole = pa.concat_tables([rd.tables[name] for rd in lt.runs])
                rows = sorted(whole.to_pylist(), key=lambda r: tuple(r[k] for k in KEYS[name]))
                written = _ordered(con, name, run_ids)
                assert [{k: r[k] for k in written[0]} for r in rows] == written, (log.name, name)
                assert result.rows[name] >= whole.num_rows
            # the corpus log and the AgentDojo-shaped log are of one task: its items and metrics are both logs'
            items = set(con.execute("SELECT sample_id, input, target, metadata_json FROM raw.inspect_items "
                                    "WHERE benchmark = ?", [lt.benchmark]).fetchall())
            assert {(r["sample_id"], r["input"], r["target"], r["metadata_json"]) for r in lt.items.to_pylist()} <= items
            metrics = set(con.execute("SELECT metric, kind FROM raw.metric_defs WHERE benchmark = ?",
                                      [lt.benchmark]).fetchall())
            assert {(m["metric"], m["kind"]) for m in lt.metric_defs} <= metrics
    finally:
        con.close()


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("elsewhere", [False, True], ids=["one-process", "read-in-a-second-process"])
def test_a_bad_sample_after_streamed_batches_leaves_the_warehouse_as_it_was(
        corpus_log: Path, inspect_logs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, elsewhere: bool) -> None:  # noqa: F811
    if elsewhere:
        monkeypatch.setattr(inspect_read, "PARALLEL_SAMPLES", 0)
        monkeypatch.setenv(inspect_read.SECOND_READER_ENV, "1")
    members = fx.eval_members(corpus_log)
    samples = [i for i, (name, _) in enumerate(members) if name.startswith("samples/")]
    bad_name, bad = members[samples[30]]  # after ten batches of three have gone into the transaction
    members[samples[30]] = (bad_name, {**bad, "total_time": "soon"})
    bad_log = fx.write_eval(tmp_path / "bad.eval", members)
    monkeypatch.setattr(inspect_map, "BATCH", 3)
    db = tmp_path / "w.duckdb"
    core.run_ingest(db, inspect_logs=[inspect_logs.agentdojo], inspect_reader="builtin")
    before = _sha(db)
    with pytest.raises(IngestError) as err:
        core.run_ingest(db, inspect_logs=[bad_log], inspect_reader="builtin")
    message = str(err.value)
    assert "\n" not in message and str(bad_log) in message and "total_time" in message
    assert _sha(db) == before  # the existing warehouse, byte for byte
    fresh = tmp_path / "new.duckdb"
    with pytest.raises(IngestError):
        core.run_ingest(fresh, inspect_logs=[bad_log], inspect_reader="builtin")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.eval", "w.duckdb"]  # nothing of the new one


@pytest.mark.parametrize("reader", ["builtin", "inspect"])
def test_a_second_process_reads_the_samples_the_reader_reads_in_one(corpus_log: Path, reader: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    if reader == "inspect":
        pytest.importorskip("inspect_ai")
    here = inspect_import.read_log(corpus_log, reader=reader, batch=WHOLE)  # 40 samples: read in this process
    monkeypatch.setattr(inspect_read, "PARALLEL_SAMPLES", 0)
    monkeypatch.setenv(inspect_read.SECOND_READER_ENV, "1")
    elsewhere = inspect_import.read_log(corpus_log, reader=reader, batch=WHOLE)
    assert [rd.run_id for rd in elsewhere.runs] == [rd.run_id for rd in here.runs]
    for a, b in zip(here.runs, elsewhere.runs):
        for name, table in a.tables.items():
            assert b.tables[name].to_pylist() == table.to_pylist(), (reader, name)
    assert elsewhere.items.to_pylist() == here.items.to_pylist()


def test_an_unchanged_log_is_told_from_its_hash_and_header_alone(corpus_log: Path, inspect_logs, tmp_path: Path,  # noqa: F811
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    logs = [corpus_log, inspect_logs.eval_logs[0]]  # the corpus generator's and one Inspect wrote
    for log in logs:
        header = inspect_read.finished_header(log)
        assert header is not None and header == inspect_read.ZipLog(log).info().header
    assert inspect_read.finished_header(fx.still_running(inspect_logs.eval_logs[0], tmp_path / "running.eval")) is None
    db = tmp_path / "w.duckdb"
    core.run_ingest(db, inspect_logs=logs, inspect_reader="builtin")
    opened: list[Path] = []
    open_log = inspect_read.open_log
    monkeypatch.setattr(inspect_read, "open_log", lambda p, *a: opened.append(p) or open_log(p, *a))
    again = core.run_ingest(db, inspect_logs=logs, inspect_reader="builtin")
    assert again.run_actions["unchanged"] == 3 and not again.run_actions["inserted"]
    assert opened == []  # neither log's ZIP directory was read
    # a run of the log no longer loaded: the log is read again, and the run loaded
    con = duckdb.connect(str(db))
    run_id = con.execute("SELECT run_id FROM raw.runs WHERE _source = ? ORDER BY run_id LIMIT 1",
                         [str(inspect_logs.eval_logs[0].resolve())]).fetchall()[0][0]
    for name in inspect_import.RUN_TABLE_NAMES:
        con.execute(f"DELETE FROM raw.{name} WHERE run_id = ?", [run_id])
    con.close()
    third = core.run_ingest(db, inspect_logs=logs, inspect_reader="builtin")
    assert opened == [inspect_logs.eval_logs[0].resolve()]
    assert third.run_actions["inserted"] == 1 and third.run_actions["unchanged"] == 2


def test_a_streamed_import_builds_its_search_index_under_the_index_memory_cap(
        corpus_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The streaming cap (small, so rows spill while a log is read) is lifted to the index's own cap while
    the index takes in a group of streamed samples and at the end of the transaction, then restored; the
    index is the one a rebuild gives."""
    seen: list[str] = []
    sync, streamed = core.sync_index, core.index_streamed

    def recorded(con: duckdb.DuckDBPyConnection, *held: object):  # noqa: ANN202
        seen.append(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
        return sync(con, *held)  # type: ignore[arg-type]

    def recorded_group(con: duckdb.DuckDBPyConnection, *units: object):  # noqa: ANN202
        seen.append(con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
        return streamed(con, *units)  # type: ignore[arg-type]

    after: list[str] = []
    check = core.quality.issues_by_rule

    def recorded_after(*args: object):  # noqa: ANN202
        after.append(early[0].con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
        return check(*args)  # type: ignore[arg-type]

    early: list[core._EarlyWrite] = []
    init = core._EarlyWrite.__init__

    def kept(self: core._EarlyWrite, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        early.append(self)

    monkeypatch.setattr(core._EarlyWrite, "__init__", kept)
    monkeypatch.setattr(core.quality, "issues_by_rule", recorded_after)
    monkeypatch.setattr(core, "sync_index", recorded)
    monkeypatch.setattr(core, "index_streamed", recorded_group)
    db = tmp_path / "w.duckdb"
    core.run_ingest(db, inspect_logs=[corpus_log], inspect_reader="builtin")
    probe = duckdb.connect()
    caps = []
    for cap in (core.INDEX_MEMORY_LIMIT, core.STREAM_MEMORY_LIMIT):
        probe.execute(f"SET memory_limit = '{cap}'")
        caps.append(probe.execute("SELECT current_setting('memory_limit')").fetchall()[0][0])
    assert caps[0] != caps[1] and seen == [caps[0], caps[0]]  # the one group of 40 samples, then the end
    assert after[0] == caps[1]  # the streaming cap again after the group's index
    tables = ("units", "outputs", "vocab", "postings")

    def index(path: Path) -> dict[str, list[tuple]]:
        con = duckdb.connect(str(path), read_only=True)
        try:
            return {t: sorted(con.execute(f"SELECT * FROM search.{t}").fetchall()) for t in tables}
        finally:
            con.close()

    streamed = index(db)
    assert streamed["postings"] and streamed["outputs"]
    from agenthop.ingest.transcripts.index import reindex_warehouse
    reindex_warehouse(db)
    assert index(db) == streamed


def test_a_streamed_batch_in_key_order_is_checked_without_grouping_and_a_repeated_key_is_refused(
        corpus_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each streamed batch's keys are checked: rows in strictly increasing key order settle it (the samples
    come in reading order and number their rows up); any other batch is grouped, and a key it repeats
    ends the import with nothing written."""
    grouped: list[str] = []
    find = core.find_duplicate

    def counted(table: pa.Table, keys: list[str], con: duckdb.DuckDBPyConnection | None = None) -> dict | None:
        grouped.append(next(name for name, k in KEYS.items() if list(k) == list(keys)))
        return find(table, keys, con)

    monkeypatch.setattr(core, "find_duplicate", counted)
    monkeypatch.setattr(inspect_map, "BATCH", 8)
    core.run_ingest(tmp_path / "a.duckdb", inspect_logs=[corpus_log], inspect_reader="builtin")
    # five batches; only the scores, whose keys 'utility' then 'security' go down within a sample, are grouped
    assert grouped == ["scores"] * 5

    map_sample = inspect_map.map_sample
    ids = [inspect_corpus.SampleMaker().sample_id(i) for i in range(40)]

    def repeated(run: inspect_map.RunRows, sample: dict, choice: tuple[str, str | None] | None) -> None:
        map_sample(run, sample, choice)
        if sample["id"] == ids[20]:  # the third batch: two batches are in the transaction already
            run.turns.append(dict(run.turns[-1]))

    monkeypatch.setattr(inspect_map, "map_sample", repeated)
    db = tmp_path / "b.duckdb"
    with pytest.raises(IngestError) as err:
        core.run_ingest(db, inspect_logs=[corpus_log], inspect_reader="builtin")
    message = str(err.value)
    assert message.startswith(f"{corpus_log.resolve()}: duplicate key in turns: ") and f"sample_id={ids[20]!r}" in message
    assert "\n" not in message and not db.exists()


def test_a_warehouse_failure_while_streaming_stops_the_reading_and_loads_nothing(
        corpus_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows are written on a thread of their own while the next samples are read: a DuckDB failure
    there ends the import with its one-line message, stops the reading, and leaves nothing."""
    mapped: list[str] = []
    map_sample = inspect_map.map_sample

    def counted(run: inspect_map.RunRows, sample: dict, choice: tuple[str, str | None] | None) -> None:
        mapped.append(sample["id"])
        map_sample(run, sample, choice)

    inserts: list[str] = []
    insert = core.insert_arrow

    def failing(con: duckdb.DuckDBPyConnection, name: str, table: pa.Table, on_one_thread: bool = False) -> None:
        inserts.append(name)
        if len(inserts) == 7:  # the second batch's
            raise duckdb.IOException("disk full")
        insert(con, name, table, on_one_thread)

    monkeypatch.setattr(inspect_map, "map_sample", counted)
    monkeypatch.setattr(core, "insert_arrow", failing)
    monkeypatch.setattr(inspect_map, "BATCH", 2)
    db = tmp_path / "w.duckdb"
    with pytest.raises(IngestError) as err:
        core.run_ingest(db, inspect_logs=[corpus_log], inspect_reader="builtin")
    message = str(err.value)
    assert message == f"warehouse {db}: disk full"
    assert len(mapped) < 40  # the reading stopped
    assert not db.exists()
    core.run_ingest(db, inspect_logs=[corpus_log], inspect_reader="builtin")  # and the next import is whole
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM raw.trajectories").fetchall() == [(40,)]
    con.close()


def test_the_first_failure_in_the_log_ends_the_import_whichever_side_meets_it_first(
        corpus_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeated key in the third batch (found by the writer) comes before a broken sample in the fifth
    (found by the reading, which is ahead of a slow writer): the repeated key is the error, as it is when
    one thread reads and writes in turn."""
    map_sample = inspect_map.map_sample
    ids = [inspect_corpus.SampleMaker().sample_id(i) for i in range(40)]

    def broken(run: inspect_map.RunRows, sample: dict, choice: tuple[str, str | None] | None) -> None:
        map_sample(run, sample, choice)
        if sample["id"] == ids[20]:
            run.turns.append(dict(run.turns[-1]))
        if sample["id"] == ids[33]:
            raise ValueError(f"sample {ids[33]!r} is broken")

    stream = core._EarlyWrite.stream
    reached: list[int] = []

    def slow(self: core._EarlyWrite, batch: inspect_import.StreamedBatch) -> None:
        time.sleep(0.2)
        reached.append(len(reached))
        stream(self, batch)

    monkeypatch.setattr(inspect_map, "map_sample", broken)
    monkeypatch.setattr(core._EarlyWrite, "stream", slow)
    monkeypatch.setattr(inspect_map, "BATCH", 8)
    db = tmp_path / "w.duckdb"
    with pytest.raises(IngestError) as err:
        core.run_ingest(db, inspect_logs=[corpus_log], inspect_reader="builtin")
    assert str(err.value).startswith(f"{corpus_log.resolve()}: duplicate key in turns: ")
    assert not db.exists()
    monkeypatch.setattr(core._EarlyWrite, "stream", stream)  # a broken sample alone is its own error
    monkeypatch.setattr(inspect_map, "map_sample", lambda run, sample, choice: (
        map_sample(run, sample, choice) if sample["id"] != ids[33] else broken(run, sample, choice)))
    with pytest.raises(IngestError, match="is broken"):
        core.run_ingest(db, inspect_logs=[corpus_log], inspect_reader="builtin")


def _units(path: Path) -> dict[str, list[tuple]]:
    """The index's units and outputs without their numbers (which follow the groups indexed)."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        out = {}
        for table in ("units", "outputs"):
            cur = con.execute(f"SELECT * EXCLUDE (uid) FROM search.{table}")
            out[table] = sorted(cur.fetchall(), key=repr)
        return out
    finally:
        con.close()


def _answers(path: Path) -> list[object]:
    from agenthop.ingest.transcripts.index import is_current
    from agenthop.ingest.transcripts.search import TranscriptQuery, find_matches
    con = duckdb.connect(str(path), read_only=True)
    try:
        assert is_current(con)
        out = []
        for q in ({"text": "the"}, {"text": "error", "role": "tool"}, {"text": "transfer"}, {"text": r"acc\w+t", "regex": True},
                  {"text": "IBAN", "case_sensitive": True}, {"text": "Thank you", "limit": None}):
            found = [find_matches(con, TranscriptQuery(**q), use_word_index=w).as_json() for w in (True, False)]
            assert found[0] == found[1], q  # the word index narrows, never changes, an answer
            out.append(found[0])
        return out
    finally:
        con.close()


def test_a_streamed_import_indexes_its_samples_a_group_at_a_time_with_the_answers_of_a_rebuild(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The search index takes in each group of streamed samples as it is written (here five groups of
    eight), and a log that replaces a loaded run takes that run's old units out first: the index holds
    the units a rebuild gives and search answers as after a rebuild."""
    from agenthop.ingest.transcripts import index
    from agenthop.ingest.transcripts.index import reindex_warehouse
    groups: list[int] = []
    streamed = index.index_streamed

    def counted(con: duckdb.DuckDBPyConnection, units: list, first: list[str]) -> tuple[int, int]:
        groups.append(sum(u.n_messages for u in units))
        return streamed(con, units, first)

    monkeypatch.setattr(core, "index_streamed", counted)
    monkeypatch.setattr(core, "STREAM_CHECK_SAMPLES", 8)
    monkeypatch.setattr(inspect_map, "BATCH", 4)
    first, second = tmp_path / "first.eval", tmp_path / "second.eval"
    inspect_corpus.write_log(first, 40, seed=0, eval_id="DojoReplaced")
    inspect_corpus.write_log(second, 40, seed=1, eval_id="DojoReplaced")  # the same run, other samples
    db = tmp_path / "w.duckdb"
    core.run_ingest(db, inspect_logs=[first], inspect_reader="builtin")
    assert len(groups) == 5 and all(groups)
    result = core.run_ingest(db, inspect_logs=[second], inspect_reader="builtin", force=True)  # its items change
    assert result.run_actions["replaced"] == 1 and len(groups) == 10
    units, answers = _units(db), _answers(db)
    assert any(answers)
    reindex_warehouse(db)  # the whole index built again, at once
    assert _units(db) == units
    assert _answers(db) == answers
