"""AgentHop's registry entry: the hooks the core calls (harness/benchmarks/__init__.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agenthop.schemas import agenthop as tables
from agenthop.schemas.trajectory import CONDITIONS

from .. import Benchmark, Description, ReleaseTables
from . import prompts
from .episode import episode
from .loader import benchmark_sha256, load_release
from .policies.archetypes import ARCHETYPES, policy_from_spec
from .tools import TOOL_NAMES

NAME = "agenthop"

#: the first file of a release: its presence makes a directory an AgentHop release
QA_FILE = "qa/full.jsonl"


def is_release(root: Path) -> bool:
    return (root / QA_FILE).is_file()


def release_content_sha256(root: Path) -> str:
    from agenthop.ingest.sources.agenthop_release import release_content_sha256 as sha

    return sha(root)


def release_tables(root: Path, content_sha256: str) -> ReleaseTables:
    """The release parsed by the harness loader and flattened into the seven raw tables."""
    from agenthop.ingest.sources.agenthop_release import load_benchmark

    bt = load_benchmark(root, content_sha256)
    return ReleaseTables(
        benchmark=NAME,
        sha256=bt.benchmark_sha256,
        content_sha256=bt.content_sha256,
        n_items=bt.tables["items"].num_rows,
        tables=bt.tables,
        root=bt.root,
    )


def generate(out_dir: Path, n_items: int, seed: int) -> Any:
    """A synthetic release (the generator loads when one is written, not with the entry)."""
    from .generator import write_release

    return write_release(out_dir, n_items, seed)


def simulated_agent(params: Any, ctx: Any, rng: Any) -> Any:
    """The simulated agent of one attempt (its module loads when a simulated run starts)."""
    from .policies.agent import SimAgent

    return SimAgent(params, ctx, rng)


def sample_parts(release: Any, item: Any) -> tuple[Any, ...]:
    """What an attempt of ``item`` needs: its neighbourhood, the paper pool, its labels (simulated agents)."""
    return item, release.graphs[item.id], release.papers, release.labels.get(item.id, [])


#: its metric (``trajectories.score``, named so in ``item_metric_values``; docs/metrics.md#metric-catalogue)
CORRECT: dict[str, Any] = {
    "metric": "correct", "kind": "binary", "direction": "higher_is_better", "is_primary": True, "label": "correct",
    "description": "the final answer is the gold option (is_correct)", "min_value": 0.0, "max_value": 1.0,
}


def item_inputs(con: Any) -> dict[str, tuple[str, list[str]]]:
    """Its loaded items as other tools see them (docs/interchange.md#sample-hash)."""
    from agenthop.ingest.sources.agenthop_release import item_inputs as inputs

    return inputs(con)


def metric_defs(con: Any) -> list[dict[str, Any]]:
    """Its catalogue row when the warehouse holds AgentHop runs (harness, reference JSON, its Inspect task)."""
    n = con.execute("SELECT count(*) FROM raw.runs WHERE benchmark = ?", [NAME]).fetchall()[0][0]
    return [{"benchmark": NAME, "source": NAME, **CORRECT}] if n else []


def describe(release: Any, limit: int | None) -> Description:
    """``describe-benchmark`` on an AgentHop release (loaded with its first ``limit`` items)."""
    from .describe import describe as stats, format_description

    d = stats(release)
    return Description(d, format_description(d), tuple(release.warnings))


def make_command() -> Any:
    from .commands import make_benchmark

    return make_benchmark


BENCHMARK = Benchmark(
    name=NAME,
    title="AgentHop: four-option questions over a citation graph, seven tools, three caps",
    is_release=is_release,
    release_marker=QA_FILE,
    release_content_sha256=release_content_sha256,
    release_tables=release_tables,
    raw_tables=tables.TABLES,
    raw_keys=tables.KEYS,
    item_ids_sql="SELECT sample_id FROM raw.items",
    load_release=load_release,
    release_sha256=benchmark_sha256,
    sample_parts=sample_parts,
    generate=generate,
    tool_names=TOOL_NAMES,
    prompts=prompts,
    policies=ARCHETYPES,
    simulated_policy=policy_from_spec,
    simulated_agent=simulated_agent,
    conditions=CONDITIONS,
    condition_kind="ablation conditions",
    episode=episode,
    make_command=make_command,
    describe=describe,
    metric_defs=metric_defs,
    item_inputs=item_inputs,
    item_hash_table=("items", "sample_id"),
)
