"""Load and validate an AgentHop release directory (the reference harness) into ``model.Release``.

Every problem is collected as ``<file>:<line>: field '<name>': <problem>`` (file relative to the
release root, 1-based line) and raised together as one :class:`BenchmarkError`, so a user can fix
all of them at once. Required fields are never defaulted. Extra keys are ignored, so a release
written by the real dataset (``seed`` key in graphs, ``tables`` in papers, audit extras) loads
unchanged.

Deliberate leniencies, matching the real release (docs/benchmark.md):
- a label whose ``arxiv_id`` is not the arXiv id of any node of its item's graph is loaded (it
  belongs to no paper, docs/metrics.md#label-resolution; the reference says one real label holds section text there);
  ``strict_labels=True`` makes it an error;
- edges may point at ids that are not nodes (``describe`` counts them);
- a missing/null section ``header`` loads as ``""`` (the tools show ``Section {i+1}``), null node
  ``title``/``arxivId``/``abstract`` load as ``""``, a missing ``authors`` as ``()``;
- an item without a row in ``audit/recall_labels.jsonl`` has no entry in ``Release.labels``.
"""

from __future__ import annotations

import gc
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import AgentHopError
from ...json_exact import loads_if_exact
from .model import MT, ST, Graph, Item, Label, Node, Paper, Release, Section

QA = "qa/full.jsonl"
GRAPHS = "graphs/full.jsonl"
PAPERS = "paper_pool/papers.jsonl"
LABELS = "audit/recall_labels.jsonl"
RELEASE_FILES = (QA, GRAPHS, PAPERS, LABELS)

#: how many problems the error message lists (the exception's ``errors`` holds all of them)
MAX_REPORTED = 20

QUESTION_TYPES = (ST, MT)
RELEVANCES = ("direct", "supporting")

_MISSING = object()
_TYPE_NAMES = {str: "string", int: "integer", bool: "boolean", list: "list", dict: "object", float: "number"}
# cheap look at the first key of a row, used to skip rows a ``limit`` excludes without parsing them
_PEEK = {
    "sample_id": re.compile(r'\s*\{\s*"sample_id"\s*:\s*"([^"\\]*)"'),
    "arxiv_id": re.compile(r'\s*\{\s*"arxiv_id"\s*:\s*"([^"\\]*)"'),
}


class BenchmarkError(AgentHopError):
    """An invalid or unreadable release. ``errors`` lists every problem found."""

    def __init__(self, root: str | Path, errors: list[str]) -> None:
        self.errors = list(errors)
        shown = "\n  ".join(errors[:MAX_REPORTED])
        more = f"\n  ... and {len(errors) - MAX_REPORTED} more" if len(errors) > MAX_REPORTED else ""
        n = len(errors)
        super().__init__(f"invalid AgentHop release {root}: {n} problem{'s' if n != 1 else ''}\n  {shown}{more}")


def benchmark_sha256(root: str | Path) -> str:
    """First 16 hex chars of the SHA-256 of ``qa/full.jsonl`` (the run's benchmark identity)."""
    path = Path(root) / QA
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError as exc:
        raise BenchmarkError(root, [f"{QA}: cannot read ({exc.strerror or exc})"]) from exc


# --------------------------------------------------------------------------------------------------
# reading


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def find_lone_surrogate(obj: Any) -> tuple[str, str] | None:
    """``(field path, surrogate)`` of the first string (or key) in parsed JSON that holds a lone
    surrogate, or None. JSON escapes such as ``\\ud800`` parse into such strings, which are not text
    and cannot be written anywhere as UTF-8."""
    stack: list[tuple[Any, str]] = [(obj, "")]
    while stack:
        v, path = stack.pop()
        if isinstance(v, str):
            m = _SURROGATE_RE.search(v)
            if m:
                return path or "(the value)", m.group(0)
        elif isinstance(v, dict):
            for k, x in reversed(list(v.items())):
                m = _SURROGATE_RE.search(k) if isinstance(k, str) else None
                if m:
                    return (f"{path}.{k!a}" if path else f"{k!a}") + " (a key)", m.group(0)
                stack.append((x, f"{path}.{k}" if path else str(k)))
        elif isinstance(v, list):
            for i in range(len(v) - 1, -1, -1):
                stack.append((v[i], f"{path}[{i}]"))
    return None


def _type_name(value: Any) -> str:
    return "null" if value is None else _TYPE_NAMES.get(type(value), type(value).__name__)


class _Reader:
    """Collects errors while reading one release."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.errors: list[str] = []

    def error(self, rel: str, line: int | None, field: str | None, problem: str) -> None:
        where = f"{rel}:{line}" if line is not None else rel
        self.errors.append(f"{where}: field '{field}': {problem}" if field else f"{where}: {problem}")

    def read_bytes(self, rel: str) -> bytes | None:
        path = self.root / rel
        try:
            return path.read_bytes()
        except FileNotFoundError:
            self.error(rel, None, None, f"file not found (expected {path})")
        except IsADirectoryError:
            self.error(rel, None, None, "is a directory, expected a JSONL file")
        except OSError as exc:
            self.error(rel, None, None, f"cannot read ({exc.strerror or exc})")
        return None

    def lines(self, rel: str, data: bytes, peek: str | None = None,
              skip: Any = None) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
        """Yield ``(line_no, row, peeked_key)`` for each non-blank line.

        ``row`` is the parsed object, or None when the line was skipped (its peeked key satisfied
        ``skip``) or was invalid (the error is recorded). The key is peeked only when ``skip`` is
        given (else it is None).

        A line is read by orjson when that gives exactly what ``json`` gives (harness/json_exact.py);
        any other line (invalid, or holding what orjson reads differently) goes the ``json`` way,
        which decides its value or words its error.
        """
        pattern = _PEEK.get(peek) if peek and skip is not None else None
        no, start, size = 0, 0, len(data)
        while start < size:  # line by line without materialising every line at once (memory)
            end = data.find(b"\n", start)
            if end < 0:
                end = size
            raw = data[start:end]
            start = end + 1
            no += 1
            if not raw.strip():
                continue
            if pattern is None:
                fast = loads_if_exact(raw)
                # orjson refuses a lone surrogate escape and invalid UTF-8, so an object it read is clean
                if type(fast) is dict:
                    yield no, fast, None
                    continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                self.error(rel, no, None, f"not valid UTF-8 (byte {exc.start + 1} of the line: "
                                          f"{raw[exc.start:exc.start + 1]!r})")
                continue
            if no == 1 and text.startswith("\ufeff"):
                text = text[1:]
            key = None
            if pattern is not None:
                m = pattern.match(text)
                if m is not None:
                    key = m.group(1)
                    if skip is not None and skip(key):
                        yield no, None, key
                        continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                self.error(rel, no, None, f"invalid JSON: {exc.msg} (column {exc.colno})")
                continue
            except RecursionError:
                self.error(rel, no, None, "invalid JSON: nested too deeply")
                continue
            if not isinstance(row, dict):
                self.error(rel, no, None, f"expected a JSON object, got {_type_name(row)}")
                continue
            if "\\u" in text:  # only an escape can make a lone surrogate
                found = find_lone_surrogate(row)
                if found is not None:
                    self.error(rel, no, found[0],
                               f"holds a lone surrogate escape (\\u{ord(found[1]):04x}), which is not text")
                    continue
            yield no, row, key


class _Row:
    """Typed access to one JSON object, recording errors against its file/line."""

    __slots__ = ("r", "rel", "no", "obj", "prefix", "ok")

    def __init__(self, reader: _Reader, rel: str, no: int, obj: dict[str, Any], prefix: str = "") -> None:
        self.r, self.rel, self.no, self.obj, self.prefix, self.ok = reader, rel, no, obj, prefix, True

    def bad(self, field: str, problem: str) -> None:
        self.ok = False
        self.r.error(self.rel, self.no, self.prefix + field, problem)

    def get(self, field: str, kind: type, *, nullable: bool = False, required: bool = True) -> Any:
        """Value of ``field`` checked against ``kind`` (bool is never an int); _MISSING if bad."""
        value = self.obj.get(field, _MISSING)
        if value is _MISSING:
            if required:
                self.bad(field, "missing required field")
            return _MISSING
        if value is None:
            if nullable:
                return None
            self.bad(field, f"expected {_TYPE_NAMES[kind]}, got null")
            return _MISSING
        if type(value) is not kind and not (kind is float and type(value) is int):
            self.bad(field, f"expected {_TYPE_NAMES[kind]}, got {_type_name(value)} ({_short(value)})")
            return _MISSING
        return value

    def str_list(self, field: str, *, required: bool = True, nullable: bool = False) -> Any:
        value = self.get(field, list, required=required, nullable=nullable)
        if value is _MISSING or value is None:
            return value
        for i, x in enumerate(value):
            if type(x) is not str:
                self.bad(f"{field}[{i}]", f"expected string, got {_type_name(x)} ({_short(x)})")
                return _MISSING
        return tuple(value)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# --------------------------------------------------------------------------------------------------
# rows -> objects


def _item(row: _Row) -> Item | None:
    g = row.get
    sid = g("id", str)
    qtype = g("question_type", str)
    if isinstance(qtype, str) and qtype not in QUESTION_TYPES:
        row.bad("question_type", f"must be 'single-target' or 'multi-target', got {qtype!r}")
    depth = g("depth", int)
    if isinstance(depth, int) and depth not in (1, 2):
        row.bad("depth", f"must be 1 or 2, got {depth}")
    reasoning = g("reasoning_type", str)
    skill = g("cognitive_skill", str, nullable=True, required=False)
    venue = g("venue", str, nullable=True, required=False)
    tier = g("consensus_tier", str, nullable=True, required=False)
    question = g("question", str)
    options = row.str_list("options")
    if isinstance(options, tuple) and len(options) != 4:
        row.bad("options", f"must have exactly 4 options, got {len(options)}")
    correct = g("correct_index", int)
    if isinstance(correct, int) and not 0 <= correct <= 3:
        row.bad("correct_index", f"must be 0-3, got {correct}")
    dtypes = row.str_list("distractor_types", required=False, nullable=True)
    if isinstance(dtypes, tuple) and isinstance(options, tuple) and len(dtypes) != len(options):
        row.bad("distractor_types", f"must align with options ({len(options)} entries), got {len(dtypes)}")
    seed_pid = g("seed_paper_id", str)
    seed_aid = g("seed_arxiv_id", str)
    seed_title = g("seed_title", str)
    gold_pids = row.str_list("gold_paper_ids")
    if gold_pids == ():
        row.bad("gold_paper_ids", "must name at least one gold paper")
    gold_aids = row.str_list("gold_arxiv_ids")
    if isinstance(gold_pids, tuple) and isinstance(gold_aids, tuple) and len(gold_pids) != len(gold_aids):
        row.bad("gold_arxiv_ids", f"has {len(gold_aids)} entries, gold_paper_ids has {len(gold_pids)}")
    bridge_pids = row.str_list("bridge_paper_ids", required=False, nullable=True)
    bridge_aids = row.str_list("bridge_arxiv_ids", required=False, nullable=True)
    if bridge_pids is _MISSING or bridge_pids is None:
        bridge_pids = ()
    if bridge_aids is _MISSING or bridge_aids is None:
        bridge_aids = ()
    if isinstance(bridge_pids, tuple) and isinstance(bridge_aids, tuple) and len(bridge_pids) != len(bridge_aids):
        row.bad("bridge_arxiv_ids", f"has {len(bridge_aids)} entries, bridge_paper_ids has {len(bridge_pids)}")
    agreement = row.obj.get("filter_agreement")  # any JSON value; kept as text (3 -> "3")
    if agreement is not None and not isinstance(agreement, str):
        agreement = json.dumps(agreement, sort_keys=True, ensure_ascii=False)
    necessary = g("bridge_necessary", bool, nullable=True, required=False)
    if not row.ok:
        return None
    return Item(
        id=sid, question_type=qtype, depth=depth, reasoning_type=reasoning,
        cognitive_skill=None if skill is _MISSING else skill,
        venue=None if venue is _MISSING else venue,
        consensus_tier=None if tier is _MISSING else tier,
        question=question, options=options, correct_index=correct,
        distractor_types=None if dtypes is _MISSING else dtypes,
        seed_paper_id=seed_pid, seed_arxiv_id=seed_aid, seed_title=seed_title,
        gold_paper_ids=gold_pids, gold_arxiv_ids=gold_aids,
        bridge_paper_ids=bridge_pids, bridge_arxiv_ids=bridge_aids,
        filter_agreement=agreement,
        bridge_necessary=None if necessary is _MISSING else necessary,
    )


def _node(row: _Row, pid: str, raw: Any) -> Node | None:
    if not isinstance(raw, dict):
        row.bad(f"nodes.{pid}", f"expected object, got {_type_name(raw)}")
        return None
    sub = _Row(row.r, row.rel, row.no, raw, f"nodes.{pid}.")
    title = sub.get("title", str, nullable=True)
    arxiv = sub.get("arxivId", str, nullable=True)
    year = sub.get("year", int, nullable=True)
    abstract = sub.get("abstract", str, nullable=True)
    authors_raw = sub.get("authors", list, nullable=True, required=False)
    authors: list[str] = []
    if isinstance(authors_raw, list):
        for i, a in enumerate(authors_raw):
            name = a.get("name") if isinstance(a, dict) else a
            if type(name) is not str:
                sub.bad(f"authors[{i}]", f"expected an object with a string 'name' or a string, got {_short(a)}")
                break
            authors.append(name)
    if not sub.ok:
        row.ok = False
        return None
    return Node(pid, title or "", arxiv or "", year, abstract or "", tuple(authors))


def _graph(row: _Row, sid: str, cache: dict[str, tuple[dict[str, Any], Node]]) -> Graph | None:
    nodes_raw = row.get("nodes", dict)
    edges_raw = row.get("edges", dict)
    if "seed" in row.obj and row.obj["seed"] is not None and type(row.obj["seed"]) is not str:
        row.bad("seed", f"expected string, got {_type_name(row.obj['seed'])}")
    nodes: dict[str, Node] = {}
    if isinstance(nodes_raw, dict):
        for pid, raw in nodes_raw.items():
            hit = cache.get(pid)
            if hit is not None and hit[0] == raw:
                nodes[pid] = hit[1]
                continue
            node = _node(row, pid, raw)
            if node is not None:
                nodes[pid] = node
                if hit is None:
                    cache[pid] = (raw, node)
    edges: dict[str, tuple[str, ...]] = {}
    if isinstance(edges_raw, dict):
        for src, dsts in edges_raw.items():
            if type(dsts) is not list:
                row.bad(f"edges.{src}", f"expected list of paper ids, got {_type_name(dsts)}")
                continue
            if not all(type(d) is str for d in dsts):
                row.bad(f"edges.{src}", "expected list of paper ids (strings)")
                continue
            edges[src] = tuple(dsts)
    if not row.ok:
        return None
    return Graph(sid, nodes, edges)


def _paper(row: _Row) -> Paper | None:
    aid = row.get("arxiv_id", str)
    if aid == "":
        row.bad("arxiv_id", "must not be empty")
    title = row.get("title", str, nullable=True)
    secs = row.get("sections", list)
    sections: list[Section] = []
    if isinstance(secs, list):
        for i, s in enumerate(secs):
            if type(s) is not dict:
                row.bad(f"sections[{i}]", f"expected object, got {_type_name(s)}")
                continue
            header = s.get("header")
            text = s.get("text", _MISSING)
            if header is not None and type(header) is not str:
                row.bad(f"sections[{i}].header", f"expected string, got {_type_name(header)}")
                continue
            if text is _MISSING:
                row.bad(f"sections[{i}].text", "missing required field")
                continue
            if type(text) is not str:
                row.bad(f"sections[{i}].text", f"expected string, got {_type_name(text)}")
                continue
            sections.append(Section(header or "", text))
    if not row.ok:
        return None
    return Paper(aid, title or "", tuple(sections))


def _labels(row: _Row) -> tuple[list[Label], Any]:
    """Labels of one audit row and its ``chain_coherence.bridge_necessary`` (or None)."""
    analysis = row.get("analysis", dict)
    if not isinstance(analysis, dict):
        return [], None
    necessary = None
    chain = analysis.get("chain_coherence")
    if isinstance(chain, dict) and isinstance(chain.get("bridge_necessary"), bool):
        necessary = chain["bridge_necessary"]
    raw = analysis.get("section_recall_labels", _MISSING)
    if raw is _MISSING:
        row.bad("analysis.section_recall_labels", "missing required field")
        return [], necessary
    if type(raw) is not list:
        row.bad("analysis.section_recall_labels", f"expected list, got {_type_name(raw)}")
        return [], necessary
    out: list[Label] = []
    for i, lab in enumerate(raw):
        prefix = f"analysis.section_recall_labels[{i}]"
        if type(lab) is not dict:
            row.bad(prefix, f"expected object, got {_type_name(lab)}")
            continue
        sub = _Row(row.r, row.rel, row.no, lab, prefix + ".")
        paper = sub.get("paper", str, nullable=True)
        aid = sub.get("arxiv_id", str, nullable=True)
        section = sub.get("section", str)
        relevance = sub.get("relevance", str)
        if isinstance(relevance, str) and relevance not in RELEVANCES:
            sub.bad("relevance", f"must be 'direct' or 'supporting', got {relevance!r}")
        if sub.ok:
            out.append(Label(paper or "", aid or "", section, relevance))
        else:
            row.ok = False
    return out, necessary


# --------------------------------------------------------------------------------------------------
# the release


def _sample_rows(r: _Reader, path: str, data: bytes, what: str, first_line: dict[str, int],
                 known_ids: dict[str, int] | None, kept: dict[str, int] | None) -> Iterator[tuple[_Row, str]]:
    """Rows of a per-item file (graphs, labels) after the checks they share: a ``sample_id`` that is
    present, not a duplicate (``first_line`` records where each was first seen) and an item of
    qa/full.jsonl (when ``known_ids`` is given); with a limit (``kept``), rows of other items are
    skipped unparsed."""
    skip = (lambda sid: sid in known_ids and sid not in kept) if kept is not None and known_ids is not None else None
    for no, obj, peeked in r.lines(path, data, "sample_id", skip):
        if obj is None:
            first_line.setdefault(peeked, no)
            continue
        row = _Row(r, path, no, obj)
        sid = row.get("sample_id", str)
        if sid is _MISSING:
            continue
        if sid in first_line:
            row.bad("sample_id", f"duplicate {what} for {sid!r} (first on line {first_line[sid]})")
            continue
        first_line[sid] = no
        if known_ids is not None and sid not in known_ids:
            row.bad("sample_id", f"{sid!r} is not an item of {QA}")
            continue
        if kept is not None and sid not in kept:
            continue
        yield row, sid


def load_release(root: str | Path, limit: int | None = None, *, strict_labels: bool = False) -> Release:
    """Read and validate the release at ``root``; raise :class:`BenchmarkError` listing all problems.

    ``limit`` keeps the first N items (file order) with their graphs, labels and the pool papers
    their graphs use, and validates exactly those. ``strict_labels`` turns labels whose non-empty
    ``arxiv_id`` is not the arXiv id of a node of the item's graph into errors.
    """
    if limit is not None and limit < 0:
        raise BenchmarkError(root, [f"limit must be >= 0, got {limit}"])
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of small containers: the cyclic GC would dominate the load time
    try:
        return _load(Path(root), limit, strict_labels)
    finally:
        if gc_was_enabled:
            gc.enable()


def _load(root: Path, limit: int | None, strict_labels: bool) -> Release:
    r = _Reader(root)
    if not root.is_dir():
        raise BenchmarkError(root, [f"release directory not found: {root}"])

    # qa: every row's id is collected; the first `limit` rows are validated and kept
    items: list[Item] = []
    item_line: dict[str, int] = {}
    all_ids: dict[str, int] = {}
    qa = r.read_bytes(QA)
    sha = hashlib.sha256(qa).hexdigest()[:16] if qa is not None else ""
    if qa is not None:
        n_rows = 0
        for no, obj, _ in r.lines(QA, qa):
            assert obj is not None
            n_rows += 1
            sid = obj.get("id")
            if type(sid) is str:
                if sid in all_ids:
                    r.error(QA, no, "id", f"duplicate id {sid!r} (first on line {all_ids[sid]})")
                    continue
                all_ids[sid] = no
            if limit is not None and n_rows > limit:
                continue
            item = _item(_Row(r, QA, no, obj))
            if item is not None:
                items.append(item)
                item_line[item.id] = no
    kept = item_line

    # graphs
    graphs: dict[str, Graph] = {}
    graph_line: dict[str, int] = {}
    cache: dict[str, tuple[dict[str, Any], Node]] = {}
    data = r.read_bytes(GRAPHS)
    graphs_read = data is not None
    if data is not None:
        for row, sid in _sample_rows(r, GRAPHS, data, "graph", graph_line, all_ids if qa is not None else None,
                                     kept if limit is not None else None):
            graph = _graph(row, sid, cache)
            if graph is not None:
                graphs[sid] = graph
    del cache, data

    # papers (with a limit, only those the kept graphs use)
    needed: set[str] | None = None
    if limit is not None:
        needed = {n.arxiv_id for g in graphs.values() for n in g.nodes.values() if n.arxiv_id}
    papers: dict[str, Paper] = {}
    paper_line: dict[str, int] = {}
    data = r.read_bytes(PAPERS)
    if data is not None:
        skip = (lambda aid: aid not in needed) if needed is not None else None
        for no, obj, peeked in r.lines(PAPERS, data, "arxiv_id", skip):
            if obj is None:
                if peeked in paper_line:
                    r.error(PAPERS, no, "arxiv_id", f"duplicate paper {peeked!r} (first on line {paper_line[peeked]})")
                paper_line.setdefault(peeked, no)
                continue
            paper = _paper(_Row(r, PAPERS, no, obj))
            if paper is None:
                continue
            if paper.arxiv_id in paper_line:
                r.error(PAPERS, no, "arxiv_id",
                        f"duplicate paper {paper.arxiv_id!r} (first on line {paper_line[paper.arxiv_id]})")
                continue
            paper_line[paper.arxiv_id] = no
            if needed is None or paper.arxiv_id in needed:
                papers[paper.arxiv_id] = paper

    # labels
    labels: dict[str, list[Label]] = {}
    necessary_audit: dict[str, bool] = {}
    label_line: dict[str, int] = {}
    data = r.read_bytes(LABELS)
    if data is not None:
        for row, sid in _sample_rows(r, LABELS, data, "labels row", label_line,
                                     all_ids if qa is not None else None, kept if limit is not None else None):
            item_labels, necessary = _labels(row)
            if row.ok:
                labels[sid] = item_labels
                if necessary is not None:
                    necessary_audit[sid] = necessary
    del data

    # cross-file checks
    warnings: list[str] = []
    for sid, lab_list in labels.items():
        graph = graphs.get(sid)
        if graph is None:
            continue
        node_aids = {n.arxiv_id for n in graph.nodes.values() if n.arxiv_id}
        for i, lab in enumerate(lab_list):
            if lab.arxiv_id and lab.arxiv_id not in node_aids:
                field_name = f"analysis.section_recall_labels[{i}].arxiv_id"
                problem = f"{lab.arxiv_id[:80]!r} is not the arXiv id of any node of {sid}'s graph"
                if strict_labels:
                    r.error(LABELS, label_line[sid], field_name, problem)
                else:
                    warnings.append(f"{LABELS}:{label_line[sid]}: field '{field_name}': {problem} "
                                    "(label belongs to no paper)")
    out_items: list[Item] = []
    for item in items:
        no = item_line[item.id]
        if graphs_read:
            graph = graphs.get(item.id)
            if graph is None:
                if item.id not in graph_line:
                    r.error(QA, no, "id", f"item {item.id!r} has no graph row in {GRAPHS}")
                continue
            gl = graph_line[item.id]
            roles = [("seed_paper_id", (item.seed_paper_id,)), ("gold_paper_ids", item.gold_paper_ids),
                     ("bridge_paper_ids", item.bridge_paper_ids)]
            for field, pids in roles:
                for k, pid in enumerate(pids):
                    if pid not in graph.nodes:
                        name = field if field == "seed_paper_id" else f"{field}[{k}]"
                        r.error(QA, no, name, f"paper {pid!r} is not a node of the item's graph ({GRAPHS}:{gl})")
        if item.bridge_necessary is None and item.id in necessary_audit:
            item = replace(item, bridge_necessary=necessary_audit[item.id])
        out_items.append(item)

    if r.errors:
        raise BenchmarkError(root, r.errors)
    return Release(root=str(root), items=out_items, graphs=graphs, papers=papers, labels=labels,
                   benchmark_sha256=sha, warnings=warnings)

