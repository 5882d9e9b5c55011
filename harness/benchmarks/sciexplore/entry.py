"""SciExplore's registry entry: the hooks the core calls (harness/benchmarks/__init__.py).

Light on import: the harness's command line imports every entry, so the modules that need the BM25
library or the ingest sources are imported inside the hooks.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agenthop.harness.errors import AgentHopError
from agenthop.schemas import sciexplore as tables

from .. import Benchmark, Description, ImportOutcome, ReleaseTables, RunOptionDoc
from . import NAME, PARADIGMS, prompts
from .episode import SEARCH_MODES, TOOL_NAMES, episode, uses_native_search
from .paradigms import CAPS
from .release import TASKS_FILE, is_release, release_sha256

#: the keys of its release tables
KEYS: dict[str, tuple[str, ...]] = {
    "sciexplore_release": ("benchmark",),
    "sciexplore_tasks": ("task_id",),
    "sciexplore_t3_references": ("task_id", "slot", "ref_index"),
    "sciexplore_t4_cells": ("task_id", "row_index", "column"),
    "sciexplore_documents": ("doc_id",),
}


def load_release(root: Path | str, limit: int | None = None) -> Any:
    """The release for runs (every task; the runner takes the first ``limit`` itself)."""
    from .release import load_release as load

    return load(Path(root))


def release_tables(root: Path, content_sha256: str) -> ReleaseTables:
    from agenthop.ingest.sources.sciexplore_release import FORMAT_VERSION, read_release
    from agenthop.ingest.sources.sciexplore_release import release_tables as flatten

    rel = read_release(root)
    return ReleaseTables(benchmark=NAME, sha256=rel.sha256, content_sha256=content_sha256 or rel.sha256,
                         n_items=len(rel.tasks), tables=flatten(rel), version=FORMAT_VERSION, root=str(root))


def sample_parts(release: Any, task: Any) -> tuple[Any, ...]:
    """What an attempt of ``task`` needs: the task and the release (its corpus)."""
    return task, release


def generate(out_dir: Path, n_items: int, seed: int) -> Any:
    """A synthetic release; SciExplore's has the paper's fixed shape (``n_items`` is not used)."""
    from .generator import write_release

    return write_release(Path(out_dir), seed)


def default_caps(paradigm: str) -> dict[str, float]:
    """A paradigm's caps as run caps: turns, tool calls (one budget point each), tokens, wall time."""
    c = CAPS[paradigm]
    return {"budget": c.max_tool_calls, "max_turns": c.max_turns, "max_total_tokens": c.max_tokens,
            "max_sample_seconds": c.time_limit_s}


def run_options(paradigm: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """``--search corpus|native`` (default corpus; none for ``foundation``, which has no tools)."""
    unknown = sorted(set(given) - {"search"})
    if unknown:
        raise AgentHopError(f"SciExplore runs take no option {', '.join(unknown)} (only --search)")
    search = given.get("search")
    if paradigm == "foundation":
        if search not in (None, "corpus"):
            raise AgentHopError("--search native: the foundation paradigm has no tools (use search or deep_research)")
        return {}
    search = search or "corpus"
    if search not in SEARCH_MODES:
        raise AgentHopError(f"--search: {search!r} is not one of {', '.join(SEARCH_MODES)}")
    return {"search": search}


#: ``agenthop-harness run --search`` as its help describes it
RUN_OPTION_DOCS = {
    "search": RunOptionDoc(SEARCH_MODES, "the search tools, corpus (the offline corpus, default) or native (the "
                           "provider's own: backends responses, google, anthropic)"),
}


def run_columns(paradigm: str, options: Mapping[str, Any]) -> dict[str, Any]:
    return {"paradigm": paradigm}


def simulated_policy(spec: Mapping[str, Any] | None, *, where: str = "sim") -> Any:
    from .sim_loop import policy_from_spec

    return policy_from_spec(spec, where=where)


def simulated_agent(params: Any, ctx: Any, rng: Any) -> Any:
    from .sim_loop import SimSearcher

    return SimSearcher(params, ctx, rng)


def on_runs_loaded(con: Any, run_ids: list[str]) -> dict[str, int]:
    from agenthop.ingest.sources.sciexplore_runs import derive_from_runs

    return derive_from_runs(con, run_ids)


def load_imports(con: Any, inputs: Mapping[str, list[Path]], *, force: bool, release_loaded: bool) -> ImportOutcome:
    from agenthop.ingest.sources.sciexplore_ingest import load_imports as load

    return load(con, inputs, force=force, release_loaded=release_loaded)


def imported_runs(con: Any) -> set[str]:
    from agenthop.ingest.sources.sciexplore_runs import imported_run_ids

    return imported_run_ids(con)


def on_runs_deleted(con: Any, run_ids: list[str]) -> dict[str, int]:
    from agenthop.ingest.sources.sciexplore_runs import delete_runs

    return delete_runs(con, run_ids)


def describe(release: Any, limit: int | None) -> Description:
    """``describe-benchmark`` on a SciExplore release: its tasks, citations, tables and corpus."""
    from .describe import describe as stats, format_description, warnings

    d = stats(release, limit)
    return Description(d, format_description(d), tuple(warnings(release)))


def metric_defs(con: Any) -> list[dict[str, Any]]:
    from .metrics import metric_rows

    return metric_rows(con)


def item_inputs(con: Any) -> dict[str, tuple[str, list[str]]]:
    """Its loaded tasks as other tools see them (docs/interchange.md#sample-hash)."""
    from agenthop.ingest.sources.sciexplore_release import item_inputs as inputs

    return inputs(con)


def make_command() -> Any:
    from .commands import make_benchmark

    return make_benchmark


BENCHMARK = Benchmark(
    name=NAME,
    title="SciExplore: scientific information seeking, four task types, three paradigms",
    is_release=is_release,
    release_marker=TASKS_FILE,
    release_content_sha256=release_sha256,
    release_tables=release_tables,
    raw_tables=tables.RELEASE_TABLES,
    raw_keys=KEYS,
    extra_tables=tables.RUN_TABLES,
    item_ids_sql="SELECT task_id FROM raw.sciexplore_tasks",
    load_release=load_release,
    release_sha256=release_sha256,
    sample_parts=sample_parts,
    generate=generate,
    tool_names=TOOL_NAMES,
    prompts=prompts,
    # the simulated systems by archetype name (``--sim-archetype``, a panel's ``sim: {archetype: ...}``)
    policies={a.replace("-", "_"): a for a in ("mnemo-guess", "skim-search", "hunch-check", "delve-dr")},
    simulated_policy=simulated_policy,
    simulated_agent=simulated_agent,
    conditions=PARADIGMS,
    condition_kind="paradigms",
    episode=episode,
    make_command=make_command,
    describe=describe,
    default_caps=default_caps,
    run_options=run_options,
    run_option_docs=RUN_OPTION_DOCS,
    native_search=uses_native_search,
    run_columns=run_columns,
    on_runs_loaded=on_runs_loaded,
    import_kinds=("responses", "judgments"),
    load_imports=load_imports,
    imported_runs=imported_runs,
    on_runs_deleted=on_runs_deleted,
    item_inputs=item_inputs,
    item_hash_table=("sciexplore_tasks", "task_id"),
    metric_defs=metric_defs,
)
