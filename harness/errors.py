"""The project's user-facing error type, shared by every CLI (harness, ingest, reports)."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class AgentHopError(Exception):
    """An error the user can act on. The message names the file/field/problem; CLIs exit 2."""

    exit_code = 2


def cli_errors(fn: F) -> F:
    """Decorator for click commands: AgentHopError -> one red line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AgentHopError as exc:
            click.secho(f"error: {exc}", fg="red", err=True)
            sys.exit(exc.exit_code)

    return wrapper  # type: ignore[return-value]
