"""Run directories (docs/formats.md#trajectory-store) -> validated Arrow tables, one :class:`RunData` per run.

A run directory holds ``<table>-<part>.parquet`` files and, when finished, ``_SUCCESS``. Its content
identity is the SHA-256 of the part files' names and bytes (plus whether ``_SUCCESS`` exists); a run
whose identity matches the version already in the warehouse is not even read.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from agenthop.schemas import trajectory as tschema

from .conform import IngestError, conform, find_duplicate, format_key
from .quality import Segments
from .transcripts.prepared import RunUnits

PART_RE = re.compile(r"^(" + "|".join(tschema.RUN_TABLES) + r")-([^/]+)\.parquet$")
SUCCESS = "_SUCCESS"


@dataclass(frozen=True, slots=True)
class LoadedRelease:
    """A benchmark release in the warehouse (``raw.benchmarks``): what runs on it are checked against."""

    sha256: str
    sample_ids: pa.Array


@dataclass(slots=True)
class Checks:
    """Warehouse facts every run is checked against."""

    #: benchmark name -> its loaded release (one release per benchmark name)
    releases: dict[str, LoadedRelease] = field(default_factory=dict)
    force: bool = False
    partial: bool = False

    def with_own_items(self, benchmark: str, sha256: str, sample_ids: pa.Array) -> Checks:
        """These checks for a source that carries its own items (imported logs whose samples define
        their benchmark): its runs are checked against those items instead of a loaded release."""
        releases = {**self.releases, benchmark: LoadedRelease(sha256, sample_ids)}
        return Checks(releases=releases, force=self.force, partial=self.partial)

    @property
    def sample_ids(self) -> pa.Array | None:
        """Item ids of the default benchmark's release (None: not loaded); sources without a
        ``benchmark`` column (reference JSON, old run files) are runs of that benchmark."""
        rel = self.releases.get(tschema.DEFAULT_BENCHMARK)
        return rel.sample_ids if rel is not None else None

    @property
    def benchmark_sha256(self) -> str | None:
        rel = self.releases.get(tschema.DEFAULT_BENCHMARK)
        return rel.sha256 if rel is not None else None


@dataclass(slots=True)
class RunData:
    kind: str  # 'runs' | 'reference-json'
    source: str
    run_id: str
    content_sha256: str
    partial: bool
    benchmark_sha256: str
    #: table -> rows; None when the run is unchanged and was not read
    tables: dict[str, pa.Table] | None = None
    counts: dict[str, int] = field(default_factory=dict)
    #: table -> the files its rows came from (for data-quality messages); None when unchanged
    segments: dict[str, Segments] | None = None
    #: the run's search-index units, held from its tables in memory (transcripts/prepared.py), for
    #: the index to take instead of reading the raw tables back; None when not prepared
    units: RunUnits | None = None


def is_run_dir(d: Path) -> bool:
    if (d / SUCCESS).exists():
        return True
    return any(PART_RE.match(p.name) for p in d.iterdir() if p.is_file())


def discover(path: Path) -> list[Path]:
    """``path`` itself if it is a run directory, else its run-directory children (sorted)."""
    if not path.exists():
        raise IngestError(f"--runs {path}: no such directory")
    if not path.is_dir():
        raise IngestError(f"--runs {path}: not a directory")
    if is_run_dir(path):
        return [path]
    found = sorted(d for d in path.iterdir() if d.is_dir() and not d.name.startswith(".") and is_run_dir(d))
    if not found:
        raise IngestError(f"--runs {path}: no run directories (with {SUCCESS} or <table>-<part>.parquet files)")
    return found


def list_parts(d: Path) -> dict[str, list[Path]]:
    parts: dict[str, list[Path]] = {t: [] for t in tschema.RUN_TABLES}
    for p in sorted(d.iterdir()):
        m = PART_RE.match(p.name)
        if m and p.is_file():
            parts[m.group(1)].append(p)
    return parts


def content_sha256(parts: dict[str, list[Path]], finished: bool) -> str:
    h = hashlib.sha256()
    for table in tschema.RUN_TABLES:
        for p in parts[table]:
            h.update(p.name.encode() + b"\0")
            with p.open("rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
            h.update(b"\0")
    h.update(b"finished" if finished else b"partial")
    return h.hexdigest()


def read_parquet(path: Path, columns: Sequence[str] | None = None) -> pa.Table:
    """Read one Parquet file (only ``columns`` that exist in it, when given)."""
    import pyarrow.parquet as pq  # here: the reference-JSON and Inspect imports never read Parquet

    try:
        f = pq.ParquetFile(path)
        if columns is not None:
            present = set(f.schema_arrow.names)
            return f.read(columns=[c for c in columns if c in present], use_threads=True)
        return f.read(use_threads=True)
    except (pa.ArrowException, OSError, ValueError) as exc:
        detail = " ".join(str(exc).split())  # Arrow's messages can span lines; errors are one line
        raise IngestError(f"{path}: not a readable Parquet file ({detail})") from None


def _check_run_id(table: pa.Table, run_id: str, where: str) -> None:
    col = table.column("run_id")
    mismatch = pc.not_equal(col, run_id)
    if pc.any(mismatch).as_py():
        other = pc.filter(col, mismatch)[0].as_py()
        raise IngestError(
            f"{where}: row with run_id {other!r} does not belong to this run directory's run {run_id!r}"
        )


def _no_release(benchmark: str, where: str) -> IngestError:
    return IngestError(
        f"{where}: no benchmark is loaded for this run (no release of benchmark {benchmark!r} is loaded); "
        f"pass --benchmark DIR to load one first"
    )


def check_sample_ids(table: pa.Table, known: pa.Array | None, where: str,
                     benchmark: str = tschema.DEFAULT_BENCHMARK) -> None:
    if known is None:
        raise _no_release(benchmark, where)
    col = table.column("sample_id")
    unknown = pc.unique(pc.filter(col, pc.invert(pc.is_in(col, value_set=known))))
    if len(unknown):
        shown = ", ".join(repr(v) for v in sorted(unknown.to_pylist())[:5])
        raise IngestError(
            f"{where}: {len(unknown)} sample id(s) not in the loaded benchmark's items: {shown}"
        )


def check_benchmark(run_id: str, run_sha: str, checks: Checks, where: str,
                    benchmark: str = tschema.DEFAULT_BENCHMARK) -> None:
    """The run's release is the loaded release of its benchmark (same hash), unless forced."""
    rel = checks.releases.get(benchmark)
    if rel is None:
        raise _no_release(benchmark, where)
    if run_sha != rel.sha256 and not checks.force:
        raise IngestError(
            f"{where}: run {run_id!r} was made on benchmark {run_sha} but the warehouse holds "
            f"benchmark {rel.sha256} ({benchmark}); load the matching --benchmark or pass --force"
        )


def validate_table(table_name: str, table: pa.Table, run_id: str, checks: Checks, where: str,
                   benchmark: str = tschema.DEFAULT_BENCHMARK) -> None:
    """Identity checks of one conformed table (one part file or one converted table).

    Value and consistency rules (schemas/quality.py) run later, over every table at once.
    """
    _check_run_id(table, run_id, where)
    if table_name != "runs":
        rel = checks.releases.get(benchmark)
        check_sample_ids(table, rel.sample_ids if rel is not None else None, where, benchmark)


def files_with_key(source: Path, table: str, key: dict[str, object]) -> list[str]:
    """Part files of run directory ``source`` holding rows with ``key`` (to name them in errors)."""
    out = []
    for p in list_parts(source)[table]:
        t = read_parquet(p)
        mask = None
        for k, v in key.items():
            m = pc.equal(t.column(k), v)
            mask = m if mask is None else pc.and_(mask, m)
        if mask is not None and pc.any(mask).as_py():
            out.append(str(p))
    return out


def check_keys(datas: Sequence[RunData], combined: dict[str, pa.Table]) -> None:
    """No duplicate primary key (schemas' KEYS) in any table over all runs being loaded.

    ``combined`` maps table -> rows of every changed run (one check per table, not per run).
    """
    for name, table in combined.items():
        key = find_duplicate(table, tschema.KEYS[name])
        if key is None:
            continue
        src = next(rd for rd in datas if rd.run_id == key["run_id"])
        where = src.source
        if src.kind == "runs":
            where = ", ".join(files_with_key(Path(src.source), name, key)) or src.source
        raise IngestError(f"{where}: duplicate key in {name}: {format_key(key)}")


def check_success_counts(marker: Path, counts: dict[str, int]) -> None:
    """If the ``_SUCCESS`` marker records row counts (the harness writer does), they must match."""
    try:
        info = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return  # an empty or free-form marker only says "finished"
    rows = info.get("rows") if isinstance(info, dict) else None
    if not isinstance(rows, dict):
        return
    for table, n in rows.items():
        if table in counts and isinstance(n, int) and n != counts[table]:
            raise IngestError(
                f"{marker}: the finished run recorded {n} {table} rows but its part files hold "
                f"{counts[table]}; a part file is missing or was changed"
            )


@dataclass(slots=True)
class RunFiles:
    """A run directory read and conformed to the schemas; not yet checked against the benchmark."""

    source: Path
    run_id: str
    content_sha256: str
    finished: bool
    benchmark_sha256: str
    #: table -> [(part file, conformed rows)]; None when the run is unchanged and was not read
    parts: dict[str, list[tuple[Path, pa.Table]]] | None
    benchmark: str = tschema.DEFAULT_BENCHMARK


def read_run_files(d: Path, partial: bool, loaded_hashes: dict[str, str]) -> RunFiles:
    """Read one run directory (needs no benchmark, so it can run while the benchmark loads).

    A run whose content matches the version in the warehouse (``loaded_hashes``) is not read.
    """
    d = d.resolve()
    finished = (d / SUCCESS).exists()
    if not finished and not partial:
        raise IngestError(
            f"{d}: run directory has no {SUCCESS} marker (the run did not finish); "
            f"pass --partial to load what it holds"
        )
    files = list_parts(d)
    if not files["runs"]:
        raise IngestError(f"{d}: no runs-*.parquet file in the run directory")
    if finished:
        missing = [t for t in tschema.REQUIRED_TABLES if not files[t]]
        if missing:
            raise IngestError(f"{d}: finished run has no {', '.join(t + '-*.parquet' for t in missing)} file")

    runs_parts = [(p, conform(read_parquet(p, tschema.RUNS.names), tschema.RUNS, str(p))) for p in files["runs"]]
    n_rows = sum(t.num_rows for _, t in runs_parts)
    if n_rows != 1:
        raise IngestError(f"{d}: runs table must have exactly one row, found {n_rows}")
    row = pa.concat_tables([t for _, t in runs_parts]).to_pylist()[0]
    sha = content_sha256(files, finished)
    out = RunFiles(d, row["run_id"], sha, finished, row["benchmark_sha256"], None, row["benchmark"])
    if loaded_hashes.get(out.run_id) == sha:
        return out
    out.parts = {"runs": runs_parts}
    for name, schema in tschema.RUN_TABLES.items():
        if name != "runs":
            out.parts[name] = [(p, conform(read_parquet(p, schema.names), schema, str(p))) for p in files[name]]
    return out


def validate_run(rf: RunFiles, checks: Checks) -> RunData:
    """Check a read run against the benchmark and the rules of docs/ingest.md; concatenate its parts."""
    if rf.parts is None:  # unchanged: validated when it was loaded
        return RunData("runs", str(rf.source), rf.run_id, rf.content_sha256, not rf.finished, rf.benchmark_sha256)
    check_benchmark(rf.run_id, rf.benchmark_sha256, checks, str(rf.parts["runs"][0][0]), rf.benchmark)
    tables: dict[str, pa.Table] = {}
    segments: dict[str, Segments] = {}
    for name, schema in tschema.RUN_TABLES.items():
        if name not in tschema.TABLES and not rf.parts[name]:
            continue  # an optional table the run does not have (scores)
        segments[name] = Segments()
        for p, t in rf.parts[name]:
            validate_table(name, t, rf.run_id, checks, str(p), rf.benchmark)
            segments[name].add(str(p), t.num_rows, "parquet")
        ts = [t for _, t in rf.parts[name]]
        tables[name] = pa.concat_tables(ts) if ts else schema.empty_table()
    rf.parts = None
    if rf.finished:
        check_success_counts(rf.source / SUCCESS, {k: v.num_rows for k, v in tables.items()})
    return RunData(
        "runs",
        str(rf.source),
        rf.run_id,
        rf.content_sha256,
        not rf.finished,
        rf.benchmark_sha256,
        tables,
        {k: v.num_rows for k, v in tables.items()},
        segments,
    )
