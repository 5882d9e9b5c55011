"""The two optional input files of `paper`: external scores (--external) and item covariates (--covariates).

Both are CSV with a header row. Every problem is an AgentHopError naming the file, the line and the
problem, so the CLI exits with code 2 and one clear line.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

from agenthop.harness.errors import AgentHopError


#: The optional `mark` column of --external: the paper's footnote marks on a score.
SCORE_MARKS = {"": "", "*": "∗", "proxy": "∗", "†": "†", "dagger": "†", "context-managed": "†"}


@dataclass(frozen=True)
class ExternalScore:
    model: str
    benchmark: str
    score: float
    mark: str = ""  # "∗" (a proxy from a sibling checkpoint) or "†" (a context-managed variant)


#: the largest input file read (a covariate table of a million items fits easily)
MAX_INPUT_BYTES = 64 * 1024 * 1024


def _read_bounded(path: Path, what: str) -> str:
    """The file's text, read at most ``MAX_INPUT_BYTES`` (+1, to tell a larger file: /dev/zero too)."""
    with open(path, "rb") as fh:
        data = fh.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise AgentHopError(f"{what} {path}: larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB; "
                            "expected a small CSV file")
    return data.decode("utf-8-sig")


def _open_csv(path: Path, what: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    try:
        text = _read_bounded(path, what)
    except FileNotFoundError:
        raise AgentHopError(f"{what} {path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise AgentHopError(f"{what} {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise AgentHopError(f"{what} {path}: cannot read ({exc.strerror or exc})") from None
    try:
        rows = list(csv.reader(text.splitlines()))
    except csv.Error as exc:
        raise AgentHopError(f"{what} {path}: not valid CSV ({exc})") from None
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise AgentHopError(f"{what} {path}: empty file; expected a header row")
    header = [h.strip() for h in rows[0]]
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise AgentHopError(f"{what} {path}: the header names column(s) {', '.join(map(repr, dupes))} more than once")
    by_case: dict[str, list[str]] = {}
    for h in header:
        by_case.setdefault(h.casefold(), []).append(h)
    clashes = [names for names in by_case.values() if len(names) > 1]
    if clashes:
        pairs = "; ".join(" and ".join(map(repr, names)) for names in clashes)
        raise AgentHopError(f"{what} {path}: the header names columns that differ only in case ({pairs}); "
                            "column names must differ in more than case: rename or drop one")
    body = [(i + 2, r) for i, r in enumerate(rows[1:]) if any(cell.strip() for cell in r)]
    for line, r in body:
        if len(r) != len(header):
            raise AgentHopError(f"{what} {path}:{line}: {len(r)} fields, the header has {len(header)}")
    return header, body


def _number(text: str) -> float | None:
    try:
        x = float(text)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def read_external(path: Path) -> list[ExternalScore]:
    """model, benchmark, score per line (and optionally mark: * or proxy, † or context-managed); a
    (model, benchmark) pair at most once; scores numeric."""
    header, body = _open_csv(path, "--external")
    missing = [c for c in ("model", "benchmark", "score") if c not in header]
    if missing:
        raise AgentHopError(f"--external {path}: header lacks column(s) {', '.join(missing)} "
                            "(expected: model,benchmark,score)")
    im, ib, isc = header.index("model"), header.index("benchmark"), header.index("score")
    imark = header.index("mark") if "mark" in header else None
    out: list[ExternalScore] = []
    seen: set[tuple[str, str]] = set()
    for line, r in body:
        model, bench, raw = r[im].strip(), r[ib].strip(), r[isc].strip()
        if not model or not bench:
            raise AgentHopError(f"--external {path}:{line}: empty model or benchmark")
        score = _number(raw)
        if score is None:
            raise AgentHopError(f"--external {path}:{line}: score {raw!r} is not a number")
        if (model, bench) in seen:
            raise AgentHopError(f"--external {path}:{line}: model {model!r} has a second {bench!r} score")
        seen.add((model, bench))
        mark = r[imark].strip() if imark is not None else ""
        if mark not in SCORE_MARKS:
            raise AgentHopError(f"--external {path}:{line}: mark {mark!r} is not one of "
                                f"{', '.join(repr(m) for m in SCORE_MARKS if m)} (or empty)")
        out.append(ExternalScore(model, bench, score, SCORE_MARKS[mark]))
    return out


@dataclass(frozen=True)
class Covariates:
    """Item covariates: the numeric columns (all non-empty values numbers), per sample_id."""

    numeric: dict[str, dict[str, float]]  # column -> sample_id -> value
    skipped: list[str]  # non-numeric columns


def read_covariates(path: Path) -> Covariates:
    """sample_id, then any columns; a sample_id at most once. Empty cells are missing values."""
    header, body = _open_csv(path, "--covariates")
    if not header or header[0] != "sample_id":
        raise AgentHopError(f"--covariates {path}: the first column must be sample_id, got {header[0]!r}")
    if len(header) < 2:
        raise AgentHopError(f"--covariates {path}: no covariate columns after sample_id")
    seen: set[str] = set()
    for line, r in body:
        sid = r[0].strip()
        if not sid:
            raise AgentHopError(f"--covariates {path}:{line}: empty sample_id")
        if sid in seen:
            raise AgentHopError(f"--covariates {path}:{line}: sample_id {sid!r} appears twice")
        seen.add(sid)
    numeric: dict[str, dict[str, float]] = {}
    skipped: list[str] = []
    for j, name in enumerate(header[1:], start=1):
        values: dict[str, float] = {}
        ok = True
        for _, r in body:
            cell = r[j].strip()
            if not cell:
                continue
            x = _number(cell)
            if x is None:
                ok = False
                break
            values[r[0].strip()] = x
        if ok and values:
            numeric[name] = values
        else:
            skipped.append(name)
    return Covariates(numeric, skipped)
