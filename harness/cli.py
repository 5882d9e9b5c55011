"""`agenthop-harness`: make and inspect benchmarks, run agents.

Thin click layer: each command lives beside the code it drives and is registered here.
User errors are ``AgentHopError`` subclasses, turned into exit code 2 with a one-line message.
"""

from __future__ import annotations

import click

from . import benchmarks
from .errors import AgentHopError
from .make_benchmark import make_benchmark
from .run_command import run


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agenthop-warehouse")
def main() -> None:
    """Make/inspect benchmark releases and run agents over them."""


def _add_benchmark_commands() -> None:
    """Every benchmark's own subcommands (its registry entry); one that cannot load says so."""
    for name in benchmarks.names():
        try:
            bench = benchmarks.get(name)
        except AgentHopError as exc:
            click.echo(f"warning: {exc}", err=True)
            continue
        for command in bench.commands() if bench.commands is not None else ():
            main.add_command(command)


_add_benchmark_commands()
main.add_command(make_benchmark)
main.add_command(run)
