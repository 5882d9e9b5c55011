"""`agenthop-harness make-benchmark --benchmark NAME ...`: hands the command line to that benchmark's own
``make-benchmark`` command (its registry entry's ``make_command``), so each benchmark keeps its options."""

from __future__ import annotations

import click

from . import benchmarks
from .errors import AgentHopError
from agenthop.schemas.trajectory import DEFAULT_BENCHMARK


def _makers() -> list[str]:
    return [b.name for b in benchmarks.available() if b.make_command is not None]


@click.command("make-benchmark", context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                                  "help_option_names": []}, add_help_option=False)
@click.option("--benchmark", "benchmark", default=DEFAULT_BENCHMARK, metavar="NAME",
              help=f"Which benchmark's synthetic release to write (default {DEFAULT_BENCHMARK}).")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def make_benchmark(ctx: click.Context, benchmark: str, args: tuple[str, ...]) -> None:
    """Write a deterministic SYNTHETIC release of a benchmark (its options: --benchmark NAME --help)."""
    if benchmark not in _makers():
        raise click.BadParameter(f"{benchmark!r} has no synthetic release; choose one of {', '.join(_makers())}",
                                 param_hint="--benchmark")
    try:
        command = benchmarks.get(benchmark).make_command()
    except AgentHopError as exc:
        raise click.ClickException(str(exc)) from None
    with command.make_context(f"{ctx.info_name} --benchmark {benchmark}", list(args), parent=ctx.parent,
                              help_option_names=["-h", "--help"]) as sub:
        command.invoke(sub)
