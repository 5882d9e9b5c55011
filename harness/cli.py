"""`agenthop-harness`: make and inspect benchmarks, run agents.

Thin click layer: each command lives beside the code it drives and is registered here.
User errors are ``AgentHopError`` subclasses, turned into exit code 2 with a one-line message.
"""

from __future__ import annotations

import click

from .benchmarks.agenthop.commands import describe_benchmark, make_benchmark
from .run_command import run


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agenthop-warehouse")
def main() -> None:
    """Make/inspect AgentHop benchmark releases and run agents over them."""


main.add_command(make_benchmark)
main.add_command(describe_benchmark)
main.add_command(run)
