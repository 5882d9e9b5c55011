"""Clustered intervals and tests of the shared pages (reports/core/clusters.py, clustered_tables.py) and the
leaderboard's cost–quality data (reports/core/cost_quality.py), on hand-built data worked out by hand.

The pages: the toy benchmark ``toyqa`` (tests/test_core_other_benchmark.py) registered with clusters
t1 -> x, t2 -> y, t3 -> y. Its primary scores: r0 t1 0.5, t2 1.0, t3 0.0; r1 t1 1.0, t2 1.0, t3 none.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from bs4 import BeautifulSoup

from agenthop.harness.errors import AgentHopError
from agenthop.reports.budget import budget_interval
from agenthop.reports.core import clusters, cost_quality, registry
from agenthop.reports.warehouse import Warehouse
from tests.report_fixtures import run
from tests.test_core_other_benchmark import NAME, registered, warehouse  # noqa: F401  (fixtures)

T975_1 = 12.706204736174704  # t quantile 0.975 on 1 degree of freedom
T975_2 = 4.302652729749464


def _clustering(labels: dict[str, str]) -> clusters.Clustering:
    return clusters.Clustering("b", "family", labels, declared=True)


def test_paired_clustered_by_hand() -> None:
    # d = A − B = (1, 0, 1, 0) on i1..i4; clusters p = {i1, i2}, q = {i3}, r = {i4}
    a = {"i1": 1.0, "i2": 1.0, "i3": 1.0, "i4": 0.0}
    b = {"i1": 0.0, "i2": 1.0, "i3": 0.0, "i4": 0.0, "only_b": 1.0}
    res = clusters.paired(a, b, _clustering({"i1": "p", "i2": "p", "i3": "q", "i4": "r"}))
    assert (res.n_items, res.n_clusters) == (4, 3)
    # mean 0.5; residuals summed per cluster: p 0.5 − 0.5 = 0, q 0.5, r −0.5 -> SE = sqrt(3/2 · 0.5) / 4
    se = (1.5 * 0.5) ** 0.5 / 4
    assert res.diff.mean == 0.5 and res.diff.n_clusters == 3
    assert res.diff.lo == pytest.approx(0.5 - T975_2 * se) and res.diff.hi == pytest.approx(0.5 + T975_2 * se)
    # cluster sums (1, 1, 0): two non-zero, |±1 ±1| >= 2 in 2 of the 4 sign vectors -> p = 0.5
    assert (res.sign_flip.n_nonzero, res.sign_flip.p, res.sign_flip.exact) == (2, 0.5, True)


def test_mean_interval_items_without_a_label_are_their_own_cluster() -> None:
    # scores 1, 0 in cluster a and 1 alone (no label): mean 2/3, cluster residual sums (1/3 − 2/3 = −1/3) and
    # 1/3 -> SE = sqrt(2 · 2/9) / 3 = 2/9
    ci = clusters.mean_interval({"i1": 1.0, "i2": 0.0, "i3": 1.0}, _clustering({"i1": "a", "i2": "a"}))
    assert (ci.n_items, ci.n_clusters) == (3, 2)
    assert ci.lo == pytest.approx(2 / 3 - T975_1 * 2 / 9) and ci.hi == pytest.approx(2 / 3 + T975_1 * 2 / 9)
    one = clusters.mean_interval({"i1": 1.0, "i2": 0.0}, _clustering({"i1": "a", "i2": "a"}))
    assert (one.mean, one.lo, one.hi, one.n_clusters) == (0.5, None, None, 1)  # one cluster: no interval
    assert clusters.mean_interval({}, _clustering({})).mean is None


def test_describe_names_the_field_and_the_counts() -> None:
    c = _clustering({"i1": "a", "i2": "a"})
    assert c.describe(["i1", "i2", "i3"]) == "clustered by family (2 clusters over 3 items; --cluster)"
    by_item = clusters.Clustering("b", clusters.ITEM)
    assert by_item.describe(["i1"]) == "clustered by item (1 item; repeats of an item pooled into its value)"


# -- the toyqa pages -----------------------------------------------------------------------------------


def _toy_clusters(wh: Warehouse, benchmark: str, name: str) -> dict[str, str]:
    if name != "family":
        raise AgentHopError(f"--cluster {name}: toyqa items have no field {name!r}; fields: family")
    return {"t1": "x", "t2": "y", "t3": "y"}


@pytest.fixture(scope="module")
def toy_sections(registered) -> Iterator[registry.ReportSections]:  # noqa: F811
    s = registry.ReportSections(name=NAME, cluster_default="family", cluster_labels=_toy_clusters)
    registry.register(s)
    try:
        yield s
    finally:
        registry.unregister(NAME)


def _page(warehouse: Path, out: Path, *args: str) -> BeautifulSoup:  # noqa: F811
    code, _, err = run(*args, "--db", str(warehouse), "--out", str(out))
    assert code == 0, err
    return BeautifulSoup(out.read_text(encoding="utf-8"), "html.parser")


def _table(soup: BeautifulSoup, heading: str) -> list[list[str]]:
    h = next(x for x in soup.find_all(["h2", "h3"]) if x.get_text(strip=True).startswith(heading))
    return [[c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])] for tr in h.find_next("table").find_all("tr")]


def test_reruns_page_clustered_by_the_default_field(warehouse: Path, toy_sections, tmp_path: Path) -> None:  # noqa: F811
    soup = _page(warehouse, tmp_path / "reruns.html", "reruns", "--model", "toy-model")
    rows = {r[0]: r[1:] for r in _table(soup, "Means with clustered intervals")}
    # r0: mean 0.5; residuals 0 (x) and 0.5 − 0.5 = 0 (y): SE 0 -> [0.5, 0.5]
    assert rows["replicate 0"] == ["3", "2", "0.500 [0.500, 0.500]"]
    # r1: t1, t2 both 1 -> [1, 1]
    assert rows["replicate 1"] == ["2", "2", "1.000 [1.000, 1.000]"]
    # pooled per item: t1 0.75, t2 1.0, t3 0.0, mean 7/12; residual sums x 1/6, y 5/12 − 7/12 = −1/6:
    # SE = sqrt(2 · 2/36) / 3 = 1/9, half-width t(0.975, 1)/9
    half = T975_1 / 9
    assert rows["pooled"] == ["3", "2", f"0.583 [{7 / 12 - half:.3f}, {7 / 12 + half:.3f}]"]
    note = soup.find(string=lambda s: s and "clustered by family (2 clusters over 3 items" in s)
    assert note is not None and "the benchmark's default" in note


def test_leaderboard_row_clustered(warehouse: Path, toy_sections, tmp_path: Path) -> None:  # noqa: F811
    soup = _page(warehouse, tmp_path / "lb.html", "leaderboard", "--benchmark", NAME)
    head, row = _table(soup, NAME)[:2]
    cells = dict(zip(head, row))
    # both replicates pooled per item (t1 0.75, t2 1, t3 0), as the reruns page's pooled row
    half = T975_1 / 9
    assert cells["score"].split()[0] == "0.583" and cells["clusters"] == "2" and cells["items"] == "3 of 3"
    assert cells["score"].endswith("(1 missing in 1 of 2 replicates)")  # coverage under the score
    assert cells["95% interval"] == f"[{7 / 12 - half:.3f}, {7 / 12 + half:.3f}]"
    assert soup.find(string=lambda s: s and "clustered by family (2 clusters over 3 items" in s) is not None
    assert soup.find(id=lambda i: i and i.startswith("frontier")) is None  # one model: no frontier
    # --cluster item: the bootstrap over items again, no clusters column
    plain = _page(warehouse, tmp_path / "lb_item.html", "leaderboard", "--benchmark", NAME, "--cluster", "item")
    assert "clusters" not in _table(plain, NAME)[0]


def test_compare_page_cluster_sign_flip_and_item_switch(warehouse: Path, toy_sections, tmp_path: Path) -> None:  # noqa: F811
    soup = _page(warehouse, tmp_path / "c.html", "compare", "--runs", "r0,r1")
    rows = {r[0]: r[1:] for r in _table(soup, "Clustered by family")}
    # shared items t1, t2: A − B = −0.5 (x), 0 (y); mean −0.25, residuals −0.25 and 0.25: SE = sqrt(2 · 0.125)/2 = 0.25
    lo, hi = -0.25 - T975_1 * 0.25, -0.25 + T975_1 * 0.25
    # cluster sums (−0.5, 0): one non-zero, both of its signs reach 0.5 -> p = 1
    assert rows["A − B"] == ["2", "2", f"-0.250 [{lo:.3f}, {hi:.3f}]", "1.00"]
    assert rows["A"][:2] == ["2", "2"]
    # --cluster item: the page's own tests are already over items; no clustered table
    plain = _page(warehouse, tmp_path / "c_item.html", "compare", "--runs", "r0,r1", "--cluster", "item")
    assert plain.find(id="clustered") is None
    # an unknown field is a user error naming the fields there are
    code, _, err = run("compare", "--runs", "r0,r1", "--cluster", "nope", "--db", str(warehouse),
                       "--out", str(tmp_path / "x.html"))
    assert code != 0 and "toyqa items have no field 'nope'; fields: family" in err and "Traceback" not in err


def test_budget_interval_by_hand() -> None:
    # 0/1 metric: Wilson of 2 right out of 2
    w = budget_interval(2, 2.0, 2.0, binary=True)
    assert (w.mean, w.method, w.hi) == (1.0, "Wilson", 1.0) and w.lo == pytest.approx(0.3424, abs=1e-4)
    # graded: values 0.5, 1 and an unanswered 0 -> mean 0.5, s² = (1.25 − 3 · 0.25) / 2 = 0.25
    t = budget_interval(3, 1.5, 1.25, binary=False)
    half = T975_2 * 0.5 / 3 ** 0.5
    assert (t.mean, t.method) == (0.5, "t") and t.lo == pytest.approx(0.5 - half) and t.hi == pytest.approx(0.5 + half)
    assert budget_interval(1, 0.5, 0.25, binary=False).lo is None
    with pytest.raises(ValueError):
        budget_interval(0, 0.0, 0.0, binary=True)


def test_compare_page_budget_curves(warehouse: Path, toy_sections, tmp_path: Path) -> None:  # noqa: F811
    soup = _page(warehouse, tmp_path / "c_budget.html", "compare", "--runs", "r0,r1")
    table = _table(soup, "Budget curves")
    rows = {(r[0], r[1]): r[2:] for r in table[1:]}
    # tokens: one grid for the benchmark, 20 steps up to its largest use (100): r0 has t2 (1.0, 50 tokens) by 50
    # and t1 (0.5, 100) by 100, t3 never (stopped by a limit); r1 t1 (1.0, 40) and t2 (1.0, 60) over its 2 items
    # with a value. r0 is graded (t interval), r1 0/1 (Wilson).
    half = T975_2 * 0.5 / 3 ** 0.5
    assert rows[("cap on tokens per item", "100")] == [f"0.500 [{0.5 - half:.3f}, {0.5 + half:.3f}]", "1.000 [0.342, 1.000]"]
    assert rows[("cap on tokens per item", "50")][1] == "0.500 [0.095, 0.905]"  # Wilson 1 of 2
    assert rows[("cap on tokens per item", "25")][1] == "0.000 [0.000, 0.658]"
    # turns: caps 1, 2, 3 (ceil(3k/20)); r0 t2 answered in 2 turns
    assert rows[("cap on turns", "2")][0].startswith("0.333")
    assert soup.find(string=lambda s: s and "would have behaved differently" in s) is not None


# -- cost per item and the metric's direction on a hand-built warehouse --------------------------------------


@pytest.fixture()
def cost_db(tmp_path: Path) -> Path:
    db = tmp_path / "cost.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE SCHEMA staging")
    con.execute("CREATE TABLE main.model_cost (run_id VARCHAR, pricing_found BOOLEAN, input_per_m DOUBLE, "
                "output_per_m DOUBLE, cache_read_mult DOUBLE, cache_write_mult DOUBLE)")
    con.execute("INSERT INTO main.model_cost VALUES ('p', true, 2.0, 10.0, 0.1, 1.25), ('q', false, NULL, NULL, NULL, NULL)")
    con.execute("CREATE TABLE staging.stg_harness__trajectories (run_id VARCHAR, sample_id VARCHAR, prompt_tokens BIGINT, "
                "completion_tokens BIGINT, cache_read_tokens BIGINT, cache_creation_tokens BIGINT)")
    # item s1 of run p has two attempts (both billed)
    con.execute("INSERT INTO staging.stg_harness__trajectories VALUES ('p', 's1', 1000, 100, 0, 0), "
                "('p', 's1', 500, 0, 1000, 0), ('p', 's2', 0, 0, 0, 800), ('q', 's1', 10, 20, 30, 40)")
    con.execute("CREATE TABLE main.metric_defs (benchmark VARCHAR, metric VARCHAR, direction VARCHAR, is_primary BOOLEAN)")
    con.execute("INSERT INTO main.metric_defs VALUES ('b', 'err', 'lower_is_better', true), ('b', 'acc', 'higher_is_better', false)")
    con.close()
    return db


def test_item_costs_usd_when_priced_else_all_tokens(cost_db: Path) -> None:
    with Warehouse(cost_db) as wh:
        cols, unit = cost_quality.item_costs(wh, ["p"])
        usd = cols.to_dict()
        assert unit == "USD"
        # s1: (1500 · 2 + 1000 · 2 · 0.1 + 100 · 10) / 1e6 = 0.0042; s2: 800 · 2 · 1.25 / 1e6 = 0.002
        assert usd[("p", "s1")] == pytest.approx(0.0042) and usd[("p", "s2")] == pytest.approx(0.002)
        cols, unit = cost_quality.item_costs(wh, ["p", "q"])  # q has no price: every run in tokens
        toks = cols.to_dict()
        assert unit == "all tokens"
        assert toks == {("p", "s1"): 2600.0, ("p", "s2"): 800.0, ("q", "s1"): 100.0}
        assert cost_quality.metric_direction(wh, "b") == "lower_is_better"
        assert cost_quality.metric_direction(wh, "b", "acc") == "higher_is_better"
        assert cost_quality.metric_direction(wh, "unknown") == "higher_is_better"


def test_leaderboard_frontier_on_the_demo_panel(built_warehouse, tmp_path: Path) -> None:
    """The frontier table of the AgentHop board: one row per model, the observed frontier the Pareto set of the
    means it prints (recomputed here), a frontier model's share of draws high and a dominated one's below 1."""
    from agenthop.reports.frontier import pareto_mask
    import numpy as np

    soup = _page(built_warehouse.db, tmp_path / "lb.html", "leaderboard", "--benchmark", "agenthop")
    rows = [r for r in _table(soup, "Cost against quality")[1:]]
    assert len(rows) >= 3
    cost = np.array([float(r[2].replace(",", "")) for r in rows])
    score = np.array([float(r[4]) for r in rows])
    on = [r[6] == "yes" for r in rows]
    assert pareto_mask(cost, score).tolist() == on
    shares = [float(r[7]) for r in rows]
    assert all(0 <= s <= 100 for s in shares)
    assert min(s for s, o in zip(shares, on) if o) > 50 and any(not o for o in on)
    head = _table(soup, "Cost against quality")[0]
    assert head[2] == "cost / item (all tokens)"  # simulated models have no price


def test_each_benchmarks_cluster_fields_on_a_hand_built_warehouse(tmp_path: Path) -> None:
    from agenthop.reports.agenthop import item_clusters
    from agenthop.reports.inspect import metadata_clusters
    from agenthop.reports.sciexplore.sections import task_clusters

    db = tmp_path / "fields.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE SCHEMA raw")
    con.execute("CREATE TABLE raw.items (sample_id VARCHAR, seed_paper_id VARCHAR, depth INTEGER)")
    con.execute("INSERT INTO raw.items VALUES ('a', 'p1', 1), ('b', 'p1', 2), ('c', 'p2', 2)")
    con.execute("CREATE TABLE raw.sciexplore_tasks (task_id VARCHAR, domain VARCHAR, type VARCHAR)")
    con.execute("INSERT INTO raw.sciexplore_tasks VALUES ('t1', 'bio', 'T1'), ('t2', 'chem', 'T1')")
    con.execute("CREATE TABLE raw.inspect_items (benchmark VARCHAR, sample_id VARCHAR, metadata_json VARCHAR)")
    con.execute("""INSERT INTO raw.inspect_items VALUES ('inspect:x', 's1', '{"family": "f1", "n": 3}'),
                   ('inspect:x', 's2', '{"family": "f1"}'), ('inspect:x', 's3', NULL), ('inspect:y', 's1', '{"family": "g"}')""")
    con.close()
    with Warehouse(db) as wh:
        assert item_clusters(wh, "agenthop", "source_paper") == {"a": "p1", "b": "p1", "c": "p2"}
        assert item_clusters(wh, "agenthop", "depth") == {"a": "1", "b": "2", "c": "2"}
        with pytest.raises(AgentHopError, match="no field 'domain'; fields: depth, seed_paper_id, source_paper"):
            item_clusters(wh, "agenthop", "domain")
        assert task_clusters(wh, "sciexplore", "domain") == {"t1": "bio", "t2": "chem"}
        # an Inspect task: its own samples' metadata field (s3 has none: a cluster of its own on the page)
        assert metadata_clusters(wh, "inspect:x", "family") == {"s1": "f1", "s2": "f1"}
        assert metadata_clusters(wh, "inspect:x", "n") == {"s1": "3"}
        with pytest.raises(AgentHopError, match="no sample of inspect:x has the metadata field 'nope'"):
            metadata_clusters(wh, "inspect:x", "nope")
        # the registry's defaults: AgentHop source paper, SciExplore domain, Inspect none
        assert clusters.resolve(wh, "agenthop", None).field == "source_paper"
        assert clusters.resolve(wh, "sciexplore", None).labels == {"t1": "bio", "t2": "chem"}
        assert clusters.resolve(wh, "inspect:x", None).by_item
        assert clusters.resolve(wh, "inspect:x", "family").declared
        assert clusters.resolve(wh, "agenthop", "item").by_item


def _text(soup: BeautifulSoup) -> str:
    return " ".join(soup.get_text(" ", strip=True).split())


def test_captions_name_the_interval_or_test_its_n_and_clusters(warehouse: Path, toy_sections, tmp_path: Path) -> None:  # noqa: F811
    """Every page that shows a test or an interval says which one, over how many items and in which clusters."""
    lb = _text(_page(warehouse, tmp_path / "lb.html", "leaderboard", "--benchmark", NAME))
    assert "the cluster-robust t interval over the item clusters (G − 1 degrees of freedom)" in lb
    assert "clustered by family (2 clusters over 3 items; the benchmark's default)" in lb
    model = _text(_page(warehouse, tmp_path / "model.html", "model", "toy-model"))
    assert "(clustered t over the 3 items in 2 family clusters)" in model
    reruns = _text(_page(warehouse, tmp_path / "reruns.html", "reruns", "--model", "toy-model"))
    assert "over each replicate's items (the items column: n), each item its own unit (clustered intervals: below)" in reruns
    assert "cluster-robust 95% t interval" in reruns
    compare = _page(warehouse, tmp_path / "c.html", "compare", "--runs", "r0,r1")
    budget = _text(compare.find(id="budget-curves").find_next("p"))
    # r0 has three items with a value, r1 two (t3 has no score): each interval over its own n, not clustered
    assert "(Wilson for a 0/1 metric, t for a graded one) over the run's items with a value, each item its own unit " \
           "(not clustered): n = 3 for" in budget and ", 2 for " in budget and "would have behaved differently" in budget
    clustered = _text(compare.find(id="clustered").find_next("p"))
    assert "clustered by family (2 clusters over 2 items" in clustered and "sign-flip test of the per-cluster sums" in clustered
    assert "Test used: sign-flip permutation" in _text(compare)
