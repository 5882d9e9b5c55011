"""`agenthop-harness make-benchmark --benchmark NAME ...`: hands the command line to that benchmark's own
``make-benchmark`` command (its registry entry's ``make_command``), so each benchmark keeps its options.

``make-benchmark --help`` shows every benchmark's options, one section per benchmark (from the registry);
``make-benchmark --benchmark NAME --help`` shows NAME's alone, with its examples."""

from __future__ import annotations

import click

from . import benchmarks
from .cli_examples import epilog
from .errors import AgentHopError
from agenthop.schemas.names import DEFAULT_BENCHMARK

HELP_FLAGS = ("-h", "--help")


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
    if any(a in HELP_FLAGS for a in args) and ctx.get_parameter_source("benchmark") is click.core.ParameterSource.DEFAULT:
        click.echo(grouped_help(ctx), nl=False)
        ctx.exit(0)
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


def grouped_help(ctx: click.Context) -> str:
    """The help of ``make-benchmark`` without ``--benchmark``: its usage, ``--benchmark``, then each
    benchmark's own options under a heading naming it (a benchmark that fails to load is named too)."""
    fmt = ctx.make_formatter()
    fmt.write_usage(ctx.command_path, "--benchmark NAME [OPTIONS]")
    fmt.write_paragraph()
    with fmt.indentation():
        fmt.write_text("Write a deterministic SYNTHETIC release of a benchmark. Each benchmark has options of "
                       f"its own, listed below; without --benchmark the release is {DEFAULT_BENCHMARK}'s. "
                       "--benchmark NAME --help shows one benchmark's options with examples.")
    with fmt.section("Options"):
        fmt.write_dl([("--benchmark NAME", f"Which benchmark's synthetic release to write: "
                                            f"{', '.join(_makers())} (default {DEFAULT_BENCHMARK})."),
                      ("-h, --help", "Show this message and exit.")])
    for name in _makers():
        bench = benchmarks.get(name)
        try:
            command = bench.make_command()  # type: ignore[misc]
        except AgentHopError as exc:
            fmt.write_paragraph()
            fmt.write_text(f"{name}: its options cannot be shown ({exc})")
            continue
        sub = click.Context(command, info_name=f"{ctx.info_name} --benchmark {name}", parent=ctx.parent)
        records = [r for p in command.get_params(sub) if (r := p.get_help_record(sub)) is not None
                   and not set(p.opts) & set(HELP_FLAGS)]
        with fmt.section(f"Options with --benchmark {name}"):
            fmt.write_dl(records)
    fmt.write_paragraph()
    with fmt.indentation():
        fmt.write_text(epilog("agenthop-harness make-benchmark"))
    return fmt.getvalue()
