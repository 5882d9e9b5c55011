"""SciExplore release: the synthetic generator's shape and the loader's error messages."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from agenthop.harness.benchmarks.sciexplore.generator import write_release
from agenthop.harness.benchmarks.sciexplore.release import ReleaseError, load_release
from agenthop.harness.benchmarks.sciexplore.simulate import SYSTEMS, write_responses
from agenthop.harness.cli import main as harness_main
from agenthop.ingest.cli import main as ingest_main


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("sx") / "release"
    write_release(root, seed=0)
    return root


def test_synthetic_release_has_the_papers_shape(release_dir: Path) -> None:
    rel = load_release(release_dir)
    assert len(rel.tasks) == 103
    assert Counter(t.type for t in rel.tasks) == {"T1": 39, "T2": 32, "T3": 14, "T4": 18}
    assert Counter(t.hops for t in rel.tasks if t.type == "T1") == {2: 9, 3: 10, 4: 8, 5: 8, 6: 4}
    assert len({t.domain for t in rel.tasks}) >= 10


def test_corpus_holds_every_tasks_evidence_plus_distractors(release_dir: Path) -> None:
    rel = load_release(release_dir)
    texts = [d.title + " " + d.text for d in rel.documents]
    titles = {d.title for d in rel.documents if d.kind == "paper"}
    for t in rel.tasks:
        if t.type == "T1":
            assert sum(t.answer in x for x in texts) == 1, t.id
            assert sum(1 for d in rel.documents if d.kind == "record" and t.answer in d.text) == 1
        elif t.type == "T2":
            assert t.answer in titles
        elif t.type == "T3":
            assert all(r.title in titles for g in t.groups for r in g.references)
        else:
            for row in t.rows:  # one source paper per row with every value
                assert any(all(v in x for v in row.values()) for x in texts), (t.id, row)
    evidence = sum(t.hops for t in rel.tasks if t.type == "T1")
    assert sum(1 for d in rel.documents if d.kind == "record") == 2 * evidence  # one distractor per record


def test_same_seed_same_bytes_other_seed_other_tasks(tmp_path: Path, release_dir: Path) -> None:
    write_release(tmp_path / "a", seed=0)
    write_release(tmp_path / "b", seed=1)
    same = (tmp_path / "a" / "tasks.jsonl").read_bytes()
    assert same == (release_dir / "tasks.jsonl").read_bytes()
    assert (tmp_path / "a" / "corpus" / "documents.jsonl").read_bytes() == \
        (release_dir / "corpus" / "documents.jsonl").read_bytes()
    assert same != (tmp_path / "b" / "tasks.jsonl").read_bytes()
    assert load_release(tmp_path / "a").sha256 != load_release(tmp_path / "b").sha256


def test_make_benchmark_command(tmp_path: Path) -> None:
    out = tmp_path / "rel"
    r = CliRunner().invoke(harness_main, ["make-benchmark", "--benchmark", "sciexplore", "--out", str(out),
                                          "--seed", "2"])
    assert r.exit_code == 0, r.output
    assert "103 tasks (T1 39, T2 32, T3 14, T4 18)" in r.output
    assert len(load_release(out).tasks) == 103
    r = CliRunner().invoke(harness_main, ["make-benchmark", "--benchmark", "sciexplore", "--out", str(out)])
    assert r.exit_code == 0, r.output  # a synthetic release is overwritten
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    r = CliRunner().invoke(harness_main, ["make-benchmark", "--benchmark", "sciexplore", "--out", str(other)])
    assert r.exit_code == 2 and "not empty" in r.output
    assert (other / "notes.txt").read_text() == "mine"


T1 = {"id": "a", "type": "T1", "domain": "d", "question": "q?", "answer": "x", "aliases": [], "hops": 2,
      "databases": ["PDB"]}
T3 = {"id": "c", "type": "T3", "domain": "d", "question": "q", "paragraph": "p [CITE_1].",
      "groups": [{"slot": "CITE_1", "references": [{"title": "t", "year": 2020, "authors": ["A"], "venue": "v",
                                                     "doi": None}]}]}
T4 = {"id": "e", "type": "T4", "domain": "d", "question": "q", "columns": ["K", "V"], "primary_key": "K",
      "rows": [{"K": "a", "V": "1"}]}


def _write(tmp_path: Path, lines: list) -> Path:
    root = tmp_path / "bad"
    root.mkdir(exist_ok=True)
    (root / "tasks.jsonl").write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return root


@pytest.mark.parametrize(
    ("lines", "where", "message"),
    [
        ([T1, "{oops"], ":2:", "not valid JSON"),
        ([T1 | {"hops": 7}], ":1: field 'hops'", "between 2 and 6"),
        ([T1 | {"hops": "3"}], ":1: field 'hops'", "expected integer"),
        ([{k: v for k, v in T1.items() if k != "answer"}], ":1: field 'answer'", "missing"),
        ([T1 | {"type": "T9"}], ":1: field 'type'", "must be one of"),
        ([T1, T1], ":2: field 'id'", "already used on line 1"),
        ([T1 | {"aliases": ["ok", 3]}], ":1: field 'aliases[1]'", "expected string"),
        ([T3 | {"paragraph": "p [CITE_1] [CITE_2]."}], ":1: field 'groups'", "without a group: CITE_2"),
        ([T3 | {"paragraph": "no slots"}], ":1: field 'groups[0].slot'", "does not occur"),
        ([json.loads(json.dumps(T3).replace('"year": 2020', '"year": null'))],
         ":1: field 'groups[0].references[0].year'", "expected integer"),
        ([T4 | {"primary_key": "Z"}], ":1: field 'primary_key'", "not one of the columns"),
        ([T4 | {"rows": [{"K": "a", "V": "1"}, {"K": "a", "V": "2"}]}], ":1: field 'rows[1].K'", "appears twice"),
        ([T4 | {"rows": [{"K": "a"}]}], ":1: field 'rows[0].V'", "missing"),
        ([T4 | {"rows": [{"K": "a", "V": "1", "W": "2"}]}], ":1: field 'rows[0]'", "unknown column"),
        (["[1, 2]"], ":1:", "expected a JSON object"),
    ],
)
def test_loader_names_file_line_and_field(tmp_path: Path, lines: list, where: str, message: str) -> None:
    root = _write(tmp_path, lines)
    with pytest.raises(ReleaseError) as exc:
        load_release(root)
    text = str(exc.value)
    assert str(root / "tasks.jsonl") + where in text and message in text, text


def test_loader_checks_the_corpus(tmp_path: Path) -> None:
    root = _write(tmp_path, [T1])
    (root / "corpus").mkdir()
    doc = {"id": "d1", "kind": "record", "database": None, "title": "t", "text": "x", "url": "u", "year": None}
    (root / "corpus" / "documents.jsonl").write_text(json.dumps(doc) + "\n")
    with pytest.raises(ReleaseError, match=r"documents.jsonl:1: field 'database': a record names its database"):
        load_release(root)
    (root / "corpus" / "documents.jsonl").write_text(json.dumps(doc | {"kind": "paper"}) + "\n")
    assert load_release(root).documents[0].kind == "paper"
    with pytest.raises(ReleaseError, match="not a SciExplore release"):
        load_release(tmp_path)


def test_simulated_responses_are_seeded_and_load(tmp_path: Path, release_dir: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    rel = load_release(release_dir)
    assert write_responses(a, rel, seed=0) == len(SYSTEMS) * 4 * 103
    write_responses(b, rel, seed=0)
    assert a.read_bytes() == b.read_bytes()
    lines = [json.loads(x) for x in a.read_text().splitlines()]
    assert {x["paradigm"] for x in lines} == {"foundation", "search", "deep_research"}
    assert {x["status"] for x in lines} == {"answered", "not_attempted", "error"}
    assert all(not x["trace"] for x in lines if x["paradigm"] == "foundation")
    judg = tmp_path / "j.jsonl"
    r = CliRunner().invoke(harness_main, ["make-benchmark", "--benchmark", "sciexplore", "--out",
                                          str(tmp_path / "rel"), "--responses", str(tmp_path / "c.jsonl"),
                                          "--judgments", str(judg)])
    assert r.exit_code == 0 and "SIMULATED" in r.output, r.output
    assert (tmp_path / "c.jsonl").read_bytes() == a.read_bytes()
    db = tmp_path / "w.duckdb"
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--benchmark", str(release_dir), "--responses", str(a),
                                         "--judgments", str(judg)])
    assert r.exit_code == 0 and f"responses of {len(SYSTEMS) * 4} run(s)" in r.output, r.output
    with duckdb.connect(str(db), read_only=True) as con:
        # the simulated judge covers exactly the units normalized-match judged, and disagrees on some
        assert con.execute("SELECT judge, count(*) FROM raw.judgments GROUP BY judge ORDER BY judge").fetchall() == [
            ("normalized-match", 6749), ("sim-strict-judge", 6749)]
        differ = con.execute(
            "SELECT count(*) FROM raw.judgments a JOIN raw.judgments b USING (run_id, task_id, unit) "
            "WHERE a.judge = 'normalized-match' AND b.judge = 'sim-strict-judge' AND a.verdict <> b.verdict "
            "AND a.slot IS NOT DISTINCT FROM b.slot AND a.ref_index IS NOT DISTINCT FROM b.ref_index "
            "AND a.row_key IS NOT DISTINCT FROM b.row_key AND a.\"column\" IS NOT DISTINCT FROM b.\"column\"").fetchall()
    assert 0 < differ[0][0] < 6749 * 0.2
    with duckdb.connect(str(db), read_only=True) as con:
        kinds = set(con.execute("SELECT DISTINCT unit, verdict FROM raw.judgments").fetchall())
    assert kinds >= {("answer", "correct"), ("answer", "incorrect"), ("answer", "not_attempted"),
                     ("citation", "correct"), ("citation", "incorrect"), ("cell", "correct"), ("cell", "incorrect")}
