"""Strict JSON for the interchange importers (EEE, ATIF): duplicated keys, NaN and Infinity are errors,
and every error is one line naming the file, the line and the field (docs/interchange.md#bad-input)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from agenthop.ingest.conform import IngestError


class _Duplicate(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Duplicate(k)
        out[k] = v
    return out


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _key_line(text: str, key: str, nth: int = -1) -> int:
    """The line of the ``nth`` occurrence of ``"key":`` in ``text`` (1 when it is not found)."""
    hits = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
    if not hits:
        return 1
    return text.count("\n", 0, hits[nth]) + 1


def loads(text: str, path: Path | str, line: int | None = None) -> Any:
    """``text`` parsed strictly; IngestError ``<path>: line N: ...`` otherwise. ``line``: the line ``text``
    is (a JSONL line), else line numbers are found in ``text``."""
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except _Duplicate as exc:
        at = line if line is not None else _key_line(text, exc.key)
        raise IngestError(f"{path}: line {at}: field {exc.key!r}: duplicated key") from None
    except json.JSONDecodeError as exc:
        at = line if line is not None else exc.lineno
        raise IngestError(f"{path}: line {at}: not valid JSON ({exc.msg})") from None
    except ValueError as exc:
        raise IngestError(f"{path}: line {line or 1}: {exc}") from None


def read_jsonl(path: Path) -> list[tuple[int, Any]]:
    """(line number, value) of every non-empty line."""
    out = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"{path}: cannot be read ({exc})") from None
    for n, raw in enumerate(text.splitlines(), 1):
        if raw.strip():
            out.append((n, loads(raw, path, n)))
    return out


def read_json(path: Path) -> tuple[Any, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"{path}: cannot be read ({exc})") from None
    return loads(text, path), text


def field_path(parts: Iterable[Any]) -> str:
    """``a.b[0].c`` for the path parts of a schema error."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(the record)"


def line_of(text: str | None, parts: list[Any], line: int | None) -> int:
    """The line a schema error is on: the JSONL line, else the line of its innermost named field."""
    if line is not None:
        return line
    names = [p for p in parts if isinstance(p, str)]
    return _key_line(text or "", names[-1], 0) if names else 1


def discover(paths: Sequence[Path], option: str, not_given: str = "") -> list[Path]:
    """The ``.json`` files below ``paths`` (a file itself, or every ``*.json`` of a folder, recursively),
    sorted and without repeats; a file named directly whose name ends in ``not_given`` is refused."""
    out: dict[Path, None] = {}
    for p in paths:
        p = Path(p)
        if p.is_dir():
            for f in sorted(p.rglob("*.json")):
                out.setdefault(f.resolve(), None)
        elif p.is_file():
            if not_given and p.name.endswith(not_given):
                raise IngestError(f"{option} {p}: an instance file; give its aggregate record or the folder")
            out.setdefault(p.resolve(), None)
        else:
            raise IngestError(f"{option} {p}: no such file or directory")
    return list(out)
