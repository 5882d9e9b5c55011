"""Inspect logs mapped in batches (docs/inspect.md#memory): the same tables as mapping a log whole,
and an import larger than the memory allows refused before it is read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from inspect_fixtures import inspect_logs  # noqa: E402,F401  (the session's logs)
import inspect_corpus  # noqa: E402

from agenthop.ingest.sources import inspect_bounds, inspect_import  # noqa: E402

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


def test_an_import_past_the_budget_is_refused_before_it_is_read(corpus_log: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    env = dict(os.environ, AGENTHOP_INSPECT_MAX_IMPORT_MB="1")
    proc = subprocess.run([str(BIN / "agenthop-ingest"), "--db", str(db), "--inspect-reader", "builtin",
                           "--inspect-log", str(corpus_log)], capture_output=True, text=True, env=env)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert str(corpus_log) in lines[0] and "AGENTHOP_INSPECT_MAX_IMPORT_MB" in lines[0]
    assert not db.exists()  # no half-written warehouse
    ok = subprocess.run([str(BIN / "agenthop-ingest"), "--db", str(db), "--inspect-reader", "builtin",
                         "--inspect-log", str(corpus_log), "--quiet"], capture_output=True, text=True,
                        env=dict(env, AGENTHOP_INSPECT_MAX_IMPORT_MB="100"))
    assert ok.returncode == 0, ok.stderr
