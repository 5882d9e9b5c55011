"""`agenthop-harness`: make and inspect benchmarks, run agents.

Thin click layer: each command lives beside the code it drives and is registered here.
User errors are ``AgentHopError`` subclasses, turned into exit code 2 with a one-line message.

Importing this module is cheap: the commands (and the libraries they need) load when the command
line is parsed, inside :meth:`_Harness.main`, so a Ctrl-C during those start-up imports, or before
a command installs its own handler (``run`` does, docs/running.md), ends with one line and exit code
130, never a traceback or click's ``Aborted!``.
"""

from __future__ import annotations

import errno
import sys
from typing import Any

import click

EXIT_INTERRUPTED = 130
INTERRUPTED = "interrupted (Ctrl-C)"


#: the core's commands: name -> (module, attribute), imported when the command is run
_CORE: dict[str, tuple[str, str]] = {
    "make-benchmark": (".make_benchmark", "make_benchmark"),
    "describe-benchmark": (".describe_benchmark", "describe_benchmark"),
    "run": (".run_command", "run"),
}


class _Harness(click.Group):
    """The command group: subcommands registered on first use, Ctrl-C turned into exit code 130."""

    _loading = False

    @property  # type: ignore[override]
    def commands(self) -> dict[str, click.Command]:
        if not self._loading:
            self._loading = True
            self._load()
        return self._commands

    @commands.setter
    def commands(self, value: dict[str, click.Command]) -> None:
        self._commands = value

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A core command loads its own module only; the benchmarks' registry entries (and their
        libraries) load when a command needs them, so ``run`` on one benchmark imports no other."""
        if cmd_name in _CORE and not self._loading:
            import importlib

            module, attr = _CORE[cmd_name]
            return getattr(importlib.import_module(module, __package__), attr)
        return super().get_command(ctx, cmd_name)

    def _load(self) -> None:
        import importlib

        from . import benchmarks
        from .errors import AgentHopError

        for name in benchmarks.names():  # every benchmark's own subcommands (its registry entry)
            try:
                bench = benchmarks.get(name)
            except AgentHopError as exc:
                click.echo(f"warning: {exc}", err=True)
                continue
            for command in bench.commands() if bench.commands is not None else ():
                self.add_command(command)
        for module, attr in _CORE.values():
            self.add_command(getattr(importlib.import_module(module, __package__), attr))

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except (KeyboardInterrupt, click.exceptions.Abort):
            # click has already ended the ^C line on stderr when the interrupt reached it
            click.echo(INTERRUPTED, err=True)
            sys.exit(EXIT_INTERRUPTED)
        except click.exceptions.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except OSError as exc:  # as click does: output piped into a closed reader (| head)
            if exc.errno != errno.EPIPE:
                raise
            sys.stdout = click.utils.PacifyFlushWrapper(sys.stdout)  # type: ignore[assignment]
            sys.stderr = click.utils.PacifyFlushWrapper(sys.stderr)  # type: ignore[assignment]
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=_Harness, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agenthop-warehouse")
def main() -> None:
    """Make/inspect benchmark releases and run agents over them."""


if __name__ == "__main__":
    main()
