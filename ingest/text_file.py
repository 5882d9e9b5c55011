"""Reading a small UTF-8 input file (a scanner file, a labels file, a reply cache) with one-line errors."""

from __future__ import annotations

from pathlib import Path

from agenthop.harness.errors import AgentHopError


def read_utf8(path: Path, what: str, error: type[AgentHopError] = AgentHopError, hint: str = "") -> str:
    """The text of ``path``; a file that is not UTF-8 or cannot be read is ``error`` naming the file and ``what`` it
    is (``hint``: what to do, appended after a semicolon)."""
    tail = f"; {hint}" if hint else ""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: {what} is not UTF-8 ({exc.reason} at byte {exc.start}){tail}") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror or exc}){tail}") from None
