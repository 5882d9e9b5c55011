"""The SciExplore report's paired tests clustered by the task's domain (the benchmark's default), worked by hand.

Six T1 tasks in three domains (X: x1, x2; Y: y1, y2; Z: z1, z2); system alpha solves x1, x2, y1, z1, beta
solves y1, y2. A − B per task: (1, 1, 0, −1, 1, 0), mean 1/3. Per domain the residuals sum to
X: 2 − 2/3 = 4/3, Y: −1 − 2/3 = −5/3, Z: 1 − 2/3 = 1/3; squared and added 42/9 = 14/3, so the clustered
SE = sqrt(3/2 · 14/3) / 6 = sqrt(7)/6 = 0.4410 (the naive s/sqrt(n) is 1/3), and the 95% interval is
1/3 ± t(0.975, 2) · sqrt(7)/6 = 1/3 ± 4.302653 · 0.440959 = [−1.5640, 2.2307]. The sign-flip test of the
domain sums (2, −1, 1): 6 of the 8 sign vectors reach |sum| ≥ 2, p = 0.75. Exact McNemar: alpha only on
x1, x2, z1, beta only on y2: p = 2 · (1 + 4)/16 = 0.625.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner
from conftest import run_dbt_build
from sx_fixtures import response, write_jsonl

from agenthop.ingest.cli import main as ingest_main
from agenthop.reports.cli import main as report_main

DOMAINS = {"x1": "X", "x2": "X", "y1": "Y", "y2": "Y", "z1": "Z", "z2": "Z"}
SOLVED = {"alpha": {"x1", "x2", "y1", "z1"}, "beta": {"y1", "y2"}}


def _task(tid: str, domain: str) -> dict:
    return {"id": tid, "type": "T1", "domain": domain, "question": f"Which accession for {tid}?",
            "answer": f"ACC-{tid}", "aliases": [], "hops": 2, "databases": ["PDB"]}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("sx-clusters")
    rel = work / "release"
    rel.mkdir()
    write_jsonl(rel / "tasks.jsonl", [_task(t, d) for t, d in DOMAINS.items()])
    resp = write_jsonl(work / "responses.jsonl", [
        response(t, f"It is ACC-{t}." if t in SOLVED[m] else "It is ACC-0.", model=m)
        for m in SOLVED for t in DOMAINS])
    db = work / "w.duckdb"
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--benchmark", str(rel), "--responses", str(resp)])
    assert r.exit_code == 0, r.output
    proc = run_dbt_build(db, work, "--select", "path:models_sql/staging/sciexplore",
                         "path:models_sql/intermediate/sciexplore", "path:models_sql/marts/sciexplore")
    assert proc.returncode == 0, proc.stdout[-3000:]
    outs = {}
    for name, extra in (("default", []), ("item", ["--cluster", "item"])):
        out = work / name
        r = CliRunner().invoke(report_main, ["sciexplore", "--db", str(db), "--out", str(out),
                                             "--pair", "alpha,beta", *extra])
        assert r.exit_code == 0, r.output
        outs[name] = out
    bad = CliRunner().invoke(report_main, ["sciexplore", "--db", str(db), "--out", str(work / "bad"),
                                           "--cluster", "colour"])
    return {"outs": outs, "bad": bad}


def _row(out: Path) -> dict[str, str]:
    with (out / "tables" / "paired_tests.csv").open(encoding="utf-8") as fh:
        [row] = list(csv.DictReader(fh))
    return row


def test_paired_test_is_clustered_by_domain_by_default(report: dict) -> None:
    row = _row(report["outs"]["default"])
    assert (row["n_tasks"], row["a_only"], row["b_only"], row["n_clusters"]) == ("6", "3", "1", "3")
    assert float(row["p"]) == pytest.approx(0.625)
    half = 4.302653 * math.sqrt(7) / 6
    assert float(row["diff"]) == pytest.approx(1 / 3)
    assert float(row["diff_lo"]) == pytest.approx(1 / 3 - half, abs=1e-6)
    assert float(row["diff_hi"]) == pytest.approx(1 / 3 + half, abs=1e-6)
    assert float(row["p_clusters"]) == pytest.approx(0.75)
    # the caption names the tests, the interval, the clustering and where n and G are
    page = BeautifulSoup((report["outs"]["default"] / "index.html").read_text(encoding="utf-8"), "html.parser")
    text = " ".join(page.find(id="paired").get_text(" ", strip=True).split())
    for words in ("p (exact McNemar): over the tasks", "Clustered by domain (the benchmark's default",
                  "cluster-robust 95% t interval", "G domain clusters", "sign-flip test of the per-cluster sums",
                  "Tasks: the n of each test", "Holm (family-wise error) over the 1 test in each p column"):
        assert words in text, words


def test_cluster_item_gives_the_task_level_interval(report: dict) -> None:
    row = _row(report["outs"]["item"])
    # each task its own cluster: SE = s/sqrt(n) = 1/3, t on 5 degrees of freedom (2.570582)
    assert row["n_clusters"] == "6"
    assert float(row["diff_hi"]) == pytest.approx(1 / 3 + 2.570582 * (1 / 3), abs=1e-6)
    # sign-flip over the six tasks: non-zero differences (1, 1, −1, 1), |sum| 2 reached by 10 of 16
    assert float(row["p_clusters"]) == pytest.approx(10 / 16)
    text = (report["outs"]["item"] / "index.html").read_text(encoding="utf-8")
    assert "Clustered by task (--cluster item" in text


def test_unknown_cluster_field_is_a_clear_error(report: dict) -> None:
    bad = report["bad"]
    assert bad.exit_code != 0 and "Traceback" not in bad.output
    assert "--cluster colour" in bad.output and "domain" in bad.output
