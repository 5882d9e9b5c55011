"""Synthetic generator: counts, determinism, structural invariants, full-scale acceptance, CLI."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from agenthop.harness.benchmarks.agenthop.commands import make_benchmark as make_cmd
from agenthop.harness.describe_benchmark import describe_benchmark
from agenthop.harness.benchmarks.agenthop.describe import describe
from agenthop.harness.benchmarks.agenthop.generator import (
    CELL_COUNTS, REASONING_COUNTS, RELEASE_FILES, is_synthetic_release, make_benchmark, scale_counts,
)
from agenthop.harness.benchmarks.agenthop.labels import HEADER, NONE, PARENT, resolve_label
from agenthop.harness.benchmarks.agenthop.loader import load_release
from agenthop.harness.benchmarks.agenthop.model import Release

HEX40 = re.compile(r"^[0-9a-f]{40}$")
VENUES = {"NeurIPS", "ICML", "ICLR", "ACL", "EMNLP", "NAACL", "CVPR", "ECCV", "SIGIR"}


def _digest(root: Path) -> dict[str, str]:
    return {name: hashlib.sha256((root / name).read_bytes()).hexdigest() for name in (*RELEASE_FILES, "README.md")}


# -------------------------------------------------------------------------------------------------
# counts


def test_scale_counts_full_scale_is_exact() -> None:
    assert scale_counts(CELL_COUNTS, 1011) == CELL_COUNTS
    assert scale_counts(REASONING_COUNTS, 1011) == REASONING_COUNTS


def test_scale_counts_largest_remainder_by_hand() -> None:
    # quotas at 60: 5.341, 28.368, 23.501, 2.789 -> floors 5, 28, 23, 2; the two largest remainders
    # (.789 for mt_d2, .501 for mt_d1) get the two missing units
    assert scale_counts(CELL_COUNTS, 60) == {"st_d1": 5, "st_d2": 28, "mt_d1": 24, "mt_d2": 3}
    # at 4: largest remainder gives 0, 2, 2, 0; min-one moves a unit from each of the two largest
    assert scale_counts(CELL_COUNTS, 4) == {"st_d1": 1, "st_d2": 1, "mt_d1": 1, "mt_d2": 1}
    assert scale_counts(CELL_COUNTS, 3) == {"st_d1": 0, "st_d2": 2, "mt_d1": 1, "mt_d2": 0}
    for n in range(4, 80):
        got = scale_counts(CELL_COUNTS, n)
        assert sum(got.values()) == n and min(got.values()) >= 1


# -------------------------------------------------------------------------------------------------
# determinism


def test_same_seed_gives_identical_bytes_other_seed_differs(tmp_path: Path) -> None:
    make_benchmark(tmp_path / "a", 25, 7)
    make_benchmark(tmp_path / "b", 25, 7)
    make_benchmark(tmp_path / "c", 25, 8)
    a, b, c = _digest(tmp_path / "a"), _digest(tmp_path / "b"), _digest(tmp_path / "c")
    assert a == b
    assert all(a[name] != c[name] for name in RELEASE_FILES)


def test_determinism_does_not_depend_on_hash_randomisation(tmp_path: Path) -> None:
    code = "import sys; from agenthop.harness.benchmarks.agenthop.generator import make_benchmark; " \
           "make_benchmark(sys.argv[1], 12, 3)"
    for k, hash_seed in enumerate(("1", "2")):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        subprocess.run([sys.executable, "-c", code, str(tmp_path / str(k))], check=True, env=env)
    assert _digest(tmp_path / "0") == _digest(tmp_path / "1")


# -------------------------------------------------------------------------------------------------
# structure at N = 60


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Release:
    root = tmp_path_factory.mktemp("bench60")
    make_benchmark(root, 60, 0)
    return load_release(root, strict_labels=True)


def test_mix_and_item_fields(small: Release) -> None:
    items = small.items
    assert len(items) == 60
    assert Counter(i.cell for i in items) == scale_counts(CELL_COUNTS, 60)
    assert Counter(i.reasoning_type for i in items) == scale_counts(REASONING_COUNTS, 60)
    assert {i.consensus_tier for i in items} == {"gold", "silver", "bronze"}
    assert {i.venue for i in items} <= VENUES
    assert len({i.id for i in items}) == 60
    assert Counter(i.correct_index for i in items) == {0: 15, 1: 15, 2: 15, 3: 15}
    # the first items already mix all four cells (stratified file order)
    assert {i.cell for i in items[:15]} == {"st_d1", "st_d2", "mt_d1", "mt_d2"}
    for item in items:
        assert re.fullmatch(r"(st|mt)_\d{4}", item.id)
        assert item.id.startswith("mt_") == item.is_multi_target
        assert len(item.gold_paper_ids) == (2 if item.is_multi_target else 1)
        assert len(set(item.options)) == 4
        assert item.distractor_types is not None
        assert item.distractor_types[item.correct_index] == "correct"
        assert sorted(item.distractor_types).count("correct") == 1
        assert set(item.distractor_types) <= {"correct", "seed_only", "wrong_paper", "no_context"}
        assert item.filter_agreement is not None
        graph = small.graphs[item.id]
        for gid in item.gold_paper_ids:
            title = graph.nodes[gid].title
            assert title.lower() not in item.question.lower()
            # the question shares topical words with the gold abstract (search_papers overlap)
            words = set(re.findall(r"\w+", item.question.lower()))
            assert len(words & set(re.findall(r"\w+", graph.nodes[gid].abstract.lower()))) >= 3
        assert all(HEX40.match(pid) for pid in graph.nodes)
        if item.depth == 2:
            assert item.bridge_necessary is not None  # qa row (MT) or chain_coherence (ST)
            assert item.bridge_paper_ids
        else:
            assert item.bridge_paper_ids == ()


def test_neighbourhoods_follow_package_release(small: Release) -> None:
    pool = small.papers
    arxiv_meta: set[str] = set()
    empty_meta = 0
    for item in small.items:
        g = small.graphs[item.id]
        nodes = list(g.nodes)
        seed = item.seed_paper_id
        assert nodes[0] == seed and g.nodes[seed].year in (2022, 2023, 2024, 2025)
        d1 = g.edges[seed]
        assert 0 < len(d1) <= 30 and len(set(d1)) == len(d1)
        # insertion order: seed, depth-1 in seed reference order, then depth-2
        assert nodes[1:1 + len(d1)] == list(d1)
        # only seed and depth-1 papers have edges; depth-2 papers have none
        assert set(g.edges) == {seed, *d1}
        assert all(len(dsts) <= 30 for dsts in g.edges.values())
        reachable = {seed, *d1, *(x for j in d1 for x in g.edges[j])}
        assert reachable == set(nodes)
        # seed, bridges and golds have full text
        for pid in (seed, *item.gold_paper_ids, *item.bridge_paper_ids):
            assert g.nodes[pid].arxiv_id in pool
        assert [g.nodes[p].arxiv_id for p in item.gold_paper_ids] == list(item.gold_arxiv_ids)
        assert item.seed_arxiv_id == g.nodes[seed].arxiv_id and item.seed_title == g.nodes[seed].title
        if item.depth == 1:
            assert all(gid in d1 for gid in item.gold_paper_ids)
        else:
            for gid in item.gold_paper_ids:
                assert gid not in d1 and gid != seed
                assert any(gid in g.edges[b] for b in item.bridge_paper_ids)
            assert all(b in d1 for b in item.bridge_paper_ids)
        for node in g.nodes.values():
            if node.arxiv_id == "":
                empty_meta += 1
            elif node.arxiv_id not in pool:
                arxiv_meta.add(node.arxiv_id)
    assert empty_meta > 0 and arxiv_meta  # both kinds of metadata-only nodes occur
    # the pool is shared across items: some paper is in more than one neighbourhood
    seen = Counter(n.arxiv_id for g in small.graphs.values() for n in g.nodes.values() if n.arxiv_id in pool)
    assert max(seen.values()) > 1


def test_papers_sections_and_headers(small: Release) -> None:
    headers = [s.header for p in small.papers.values() for s in p.sections]
    assert all(5 <= len(p.sections) <= 15 for p in small.papers.values())
    assert any(re.fullmatch(r"Apdx_[A-H]: .+", h) for h in headers)
    assert any(re.fullmatch(r"Apdx_[A-H]\.\d: .+", h) for h in headers)
    assert any(re.fullmatch(r"\d+ \w.*", h) for h in headers)  # numbered headers occur
    assert "Introduction" in headers and "Related Work" in headers
    lengths = sorted(len(s.text) for p in small.papers.values() for s in p.sections)
    assert lengths[0] < 400 and lengths[-1] > 10_000
    # subsection titles embedded in parent text, e.g. "... 3.1 Training Objective We ..."
    assert any(re.search(r"\b\d+\.\d [A-Z][a-z]+", s.text) for p in small.papers.values() for s in p.sections)
    assert any(not c.isascii() for p in list(small.papers.values())[:50] for s in p.sections for c in s.text)


def test_labels_cover_every_gold_and_mostly_resolve(small: Release) -> None:
    kinds: Counter[str] = Counter()
    on_roles: Counter[str] = Counter()
    parent_matches: list[int] = []
    for item in small.items:
        labels = small.labels[item.id]
        for aid in item.gold_arxiv_ids:
            direct = [lab for lab in labels if lab.arxiv_id == aid and lab.relevance == "direct"]
            assert direct, f"{item.id}: no direct label on gold {aid}"
            # at least one direct label per gold resolves, and a section holding it contains the planted fact
            assert any(resolve_label(lab, small.papers[aid])[0] != NONE for lab in direct)
        for lab in labels:
            paper = small.papers.get(lab.arxiv_id)
            kind, idx = resolve_label(lab, paper)
            kinds[kind] += 1
            if lab.arxiv_id == item.seed_arxiv_id:
                on_roles["seed"] += 1
            elif lab.arxiv_id in item.bridge_arxiv_ids:
                on_roles["bridge"] += 1
            if kind == PARENT:
                parent_matches.append(len(idx))
    total = sum(kinds.values())
    assert kinds[HEADER] > 0.5 * total and kinds[PARENT] > 0.1 * total
    assert 0 < kinds[NONE] < 0.1 * total
    # embedded subsection titles are distinctive: almost all resolve to exactly one parent section
    assert sum(1 for n in parent_matches if n == 1) >= 0.9 * len(parent_matches)
    assert on_roles["seed"] > 0 and on_roles["bridge"] > 0
    relevance = Counter(lab.relevance for labs in small.labels.values() for lab in labs)
    assert relevance["direct"] > 0 and relevance["supporting"] > 0


def test_correct_option_is_supported_by_a_labelled_section(small: Release) -> None:
    for item in small.items:
        if item.is_multi_target or item.reasoning_type != "RESULT":
            continue
        gain = re.search(r"by (\d+\.\d) points", item.options[item.correct_index])
        assert gain is not None
        aid = item.gold_arxiv_ids[0]
        paper = small.papers[aid]
        sections = {i for lab in small.labels[item.id] if lab.arxiv_id == aid and lab.relevance == "direct"
                    for i in resolve_label(lab, paper)[1]}
        assert any(f"by {gain.group(1)} points" in paper.sections[i].text for i in sections)


def test_readme_and_describe_of_small_release(small: Release) -> None:
    root = Path(small.root)
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "SYNTHETIC" in readme and "- seed: 0" in readme and "- items: 60" in readme
    assert is_synthetic_release(root)
    d = describe(small)
    assert d["gold_papers"] == d["gold_papers_with_resolvable_direct_label"] == 87
    assert d["edges_to_unknown_nodes"] == 0 and d["gold_papers_without_full_text"] == 0


# -------------------------------------------------------------------------------------------------
# full scale (about 15-25 s on two cores)


@pytest.mark.slow
def test_full_scale_acceptance_numbers(tmp_path: Path) -> None:
    make_benchmark(tmp_path, 1011, 0)
    d = describe(load_release(tmp_path, strict_labels=True))
    assert d["cells"] == {"st_d1": 90, "st_d2": 478, "mt_d1": 396, "mt_d2": 47}
    assert d["reasoning_types"] == {"GROUND": 330, "RESULT": 292, "MOTIVE": 265, "METHOD": 124}
    assert set(d["venues"]) == VENUES
    assert abs(d["papers_in_pool"] - 7200) <= 720
    assert d["edges_total"] >= 100_000
    assert abs(d["neighbourhood_size"]["mean"] - 311) <= 40
    assert abs(d["metadata_only_share"] - 0.57) <= 0.04
    assert d["gold_papers"] == d["gold_papers_with_resolvable_direct_label"] == 90 + 478 + 2 * (396 + 47)
    sl = d["section_length"]
    assert 600 <= sl["p50"] <= 1300 and 1100 <= sl["mean"] <= 1900 and sl["max"] >= 20_000
    assert (tmp_path / "paper_pool/papers.jsonl").stat().st_size < 125_000_000


# -------------------------------------------------------------------------------------------------
# CLI


def test_cli_make_and_describe(tmp_path: Path) -> None:
    out = tmp_path / "rel"
    runner = CliRunner()
    res = runner.invoke(make_cmd, ["--out", str(out), "--items", "8", "--seed", "5"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith(f"wrote synthetic release {out}: 8 items (st_d1 1, st_d2 3, mt_d1 3, mt_d2 1)")
    first = _digest(out)
    # a previous synthetic release is overwritten without --force
    res = runner.invoke(make_cmd, ["--out", str(out), "--items", "8", "--seed", "5"])
    assert res.exit_code == 0 and _digest(out) == first
    res = runner.invoke(describe_benchmark, [str(out), "--json"])
    assert res.exit_code == 0, res.output
    stats = json.loads(res.output)
    assert stats["items"] == 8 and stats["cells"] == {"st_d1": 1, "st_d2": 3, "mt_d1": 3, "mt_d2": 1}
    res = runner.invoke(describe_benchmark, [str(out)])
    assert res.exit_code == 0 and "items            8: st_d1 1, st_d2 3, mt_d1 3, mt_d2 1" in res.output


def test_cli_refuses_foreign_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    runner = CliRunner()
    res = runner.invoke(make_cmd, ["--out", str(tmp_path), "--items", "4"])
    assert res.exit_code == 2
    assert "not empty and does not hold a synthetic release" in res.output
    assert not (tmp_path / "qa").exists()
    res = runner.invoke(make_cmd, ["--out", str(tmp_path), "--items", "4", "--force"])
    assert res.exit_code == 0 and (tmp_path / "notes.txt").exists() and is_synthetic_release(tmp_path)


def test_cli_describe_reports_invalid_release(tmp_path: Path) -> None:
    make_benchmark(tmp_path, 4, 1)
    qa = tmp_path / "qa/full.jsonl"
    lines = qa.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[2])
    del row["correct_index"]
    lines[2] = json.dumps(row)
    qa.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = CliRunner().invoke(describe_benchmark, [str(tmp_path)])
    assert res.exit_code == 2
    assert "qa/full.jsonl:3: field 'correct_index': missing required field" in res.output
