"""The benchmark registry: one entry per benchmark, the only place the core learns benchmarks' names.

Each benchmark lives in its own folder, ``harness/benchmarks/<name>/``, whose package defines
``BENCHMARK``, a :class:`Benchmark`: what the harness and ingest need from it (release detection
and loading, the generator, its tools, prompts and simulated policies, its raw tables). The core
(agent loop, writer, runner, ingest) calls these hooks and never imports a benchmark's modules.

Adding a benchmark (docs/architecture.md#adding-a-benchmark): write ``harness/benchmarks/<name>/``
with a ``BENCHMARK``, and add one line to :data:`ENTRIES`. Entries are imported on first use, so a
benchmark's dependencies are loaded only when it is used, and a benchmark that fails to import is
reported by name without hiding the others. Tests and plugins can :func:`register` a benchmark
object directly.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AgentHopError

if TYPE_CHECKING:  # the registry is imported by every command: pyarrow loads when a benchmark needs it
    import pyarrow as pa

#: benchmark name -> the package that defines its ``BENCHMARK`` (one line per benchmark).
ENTRIES: dict[str, str] = {
    "agenthop": "agenthop.harness.benchmarks.agenthop",
    "sciexplore": "agenthop.harness.benchmarks.sciexplore",
}


@dataclass(frozen=True, slots=True)
class ReleaseTables:
    """A release flattened for the warehouse: its hash, its items' ids and its raw tables."""

    benchmark: str
    #: the hash runs carry in ``runs.benchmark_sha256`` (checked at ingest)
    sha256: str
    #: SHA-256 over the release files' bytes: an identical release is not loaded again
    content_sha256: str
    n_items: int
    #: raw table name -> rows (conformed to the benchmark's ``raw_tables`` schemas)
    tables: dict[str, pa.Table]
    version: str | None = None
    root: str = ""

    def counts(self) -> dict[str, int]:
        return {k: v.num_rows for k, v in self.tables.items()}


@dataclass(frozen=True, slots=True)
class RunOptionDoc:
    """One of a benchmark's own run options as ``agenthop-harness run --help`` shows it: the values
    it takes and one phrase saying what it sets (e.g. ``"the search tools: corpus, the offline corpus
    (default), or native, ..."``)."""

    values: tuple[str, ...]
    help: str


@dataclass(frozen=True, slots=True)
class Description:
    """What ``agenthop-harness describe-benchmark`` prints for a release: its statistics (``--json``),
    the same as aligned text, and warnings about the release (shown on stderr)."""

    stats: dict[str, Any]
    text: str
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Benchmark:
    """What the core needs from a benchmark. Hooks receive plain paths and return plain objects."""

    #: the name in every layer: ``runs.benchmark``, the folders, the marts' prefix
    name: str
    #: one line for listings and errors
    title: str
    #: is this directory a release of this benchmark? (cheap: looks for its files)
    is_release: Callable[[Path], bool]
    #: the file a release of it must have (named when a directory is not a release)
    release_marker: str
    #: SHA-256 over the release files (its identity for ingest; cheap, no parsing)
    release_content_sha256: Callable[[Path], str]
    #: the release flattened into its raw tables (``agenthop-ingest --benchmark``)
    release_tables: Callable[[Path, str], ReleaseTables]
    #: the raw tables a release fills, in load order (warehouse schema ``raw``; names are global:
    #: a new benchmark prefixes them with its name)
    raw_tables: Mapping[str, pa.Schema]
    #: primary key per raw table
    raw_keys: Mapping[str, tuple[str, ...]]
    #: a query of the loaded release's item ids (runs' sample ids are checked against it)
    item_ids_sql: str
    #: the release as the harness uses it: ``load_release(root, limit=None)``, an object with ``root``,
    #: ``items`` (each with an ``id``), ``benchmark_sha256`` (the hash runs carry) and ``benchmark``
    load_release: Callable[..., Any] | None = None
    #: the hash runs carry, without loading the release: ``release_sha256(root)``
    release_sha256: Callable[[Path], str] | None = None
    #: the parts of one sample the ``episode`` hook takes: ``sample_parts(release, item)``
    sample_parts: Callable[[Any, Any], tuple[Any, ...]] | None = None
    #: write a synthetic release: ``generate(out_dir, n_items, seed)``
    generate: Callable[[Path, int, int], Any] | None = None
    #: names of the tools its agents call (what the sandbox executes)
    tool_names: tuple[str, ...] = ()
    #: the agent-visible texts (system prompt, tool schemas, nudges) for a condition
    prompts: Any = None
    #: named simulated policies (archetype name -> its parameters)
    policies: Mapping[str, Any] = field(default_factory=dict)
    #: a panel's ``sim:`` block -> policy parameters: ``simulated_policy(spec, where=...)``
    simulated_policy: Callable[..., Any] | None = None
    #: the simulated agent of one attempt: ``simulated_agent(params, ctx, rng)`` (harness/backends/sim.py)
    simulated_agent: Callable[..., Any] | None = None
    #: ablation conditions it supports (the first is the default)
    conditions: tuple[str, ...] = ("full",)
    #: what its conditions are, a plural noun for help texts (``"ablation conditions"``); benchmarks
    #: whose conditions are ``"paradigms"`` are the ones ``agenthop-harness run --paradigm`` names
    condition_kind: str = "conditions"
    #: its ``agenthop-harness`` subcommands (click commands, e.g. a release generator); names are
    #: global: a new benchmark prefixes them with its name (AgentHop's predate the rule)
    commands: Callable[[], Sequence[Any]] | None = None
    #: one attempt's benchmark side for the agent loop (harness/episode.py):
    #: ``episode(*sample_parts, condition=, caps=, seed=, attempt=)``; None for benchmarks whose runs
    #: are imported, not played by the harness
    episode: Callable[..., Any] | None = None
    #: statistics of a release loaded with ``load_release(root, limit=)`` for ``describe-benchmark``:
    #: ``describe(release, limit) -> Description`` (``limit``: only the first N items)
    describe: Callable[[Any, int | None], Description] | None = None
    #: its ``make-benchmark`` command (a click command with its own options); ``agenthop-harness
    #: make-benchmark --benchmark NAME ...`` hands it the rest of the command line
    make_command: Callable[[], Any] | None = None
    #: the caps a run of a condition gets unless the command line sets them: ``default_caps(condition)``
    #: -> a mapping of ``budget``, ``max_turns``, ``max_total_tokens``, ``max_sample_seconds``
    default_caps: Callable[[str], Mapping[str, float]] | None = None
    #: the run options of its own (``agenthop-harness run --search ...``) checked for a condition and
    #: completed with their defaults: ``run_options(condition, given) -> dict`` (part of the run identity)
    run_options: Callable[[str, Mapping[str, Any]], dict[str, Any]] | None = None
    #: those options as ``agenthop-harness run --help`` describes them: option -> :class:`RunOptionDoc`
    #: (the command has a flag for each, e.g. ``--search``; its values are the union over benchmarks)
    run_option_docs: Mapping[str, RunOptionDoc] = field(default_factory=dict)
    #: whether a run of a condition with its (completed) options has the provider search on its own
    #: side (``SampleContext.native_search``): ``native_search(condition, options) -> bool``; checked
    #: against the backend before a run starts (None: never)
    native_search: Callable[[str, Mapping[str, Any]], bool] | None = None
    #: columns of its own in a run's ``runs`` row: ``run_columns(condition, options) -> dict``
    run_columns: Callable[[str, Mapping[str, Any]], dict[str, Any]] | None = None
    #: called by ingest inside its transaction after the runs ``run_ids`` of this benchmark were
    #: written: ``on_runs_loaded(con, run_ids) -> {table: rows}`` (its own tables derived from them)
    on_runs_loaded: Callable[[Any, list[str]], Mapping[str, int]] | None = None
    #: the ingest inputs of its own (e.g. ``responses``, ``judgments`` files), loaded by ``load_imports``
    import_kinds: tuple[str, ...] = ()
    #: inside ingest's transaction, after its release and runs: ``load_imports(con, inputs, force=,
    #: release_loaded=) -> ImportOutcome`` (``inputs``: kind -> paths, possibly empty when only its
    #: release was loaded)
    load_imports: Callable[..., Any] | None = None
    #: the ids of its runs that are not in ``raw.runs`` (imported ones, e.g. from responses files), so
    #: ``agenthop-ingest --delete-run`` knows them: ``imported_runs(con) -> set[str]``
    imported_runs: Callable[[Any], set[str]] | None = None
    #: inside ``--delete-run``'s transaction, for the runs being deleted (of any benchmark): delete the
    #: rows of its own tables that belong to them, ``on_runs_deleted(con, run_ids) -> {table: rows}``
    on_runs_deleted: Callable[[Any, list[str]], Mapping[str, int]] | None = None
    #: raw tables of its own besides its release's, filled by its hooks per run or per import
    #: (``on_runs_loaded``, ``load_imports``) and created (empty) with the warehouse layout so that
    #: dbt always finds them; names are global, as for ``raw_tables``
    extra_tables: Mapping[str, pa.Schema] = field(default_factory=dict)
    #: its rows of the metric catalogue (``raw.metric_defs``, docs/metrics.md#metric-catalogue) for the
    #: metrics its loaded runs carry: ``metric_defs(con) -> [row, ...]`` (none without runs); called by
    #: ingest inside its transaction, after the runs and imports were written
    metric_defs: Callable[[Any], list[dict[str, Any]]] | None = None
    #: its loaded items as other tools see them (docs/interchange.md#sample-hash): ``item_inputs(con)`` ->
    #: ``{sample_id: (input text, [reference, ...])}``, what ``sample_hash`` hashes and an export writes
    item_inputs: Callable[[Any], Mapping[str, tuple[str, list[str]]]] | None = None
    #: the raw table and id column its items' ``sample_hash`` is in (filled from ``item_inputs`` when a
    #: warehouse of an earlier version gains the column)
    item_hash_table: tuple[str, str] | None = None


@dataclass(slots=True)
class ImportOutcome:
    """What a benchmark's ``load_imports`` did: a summary line, rows per table and ingest-log lines
    ``(kind, source, lines, action)``."""

    summary: str = ""
    rows: dict[str, int] = field(default_factory=dict)
    log: list[tuple[str, str, int, str]] = field(default_factory=list)


_LOADED: dict[str, Benchmark] = {}


def names() -> list[str]:
    """Every benchmark the registry knows (entries and registered objects), sorted."""
    return sorted(set(ENTRIES) | set(_LOADED))


def get(name: str) -> Benchmark:
    """The benchmark called ``name`` (imported on first use); an error lists the known names."""
    if name in _LOADED:
        return _LOADED[name]
    module = ENTRIES.get(name)
    if module is None:
        raise AgentHopError(f"unknown benchmark {name!r}; known benchmarks: {', '.join(names())}")
    try:
        bench = importlib.import_module(module).BENCHMARK
    except (ImportError, AttributeError) as exc:
        raise AgentHopError(f"benchmark {name!r} cannot be loaded from {module}: {exc}") from None
    if not isinstance(bench, Benchmark) or bench.name != name:
        raise AgentHopError(f"{module}.BENCHMARK is not the Benchmark named {name!r}")
    _LOADED[name] = bench
    return bench


def register(bench: Benchmark) -> Benchmark:
    """Add a benchmark object (tests, plugins); a name already known is an error."""
    if bench.name in names():
        raise AgentHopError(f"benchmark {bench.name!r} is already registered")
    _LOADED[bench.name] = bench
    return bench


def unregister(name: str) -> None:
    """Forget a benchmark added with :func:`register` (entries stay)."""
    if name in ENTRIES:
        raise AgentHopError(f"benchmark {name!r} is a registry entry and cannot be unregistered")
    _LOADED.pop(name, None)


def available() -> list[Benchmark]:
    """Every benchmark that loads (one that fails to import is left out, see :func:`get`)."""
    out = []
    for name in names():
        try:
            out.append(get(name))
        except AgentHopError:
            continue
    return out


def detect(root: Path) -> Benchmark:
    """The benchmark whose release ``root`` is; an error names the directory and what was looked for."""
    found = [b for b in available() if b.is_release(root)]
    if len(found) == 1:
        return found[0]
    if not found:
        wanted = "; ".join(f"{b.name}: {b.release_marker} is missing" for b in available())
        raise AgentHopError(f"{root}: not a benchmark release ({wanted})")
    raise AgentHopError(f"{root}: looks like a release of several benchmarks: {', '.join(b.name for b in found)}")


def of_release(release: Any) -> Benchmark:
    """The benchmark a loaded release belongs to (its ``benchmark`` attribute)."""
    return get(getattr(release, "benchmark", None) or "agenthop")


def load(root: Path | str, limit: int | None = None) -> Any:
    """Load the release at ``root`` with the loader of the benchmark it belongs to."""
    bench = detect(Path(root))
    if bench.load_release is None:
        raise AgentHopError(f"{root}: benchmark {bench.name!r} has no harness loader (its runs are imported)")
    return bench.load_release(root, limit=limit)


def release_sha256(root: Path | str) -> str:
    """The hash runs on the release at ``root`` carry (no parsing)."""
    bench = detect(Path(root))
    if bench.release_sha256 is None:
        raise AgentHopError(f"{root}: benchmark {bench.name!r} has no harness loader (its runs are imported)")
    return bench.release_sha256(Path(root))


def importer(kind: str) -> Benchmark:
    """The benchmark that loads ingest inputs of ``kind`` (``import_kinds``)."""
    found = [b for b in available() if kind in b.import_kinds]
    if len(found) != 1:
        raise AgentHopError(f"no single benchmark loads {kind!r} inputs (found {len(found)})")
    return found[0]


def _tables(which: Callable[[Benchmark], Mapping[str, pa.Schema]]) -> dict[str, pa.Schema]:
    """``which`` tables of every benchmark; a table declared twice (by two benchmarks, or as both a
    release table and an extra table) is an error."""
    seen: dict[str, str] = {}
    for bench in available():
        for table in [*bench.raw_tables, *bench.extra_tables]:
            if table in seen:
                raise AgentHopError(f"raw table {table!r} is declared twice (benchmarks {seen[table]} and "
                                    f"{bench.name})")
            seen[table] = bench.name
    return {table: schema for bench in available() for table, schema in which(bench).items()}


def raw_tables() -> dict[str, pa.Schema]:
    """Every benchmark's release tables (names are global; a clash between two benchmarks is an error)."""
    return _tables(lambda b: b.raw_tables)


def extra_tables() -> dict[str, pa.Schema]:
    """Every benchmark's extra raw tables (``Benchmark.extra_tables``), in registry order."""
    return _tables(lambda b: b.extra_tables)
