"""Scanner files (docs/scanners.md#scanner-files): a YAML ``scanners:`` list, read into typed definitions.

Pure: parsing and checking. Every problem is one line naming the file, the entry and the field; nothing
is run or written before the whole file has been read. A scanner's recorded version is the version the
file gives plus a hash of what it does (its query, prompt, model, answer or search options), so editing
a scanner without bumping its version still rescans.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agenthop.harness.errors import AgentHopError

from ..text_file import read_utf8

KINDS: tuple[str, ...] = ("sql", "llm", "pattern")
LLM_BACKENDS: tuple[str, ...] = ("openai", "anthropic", "google", "responses")
#: ``answer`` of an llm scanner: yes/no (value 1/0), a number, or a list of labels
YES_NO, NUMBER = "yes/no", "number"
#: where the transcript goes in an llm scanner's prompt
TRANSCRIPT_SLOT = "{transcript}"
#: characters of transcript an llm prompt holds by default (the start and the end are kept)
DEFAULT_MAX_CHARS = 20_000

#: options that say where a model is reached, not what the scanner asks: left out of its version
WHERE_NOT_WHAT = frozenset({"base_url", "api_key_env"})

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")
_COMMON = ("name", "version", "kind", "description", "benchmark")
_FIELDS: dict[str, tuple[str, ...]] = {
    "sql": ("query",),
    "llm": ("prompt", "backend", "model", "answer", "base_url", "api_key_env", "max_chars", "system"),
    #: the search options (ingest/transcripts/search.py)
    "pattern": ("text", "regex", "case_sensitive", "role", "tool", "tool_args", "status", "sequence", "repeat"),
}


class ScannerFileError(AgentHopError):
    """A scanner file that cannot be used; the message names the file, entry and field."""


@dataclass(frozen=True, slots=True)
class Scanner:
    name: str
    version: str
    kind: str
    description: str | None
    #: scan only the runs of this benchmark (None: every run)
    benchmark: str | None = None
    #: the kind's own fields as the file gives them (checked)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def recorded_version(self) -> str:
        """What ``raw.scanner_results.scanner_version`` records (module docstring)."""
        what = {k: v for k, v in self.options.items() if k not in WHERE_NOT_WHAT}
        digest = hashlib.sha256(json.dumps({"kind": self.kind, **what}, sort_keys=True,
                                           ensure_ascii=False).encode()).hexdigest()[:12]
        if self.kind == "llm":
            return f"{self.version} prompt-sha256:{digest} model:{self.options['model']}"
        return f"{self.version} sha256:{digest}"


class _Entry:
    """Where an entry of the file is, for messages."""

    def __init__(self, path: Path, index: int, entry: dict[str, Any]) -> None:
        name = entry.get("name")
        self.where = f"{path}: scanners[{index}]" + (f" ({name!r})" if isinstance(name, str) else "")
        self.entry = entry

    def fail(self, fld: str, problem: str) -> ScannerFileError:
        return ScannerFileError(f"{self.where}: field {fld!r}: {problem}")

    def text(self, fld: str, *, required: bool = True) -> str | None:
        value = self.entry.get(fld)
        if value is None:
            if required:
                raise self.fail(fld, "missing")
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.fail(fld, f"expected text, got {type(value).__name__}")
        text = str(value)
        if required and not text.strip():
            raise self.fail(fld, "empty")
        return text


def _llm_options(e: _Entry) -> dict[str, Any]:
    prompt = e.text("prompt")
    assert prompt is not None
    if TRANSCRIPT_SLOT not in prompt:
        raise e.fail("prompt", f"has no {TRANSCRIPT_SLOT} (where the transcript goes)")
    backend = e.text("backend", required=False) or "openai"
    if backend not in LLM_BACKENDS:
        raise e.fail("backend", f"unknown backend {backend!r} (known: {', '.join(LLM_BACKENDS)})")
    answer = e.entry.get("answer", YES_NO)
    if isinstance(answer, list):
        if len(answer) < 2 or not all(isinstance(a, str) and a.strip() for a in answer):
            raise e.fail("answer", "a label set is a list of two or more non-empty labels")
        if len({a.lower() for a in answer}) != len(answer):
            raise e.fail("answer", "labels must differ (case is ignored)")
    elif answer not in (YES_NO, NUMBER):
        raise e.fail("answer", f"expected {YES_NO!r}, {NUMBER!r} or a list of labels, got {answer!r}")
    max_chars = e.entry.get("max_chars", DEFAULT_MAX_CHARS)
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 200:
        raise e.fail("max_chars", f"expected an integer of 200 or more, got {max_chars!r}")
    out: dict[str, Any] = {"prompt": prompt, "backend": backend, "model": e.text("model"), "answer": answer,
                           "max_chars": max_chars}
    for opt in ("base_url", "api_key_env", "system"):
        value = e.text(opt, required=False)
        if value is not None:
            out[opt] = value
    return out


def _pattern_options(e: _Entry) -> dict[str, Any]:
    from . import pattern_kind  # the search options are checked by the search itself

    opts = {k: e.entry[k] for k in _FIELDS["pattern"] if k in e.entry}
    problem = pattern_kind.option_problem(opts)
    if problem is not None:
        raise e.fail(*problem)
    return opts


def _sql_options(e: _Entry) -> dict[str, Any]:
    from . import sql_kind

    query = e.text("query")
    assert query is not None
    problem = sql_kind.query_problem(query)
    if problem is not None:
        raise e.fail("query", problem)
    return {"query": query}


def parse_entry(path: Path, index: int, entry: Any) -> Scanner:
    if not isinstance(entry, dict):
        raise ScannerFileError(f"{path}: scanners[{index}]: expected a mapping of name, version, kind, ..., "
                               f"got {type(entry).__name__}")
    e = _Entry(path, index, entry)
    name = e.text("name")
    assert name is not None
    if not _NAME.match(name):
        raise e.fail("name", "use 1-64 letters, digits and _ . : - (starting with a letter or digit)")
    version = e.text("version")
    kind = e.text("kind")
    if kind not in KINDS:
        raise e.fail("kind", f"unknown kind {kind!r} (known: {', '.join(KINDS)})")
    unknown = sorted(set(entry) - set(_COMMON) - set(_FIELDS[kind]))
    if unknown:
        raise e.fail(unknown[0], f"not a field of a {kind} scanner (fields: {', '.join(_COMMON + _FIELDS[kind])})")
    options = {"sql": _sql_options, "llm": _llm_options, "pattern": _pattern_options}[kind](e)
    return Scanner(name=name, version=str(version), kind=kind, description=e.text("description", required=False),
                   benchmark=e.text("benchmark", required=False), options=options)


SHIPPED = Path(__file__).resolve().parent / "shipped"
SHIPPED_PREFIX = "shipped:"


def scanner_file(text: str) -> Path:
    """The file ``--scanners`` names: a path, or ``shipped:NAME`` for a scanner file the project ships."""
    if text.startswith(SHIPPED_PREFIX):
        name = text[len(SHIPPED_PREFIX):]
        known = sorted(p.stem for p in SHIPPED.glob("*.yml"))
        if name not in known:
            raise ScannerFileError(f"--scanners {text}: no shipped scanner file {name!r} (shipped: "
                                   f"{', '.join(SHIPPED_PREFIX + k for k in known)})")
        return SHIPPED / f"{name}.yml"
    path = Path(text)
    if not path.is_file():
        raise ScannerFileError(f"--scanners {text}: no such file (or give shipped:NAME)")
    return path


def load_scanners(path: Path) -> list[Scanner]:
    """Every scanner of the file ``path``, checked; a ScannerFileError names the first problem."""
    text = read_utf8(path, "scanner file", ScannerFileError)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        raise ScannerFileError(f"{path}: not valid YAML{at} ({getattr(exc, 'problem', None) or exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("scanners"), list) or not doc["scanners"]:
        raise ScannerFileError(f"{path}: expected a top-level 'scanners:' list with at least one scanner")
    extra = sorted(set(doc) - {"scanners"})
    if extra:
        raise ScannerFileError(f"{path}: unknown top-level key {extra[0]!r} (a scanner file has only 'scanners:')")
    scanners = [parse_entry(path, i, entry) for i, entry in enumerate(doc["scanners"])]
    seen: set[str] = set()
    for i, s in enumerate(scanners):
        if s.name in seen:
            raise ScannerFileError(f"{path}: scanners[{i}] ({s.name!r}): field 'name': another scanner of the file "
                                   "has this name")
        seen.add(s.name)
    return scanners
