"""The SciExplore release format and its loader (docs/sciexplore.md#release-format).

A release is a directory with ``tasks.jsonl`` (one task per line) and, for offline runs,
``corpus/documents.jsonl`` (one document per line). Every error names the file, the line and
the field.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenthop.harness.errors import AgentHopError

from . import TASK_TYPES

TASKS_FILE = "tasks.jsonl"
CORPUS_FILE = "corpus/documents.jsonl"
DOCUMENT_KINDS = ("paper", "record", "page")
HOPS_RANGE = (2, 6)
SLOT_RE = re.compile(r"\[CITE_(\d+)\]")
#: a line nesting lists and objects deeper than this is refused (the formats nest a few levels)
MAX_JSON_DEPTH = 64
#: the largest integer a field of the formats may hold (a 64-bit integer column stores any of them)
MAX_JSON_INT = 2**63 - 1
#: the range of a year (the warehouse stores years as 32-bit integers)
YEAR_RANGE = (-(2**31), 2**31 - 1)
#: a ``\\uD800``..``\\uDFFF`` escape: the line may hold a lone surrogate, which is not text
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class ReleaseError(AgentHopError):
    """A SciExplore release that does not follow the format; the message names file, line and field."""


@dataclass(frozen=True, slots=True)
class Reference:
    title: str
    year: int | None
    authors: tuple[str, ...]
    venue: str | None
    doi: str | None


@dataclass(frozen=True, slots=True)
class CitationGroup:
    slot: str
    references: tuple[Reference, ...]


@dataclass(frozen=True, slots=True)
class Task:
    """One task. Fields that a type does not use stay at their empty default."""

    id: str
    type: str
    domain: str
    question: str
    answer: str | None = None  # T1, T2
    aliases: tuple[str, ...] = ()  # T1, T2
    hops: int | None = None  # T1
    databases: tuple[str, ...] = ()  # T1
    year: int | None = None  # T2
    paragraph: str | None = None  # T3
    groups: tuple[CitationGroup, ...] = ()  # T3
    columns: tuple[str, ...] = ()  # T4
    primary_key: str | None = None  # T4
    rows: tuple[dict[str, str], ...] = ()  # T4


@dataclass(frozen=True, slots=True)
class Document:
    id: str
    kind: str
    database: str | None
    title: str
    text: str
    url: str
    year: int | None


@dataclass(slots=True)
class Release:
    root: Path
    tasks: list[Task]
    documents: list[Document]
    #: SHA-256 over tasks.jsonl and corpus/documents.jsonl (the identity runs refer to)
    sha256: str
    by_id: dict[str, Task] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {t.id: t for t in self.tasks}

    # the names the harness's runner uses for every benchmark's release (harness/benchmarks)
    @property
    def items(self) -> list[Task]:
        return self.tasks

    @property
    def benchmark_sha256(self) -> str:
        return self.sha256

    @property
    def benchmark(self) -> str:
        return "sciexplore"


def is_release(path: Path) -> bool:
    """A directory is a SciExplore release when it holds tasks.jsonl."""
    return (Path(path) / TASKS_FILE).is_file()


def release_sha256(root: Path) -> str:
    h = hashlib.sha256()
    for rel in (TASKS_FILE, CORPUS_FILE):
        p = Path(root) / rel
        h.update(rel.encode() + b"\0")
        if p.is_file():
            with p.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
        h.update(b"\0")
    return h.hexdigest()


class Where:
    """File and line of the object being checked, for error messages."""

    def __init__(self, path: Path, line: int) -> None:
        self.path, self.line = path, line

    def fail(self, fld: str, problem: str) -> ReleaseError:
        shown = fld if len(fld) <= 80 else fld[:77] + "..."
        return ReleaseError(f"{self.path}:{self.line}: field {shown!r}: {problem}")

    def get(self, obj: dict, fld: str, kind: type | tuple[type, ...], *, nullable: bool = False,
            prefix: str = "") -> Any:
        name = prefix + fld
        if fld not in obj:
            if nullable:
                return None
            raise self.fail(name, "missing")
        value = obj[fld]
        if value is None and nullable:
            return None
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.fail(name, f"expected {_kind_name(kind)}, got {value!r}")
        if not isinstance(value, kind):
            raise self.fail(name, f"expected {_kind_name(kind)}, got {type(value).__name__} {value!r}"[:200])
        return value

    def integer(self, obj: dict, fld: str, low: int, high: int, *, nullable: bool = False,
                prefix: str = "") -> int | None:
        """An integer from ``low`` to ``high`` (both included)."""
        value = self.get(obj, fld, int, nullable=nullable, prefix=prefix)
        if value is not None and not low <= value <= high:
            raise self.fail(prefix + fld, f"must be between {low} and {high}, got {value}")
        return value

    def text(self, obj: dict, fld: str, *, nullable: bool = False, prefix: str = "") -> str | None:
        value = self.get(obj, fld, str, nullable=nullable, prefix=prefix)
        if value is not None and not nullable and not value.strip():
            raise self.fail(prefix + fld, "empty")
        return value

    def texts(self, obj: dict, fld: str, *, prefix: str = "") -> tuple[str, ...]:
        value = self.get(obj, fld, list, prefix=prefix)
        for i, v in enumerate(value):
            if not isinstance(v, str):
                raise self.fail(f"{prefix}{fld}[{i}]", f"expected string, got {v!r}")
        return tuple(value)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "string", int: "integer", list: "list", dict: "object"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def read_jsonl(path: Path):
    """Yield (line number, object) for each non-blank line; a bad line is a ReleaseError naming the field:
    not JSON, not an object, nested deeper than ``MAX_JSON_DEPTH``, a number that is not finite
    (``NaN``, ``Infinity``, ``1e400``), an integer beyond ``MAX_JSON_INT``, a lone surrogate in a string."""
    try:
        fh = path.open(encoding="utf-8")
    except OSError as exc:
        raise ReleaseError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with fh:
        try:
            for no, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ReleaseError(f"{path}:{no}: not valid JSON ({exc.msg} at column {exc.colno})") from None
                except ValueError:  # Python refuses integers of more than 4300 digits
                    raise ReleaseError(f"{path}:{no}: a number has more than 4300 digits") from None
                except RecursionError:
                    raise Where(path, no).fail(_deep_field(line), f"lists and objects nested more than "
                                               f"{MAX_JSON_DEPTH} levels deep") from None
                if not isinstance(obj, dict):
                    raise ReleaseError(f"{path}:{no}: expected a JSON object, got {type(obj).__name__}")
                bad = json_problem(obj, surrogates=_SURROGATE_ESCAPE.search(line) is not None)
                if bad is not None:
                    raise Where(path, no).fail(*bad)
                yield no, obj
        except UnicodeDecodeError as exc:
            raise ReleaseError(f"{path}: not UTF-8 ({exc.reason})") from None


_JSON_TOKEN = re.compile(r'("(?:[^"\\]|\\.)*")(\s*:)?|([\[\]{}])')


def _deep_field(line: str) -> str:
    """The top-level field under which ``line`` nests too deep for the parser (its keys and brackets
    read with a regular expression: the line did not parse)."""
    depth, key = 0, "(line)"
    for m in _JSON_TOKEN.finditer(line):
        if m.group(3) is None:
            if m.group(2) and depth == 1:
                key = m.group(1)[1:-1]
            continue
        depth += 1 if m.group(3) in "[{" else -1
        if depth > MAX_JSON_DEPTH:
            break
    return key


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def json_problem(obj: Any, *, surrogates: bool = True) -> tuple[str, str] | None:
    """(field, problem) of a value of a parsed JSON object that no format accepts, or None:
    nesting deeper than ``MAX_JSON_DEPTH``, a float that is not finite, an integer beyond
    ``MAX_JSON_INT``, a lone surrogate in a string or key (looked for only with ``surrogates``)."""
    stack: list[tuple[Any, str, int]] = [(obj, "", 0)]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth > MAX_JSON_DEPTH:
                return where, f"lists and objects nested more than {MAX_JSON_DEPTH} levels deep"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                if isinstance(key, str):
                    if surrogates and _has_lone_surrogate(key):
                        return where or "(key)", "a key holds a lone surrogate (an unpaired \\ud800-\\udfff escape), not text"
                    name = f"{where}.{key}" if where else key
                else:
                    name = f"{where}[{key}]"
                stack.append((item, name, depth + 1))
        elif isinstance(value, str):
            if surrogates and _has_lone_surrogate(value):
                return where, "holds a lone surrogate (an unpaired \\ud800-\\udfff escape), not text"
        elif isinstance(value, float):
            if not math.isfinite(value):
                return where, f"is {value}: a number must be finite (NaN, Infinity and overflowing numbers are refused)"
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_JSON_INT:
            return where, f"is an integer of {value.bit_length()} bits, beyond the largest allowed (2^63 - 1)"
    return None


def parse_reference(w: Where, obj: Any, prefix: str, *, strict: bool = True) -> Reference:
    """A reference object; ``strict`` (the release) requires title and year."""
    if not isinstance(obj, dict):
        raise w.fail(prefix.rstrip("."), f"expected an object, got {obj!r}"[:200])
    title = w.text(obj, "title", prefix=prefix) if strict else w.get(obj, "title", str, nullable=True, prefix=prefix)
    year = w.integer(obj, "year", *YEAR_RANGE, nullable=not strict, prefix=prefix)
    authors = w.texts(obj, "authors", prefix=prefix) if "authors" in obj or strict else ()
    venue = w.get(obj, "venue", str, nullable=True, prefix=prefix)
    doi = w.get(obj, "doi", str, nullable=True, prefix=prefix)
    return Reference(title=title or "", year=year, authors=authors, venue=venue, doi=doi)


def parse_task(w: Where, obj: dict) -> Task:
    tid = w.text(obj, "id")
    ttype = w.text(obj, "type")
    if ttype not in TASK_TYPES:
        raise w.fail("type", f"must be one of {', '.join(TASK_TYPES)}, got {ttype!r}")
    common = dict(id=tid, type=ttype, domain=w.text(obj, "domain"), question=w.text(obj, "question"))
    if ttype in ("T1", "T2"):
        common.update(answer=w.text(obj, "answer"), aliases=w.texts(obj, "aliases"))
    if ttype == "T1":
        hops = w.get(obj, "hops", int)
        if not HOPS_RANGE[0] <= hops <= HOPS_RANGE[1]:
            raise w.fail("hops", f"must be between {HOPS_RANGE[0]} and {HOPS_RANGE[1]}, got {hops}")
        return Task(**common, hops=hops, databases=w.texts(obj, "databases"))
    if ttype == "T2":
        return Task(**common, year=w.integer(obj, "year", *YEAR_RANGE, nullable=True))
    if ttype == "T3":
        paragraph = w.text(obj, "paragraph")
        groups_raw = w.get(obj, "groups", list)
        if not groups_raw:
            raise w.fail("groups", "a T3 task needs at least one citation group")
        in_text = {f"CITE_{n}" for n in SLOT_RE.findall(paragraph)}
        groups, seen = [], set()
        for i, g in enumerate(groups_raw):
            p = f"groups[{i}]."
            if not isinstance(g, dict):
                raise w.fail(f"groups[{i}]", "expected an object {slot, references}")
            slot = slot_name(w.text(g, "slot", prefix=p))
            if slot in seen:
                raise w.fail(p + "slot", f"slot {slot!r} appears twice")
            if slot not in in_text:
                raise w.fail(p + "slot", f"slot {slot!r} does not occur as [{slot}] in the paragraph")
            seen.add(slot)
            refs = w.get(g, "references", list, prefix=p)
            if not refs:
                raise w.fail(p + "references", "a citation group needs at least one reference")
            groups.append(CitationGroup(slot, tuple(
                parse_reference(w, r, f"{p}references[{j}].") for j, r in enumerate(refs))))
        missing = sorted(in_text - seen)
        if missing:
            raise w.fail("groups", f"the paragraph has slot(s) without a group: {', '.join(missing)}")
        return Task(**common, paragraph=paragraph, groups=tuple(groups))
    columns = w.texts(obj, "columns")
    if not columns:
        raise w.fail("columns", "a T4 task needs at least one column")
    if len(set(columns)) != len(columns):
        raise w.fail("columns", "column names must be unique")
    pk = w.text(obj, "primary_key")
    if pk not in columns:
        raise w.fail("primary_key", f"{pk!r} is not one of the columns")
    rows_raw = w.get(obj, "rows", list)
    if not rows_raw:
        raise w.fail("rows", "a T4 task needs at least one ground-truth row")
    rows, keys = [], set()
    for i, r in enumerate(rows_raw):
        if not isinstance(r, dict):
            raise w.fail(f"rows[{i}]", "expected an object column -> string")
        extra = sorted(set(r) - set(columns))
        if extra:
            raise w.fail(f"rows[{i}]", f"unknown column(s) {', '.join(map(repr, extra))}")
        row = {c: w.text(r, c, prefix=f"rows[{i}].") for c in columns}
        if row[pk] in keys:
            raise w.fail(f"rows[{i}].{pk}", f"primary key {row[pk]!r} appears twice")
        keys.add(row[pk])
        rows.append(row)
    return Task(**common, columns=columns, primary_key=pk, rows=tuple(rows))


def slot_name(slot: str) -> str:
    """``[CITE_1]``, ``CITE_1`` and ``1`` all name slot ``CITE_1``."""
    s = str(slot).strip().strip("[]").strip()
    return f"CITE_{s}" if s.isdigit() else s


def parse_document(w: Where, obj: dict) -> Document:
    kind = w.text(obj, "kind")
    if kind not in DOCUMENT_KINDS:
        raise w.fail("kind", f"must be one of {', '.join(DOCUMENT_KINDS)}, got {kind!r}")
    database = w.get(obj, "database", str, nullable=True)
    if kind == "record" and not database:
        raise w.fail("database", "a record names its database")
    return Document(
        id=w.text(obj, "id"), kind=kind, database=database, title=w.text(obj, "title"),
        text=w.get(obj, "text", str), url=w.get(obj, "url", str), year=w.integer(obj, "year", *YEAR_RANGE, nullable=True),
    )


def _parse_unique(path: Path, parse, what: str) -> list:
    """Every line of a JSONL file parsed by ``parse``; ids unique (an error names both lines)."""
    out, first_line = [], {}
    for no, obj in read_jsonl(path):
        w = Where(path, no)
        rec = parse(w, obj)
        if rec.id in first_line:
            raise w.fail("id", f"{what} id {rec.id!r} already used on line {first_line[rec.id]}")
        first_line[rec.id] = no
        out.append(rec)
    return out


def load_release(root: Path) -> Release:
    """Read and validate a release directory (tasks.jsonl, optional corpus/documents.jsonl)."""
    root = Path(root)
    tasks_path = root / TASKS_FILE
    if not tasks_path.is_file():
        raise ReleaseError(f"{root}: not a SciExplore release ({TASKS_FILE} missing)")
    tasks = _parse_unique(tasks_path, parse_task, "task")
    if not tasks:
        raise ReleaseError(f"{tasks_path}: no tasks")
    corpus_path = root / CORPUS_FILE
    documents = _parse_unique(corpus_path, parse_document, "document") if corpus_path.is_file() else []
    return Release(root=root, tasks=tasks, documents=documents, sha256=release_sha256(root))


def task_to_json(task: Task) -> dict[str, Any]:
    """The task as its tasks.jsonl object (the inverse of parse_task)."""
    out: dict[str, Any] = {"id": task.id, "type": task.type, "domain": task.domain, "question": task.question}
    if task.type in ("T1", "T2"):
        out.update(answer=task.answer, aliases=list(task.aliases))
    if task.type == "T1":
        out.update(hops=task.hops, databases=list(task.databases))
    elif task.type == "T2":
        out["year"] = task.year
    elif task.type == "T3":
        out["paragraph"] = task.paragraph
        out["groups"] = [
            {"slot": g.slot, "references": [reference_to_json(r) for r in g.references]} for g in task.groups
        ]
    elif task.type == "T4":
        out.update(columns=list(task.columns), primary_key=task.primary_key, rows=[dict(r) for r in task.rows])
    return out


def reference_to_json(r: Reference) -> dict[str, Any]:
    return {"title": r.title, "year": r.year, "authors": list(r.authors), "venue": r.venue, "doi": r.doi}


def document_to_json(d: Document) -> dict[str, Any]:
    return {"id": d.id, "kind": d.kind, "database": d.database, "title": d.title, "text": d.text,
            "url": d.url, "year": d.year}
