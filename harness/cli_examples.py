"""Examples shown by each subcommand's --help, one block per command, all runnable on the demo.

They use the paths `make demo` uses (out/demo/, warehouse/agenthop.duckdb) and the demo panel's model
names; tests/test_cli_examples.py runs every line on a small demo warehouse, substituting the paths.
The core's ``agenthop-harness run`` names no benchmark's archetypes or conditions: its lines come from
the registry entry of the demo's benchmark (harness/run_help.py ``run_examples``), built on first use
so that importing this module (every CLI does, at start-up) loads no benchmark.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import click

#: the command whose examples come from the benchmark registry
RUN = "agenthop-harness run"

_FIXED: dict[str, tuple[str, ...]] = {
    "agenthop-harness make-benchmark": (
        "agenthop-harness make-benchmark --out out/demo/benchmark --items 1011 --seed 0",
        "agenthop-harness make-benchmark --out out/small/benchmark --items 40 --seed 1",
    ),
    "agenthop-harness describe-benchmark": (
        "agenthop-harness describe-benchmark out/demo/benchmark",
        "agenthop-harness describe-benchmark out/demo/benchmark --json --limit 100",
    ),
    "agenthop-ingest": (
        "agenthop-ingest --db warehouse/agenthop.duckdb --benchmark out/demo/benchmark --runs out/demo/runs",
        "agenthop-ingest --db warehouse/agenthop.duckdb --runs out/demo/runs --quiet",
        "agenthop-ingest --db warehouse/agenthop.duckdb --primary-metric correct --metric-direction correct=higher",
        "agenthop-ingest --db warehouse/agenthop.duckdb --reindex",
    ),
    "agenthop-report compare": (
        "agenthop-report compare --models early-committer,verifier --out out/demo/compare.html",
        "agenthop-report compare --models verifier,balanced --condition full --out out/demo/verifier-vs-balanced.html",
    ),
    "agenthop-report leaderboard": (
        "agenthop-report leaderboard --out out/demo/leaderboard.html",
        "agenthop-report leaderboard --condition closed_book --db warehouse/agenthop.duckdb --out out/demo/leaderboard-closed_book.html",
    ),
    "agenthop-report reruns": (
        "agenthop-report reruns --model verifier --out out/demo/reruns-verifier.html",
    ),
    "agenthop-report item": (
        "agenthop-report item st_0001 --models early-committer,verifier --out out/demo/item-st_0001.html",
        "agenthop-report item mt_0001 --models verifier --condition full --out out/demo/item-mt_0001.html",
    ),
    "agenthop-report paper": (
        "agenthop-report paper --out out/demo/paper",
        "agenthop-report paper --condition full --single-file --out out/demo/paper-one",
    ),
    "agenthop-report sciexplore": (
        "agenthop-report sciexplore --out out/demo/sciexplore/report",
        "agenthop-report sciexplore --pair sounder-dr,fathom-dr --single-file --out out/demo/sciexplore/one",
    ),
    "agenthop-report behaviours": (
        "agenthop-report behaviours --out out/demo/behaviours.html",
        "agenthop-report behaviours --adjust bh --single-file --out out/demo/behaviours-one.html",
    ),
    "agenthop-report search": (
        'agenthop-report search "not found" --role tool --limit 20',
        "agenthop-report search --status ok --epoch 1 --limit 10 --format csv",
        "agenthop-report search --repeat 3 --format json --out out/demo/repeats.json",
        "agenthop-report search --repeat 2 --limit 20 --format html --out out/demo/search.html",
    ),
    "agenthop-report export": (
        "agenthop-report export --format eee --out out/demo/eee",
        "agenthop-report export --format atif --out out/demo/atif",
    ),
    "agenthop-report model": (
        "agenthop-report model verifier --out out/demo/model-verifier.html",
    ),
    "agenthop-report site": (
        "agenthop-report site --out out/demo/site",
        "agenthop-report site --out out/demo/site-small --max-pairs 2 --quiet",
    ),
    "agenthop-report sql": (
        'agenthop-report sql "SELECT model, condition, accuracy, paper_recall FROM model_summary ORDER BY accuracy DESC"',
        'agenthop-report sql "SELECT cell, accuracy, wilson_lo, wilson_hi FROM cell_accuracy" --format csv',
        "agenthop-report sql \"SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'\" --format json",
    ),
}


class _Examples(Mapping[str, tuple[str, ...]]):
    """Every subcommand's example lines; ``run``'s are built from the registry when first asked for."""

    def __getitem__(self, command: str) -> tuple[str, ...]:
        if command == RUN:
            from agenthop.schemas.trajectory import DEFAULT_BENCHMARK

            from . import benchmarks
            from .run_help import run_examples

            return run_examples(benchmarks.get(DEFAULT_BENCHMARK))
        return _FIXED[command]

    def __iter__(self) -> Iterator[str]:
        yield from _FIXED
        yield RUN

    def __len__(self) -> int:
        return len(_FIXED) + 1


EXAMPLES: Mapping[str, tuple[str, ...]] = _Examples()


def epilog(command: str) -> str:
    """The --help epilog of ``command`` (e.g. ``"agenthop-report sql"``): its examples, unwrapped."""
    lines = "\n".join(f"  {line}" for line in EXAMPLES[command])
    return f"\b\nExamples (on the demo, after `make demo`):\n{lines}\n"


class ExamplesCommand(click.Command):
    """A command whose --help epilog (:func:`epilog` of ``examples``) is built when the help is shown: the
    examples of ``run`` come from the registry, which the command should not import before it runs."""

    def __init__(self, *args: Any, examples: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.examples = examples

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.epilog = epilog(self.examples)
        super().format_epilog(ctx, formatter)


__all__ = ["EXAMPLES", "ExamplesCommand", "epilog"]
