"""Benchmark release -> the seven raw benchmark tables (Arrow, validated against schemas/agenthop.py).

The release is parsed by the harness's loader (``load_release``); this module only flattens the typed
:class:`Release` into tables. Identity of a release is the SHA-256 of the bytes of its four JSONL
files: an identical release is not parsed again; a different one replaces the benchmark tables whole.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from agenthop.harness.benchmarks.agenthop.model import Node, Release
from agenthop.schemas import agenthop as bschema
from agenthop.schemas.sample_hash import sample_hash

from ..conform import IngestError, conform

RELEASE_FILES: tuple[str, ...] = (
    "qa/full.jsonl",
    "graphs/full.jsonl",
    "paper_pool/papers.jsonl",
    "audit/recall_labels.jsonl",
)


def alias(index: int) -> str:
    """0-based section index -> bijective base-26 alias (A..Z, AA, AB, ...), as list_sections shows."""
    n = index + 1
    out = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        out = chr(65 + r) + out
    return out


def _sha256_file(path: Path, h: "hashlib._Hash") -> None:
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)


def release_content_sha256(root: Path) -> str:
    """SHA-256 over the release files' names and bytes (the release's identity for ingest)."""
    if not root.is_dir():
        raise IngestError(f"benchmark directory {root} does not exist")
    if not (root / RELEASE_FILES[0]).is_file():
        raise IngestError(f"{root}: not a benchmark release ({RELEASE_FILES[0]} is missing)")
    h = hashlib.sha256()
    for rel in RELEASE_FILES:
        p = root / rel
        if p.is_file():
            h.update(rel.encode() + b"\0")
            _sha256_file(p, h)
            h.update(b"\0")
    return h.hexdigest()


def qa_sha16(root: Path) -> str:
    h = hashlib.sha256()
    _sha256_file(root / RELEASE_FILES[0], h)
    return h.hexdigest()[:16]


def _none_if_empty(s: str | None) -> str | None:
    return s if s else None


@dataclass(slots=True)
class BenchmarkTables:
    root: str
    benchmark_sha256: str
    content_sha256: str
    tables: dict[str, pa.Table]

    def counts(self) -> dict[str, int]:
        return {k: v.num_rows for k, v in self.tables.items()}


def item_input(question: str, options: Sequence[str], correct_index: int) -> tuple[str, list[str]]:
    """An item as other tools see it (docs/interchange.md#sample-hash): the question with its lettered
    options as the input, the gold option's text as the one reference."""
    lines = [question, *(f"{chr(65 + i)}. {o}" for i, o in enumerate(options))]
    gold = [options[correct_index]] if 0 <= correct_index < len(options) else []
    return "\n".join(lines), gold


def item_inputs(con: Any) -> dict[str, tuple[str, list[str]]]:
    """sample_id -> (input, references) of every loaded AgentHop item."""
    rows = con.execute("SELECT sample_id, question, options, correct_index FROM raw.items ORDER BY item_order").fetchall()
    return {sid: item_input(q, list(o), c) for sid, q, o, c in rows}


def release_tables(release: Release) -> dict[str, pa.Table]:
    """Flatten a loaded release into the raw benchmark tables (validated against the schemas)."""
    items: dict[str, list] = {f.name: [] for f in bschema.ITEMS}
    ip: dict[str, list] = {f.name: [] for f in bschema.ITEM_PAPERS}
    nodes: dict[str, list] = {f.name: [] for f in bschema.GRAPH_NODES}
    edges: dict[str, list] = {f.name: [] for f in bschema.GRAPH_EDGES}
    papers: dict[str, list] = {f.name: [] for f in bschema.PAPERS}
    sections: dict[str, list] = {f.name: [] for f in bschema.SECTIONS}
    labels: dict[str, list] = {f.name: [] for f in bschema.RECALL_LABELS}

    pool = release.papers
    # the loader gives the graphs holding an identical node one Node object: each distinct object's
    # fields become Arrow values once, then are taken for every row (_node_columns)
    node_row: dict[int, int] = {}
    distinct_nodes: list[Node] = []
    node_rows: list[int] = []
    for order, it in enumerate(release.items):
        items["sample_id"].append(it.id)
        items["question_type"].append(it.question_type)
        items["depth"].append(it.depth)
        items["reasoning_type"].append(it.reasoning_type)
        items["cognitive_skill"].append(it.cognitive_skill)
        items["venue"].append(it.venue)
        items["consensus_tier"].append(it.consensus_tier)
        items["question"].append(it.question)
        items["options"].append(list(it.options))
        items["correct_index"].append(it.correct_index)
        items["distractor_types"].append(
            list(it.distractor_types) if it.distractor_types is not None else None
        )
        items["seed_paper_id"].append(it.seed_paper_id)
        items["seed_arxiv_id"].append(_none_if_empty(it.seed_arxiv_id))
        items["seed_title"].append(it.seed_title)
        items["filter_agreement"].append(
            None if it.filter_agreement is None else str(it.filter_agreement)
        )
        items["bridge_necessary"].append(it.bridge_necessary)
        items["item_order"].append(order)
        items["sample_hash"].append(sample_hash(*item_input(it.question, it.options, it.correct_index)))

        roles = (
            ("seed", (it.seed_paper_id,), (it.seed_arxiv_id,)),
            ("bridge", it.bridge_paper_ids, it.bridge_arxiv_ids),
            ("gold", it.gold_paper_ids, it.gold_arxiv_ids),
        )
        for role, pids, aids in roles:
            for rank, pid in enumerate(pids):
                ip["sample_id"].append(it.id)
                ip["paper_id"].append(pid)
                ip["arxiv_id"].append(_none_if_empty(aids[rank]) if rank < len(aids) else None)
                ip["role"].append(role)
                ip["rank"].append(rank)

        graph = release.graphs.get(it.id)
        if graph is not None:  # column-wise extends: ~300k nodes and ~500k edges at full scale
            n = len(graph.nodes)
            nodes["sample_id"].extend([it.id] * n)
            nodes["paper_id"].extend(graph.nodes)  # the dict keys: unique per sample
            nodes["node_order"].extend(range(n))
            for nd in graph.nodes.values():
                k = node_row.get(id(nd))
                if k is None:
                    k = node_row[id(nd)] = len(distinct_nodes)
                    distinct_nodes.append(nd)
                node_rows.append(k)
            for src, dsts in graph.edges.items():
                m = len(dsts)
                edges["sample_id"].extend([it.id] * m)
                edges["src_paper_id"].extend([src] * m)
                edges["dst_paper_id"].extend(dsts)
                edges["rank"].extend(range(m))

        for lindex, lab in enumerate(release.labels.get(it.id, ())):
            labels["sample_id"].append(it.id)
            labels["label_index"].append(lindex)
            labels["paper_title"].append(lab.paper_title)
            labels["arxiv_id"].append(_none_if_empty(lab.arxiv_id))
            labels["label_section"].append(lab.section)
            labels["relevance"].append(lab.relevance)

    aliases = [alias(i) for i in range(max((len(p.sections) for p in pool.values()), default=0))]
    for arxiv_id, paper in pool.items():
        secs = paper.sections
        n = len(secs)
        papers["arxiv_id"].append(arxiv_id)
        papers["title"].append(paper.title)
        papers["n_sections"].append(n)
        sections["arxiv_id"].extend([arxiv_id] * n)
        sections["section_index"].extend(range(n))
        sections["alias"].extend(aliases[:n])
        sections["header"].extend([s.header for s in secs])
        sections["n_chars"].extend([len(s.text) for s in secs])
        sections["text"].extend([s.text for s in secs])

    raw = {
        "items": (items, bschema.ITEMS, "qa/full.jsonl"),
        "item_papers": (ip, bschema.ITEM_PAPERS, "qa/full.jsonl"),
        "graph_nodes": (nodes, bschema.GRAPH_NODES, "graphs/full.jsonl"),
        "graph_edges": (edges, bschema.GRAPH_EDGES, "graphs/full.jsonl"),
        "papers": (papers, bschema.PAPERS, "paper_pool/papers.jsonl"),
        "sections": (sections, bschema.SECTIONS, "paper_pool/papers.jsonl"),
        "recall_labels": (labels, bschema.RECALL_LABELS, "audit/recall_labels.jsonl"),
    }
    out: dict[str, pa.Table] = {}
    for name, (cols, schema, src) in raw.items():
        where = f"{Path(release.root) / src} (raw.{name})"
        try:
            if name == "graph_nodes":
                cols.update(_node_columns(distinct_nodes, node_rows, pool))
            table = pa.table(cols, schema=schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeError) as exc:
            raise IngestError(f"{where}: {exc}") from None
        out[name] = conform(table, schema, where)
    return out


#: rows taken at once from the distinct nodes' values (each chunk's text stays far below 2 GB)
TAKE_ROWS = 1 << 20


def _node_columns(distinct: Sequence[Node], rows: Sequence[int], pool: Any) -> dict[str, pa.ChunkedArray]:
    """The per-paper columns of raw.graph_nodes: the values of each distinct node, taken for every
    row (``rows``: the position in ``distinct`` of each row's node); as converting each row's
    values, but converting each node once."""
    arx = [nd.arxiv_id for nd in distinct]
    fields = {f.name: f.type for f in bschema.GRAPH_NODES}
    values = {
        "arxiv_id": pa.array([a or None for a in arx], fields["arxiv_id"]),
        "title": pa.array([nd.title for nd in distinct], fields["title"]),
        "year": pa.array([nd.year for nd in distinct], fields["year"]),
        "abstract": pa.array([nd.abstract for nd in distinct], fields["abstract"]),
        "has_full_text": pa.array([bool(a) and a in pool for a in arx], fields["has_full_text"]),
    }
    at = pa.array(rows, pa.int64())
    parts = [at.slice(i, TAKE_ROWS) for i in range(0, len(at), TAKE_ROWS)] or [at]
    return {name: pa.chunked_array([col.take(p) for p in parts], col.type) for name, col in values.items()}


def check_unique(release: Release) -> None:
    """The tables' KEYS are unique by construction (dict keys, positions) once item ids and paper
    ids are; the loader rejects duplicates of those, and this re-checks the item ids cheaply."""
    seen: set[str] = set()
    for it in release.items:
        if it.id in seen:
            raise IngestError(f"{Path(release.root) / RELEASE_FILES[0]}: duplicate item id {it.id!r}")
        seen.add(it.id)


def load_benchmark(root: Path, content_sha256: str) -> BenchmarkTables:
    """Parse the release with the harness loader and flatten it (no warehouse access)."""
    from agenthop.harness.benchmarks.agenthop.loader import load_release

    release = load_release(root)
    check_unique(release)
    tables = release_tables(release)
    sha = release.benchmark_sha256 or qa_sha16(root)
    return BenchmarkTables(str(root), sha, content_sha256, tables)


def reference_lookup(
    con: "duckdb.DuckDBPyConnection", new: dict[str, pa.Table] | None
) -> tuple[pa.Table, pa.Table]:
    """The graph nodes with full text and the sections (without text) that reference JSON resolves
    calls against: of the release being loaded (``new``), else of the warehouse."""
    if new is not None:
        return new["graph_nodes"], new["sections"].drop_columns(["text"])
    nodes = con.sql("SELECT sample_id, paper_id, arxiv_id FROM raw.graph_nodes WHERE has_full_text").to_arrow_table()
    secs = con.sql("SELECT arxiv_id, section_index, header, n_chars FROM raw.sections").to_arrow_table()
    return nodes, secs
