"""The behaviours section of the shared compare page (docs/scanners.md#in-compare): for every scanner
with results for both sides, its prevalence in each compared run (corrected for its error rates where people
labelled its findings: mart ``scanner_prevalence``), its association with the metric the page shows (mart
``behaviour_outcomes``), the paired difference in prevalence over the items both sides classified, and the
items it flagged (linked to their item pages).

The paired difference of one run a side is the mart ``behaviour_paired`` (exact McNemar); of pooled groups,
each item's flagged share over its side's runs, compared with the sign-flip permutation test
(reports/core/pooling.py). The page's Fisher tests, and its paired tests, are each adjusted as one family.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..multiplicity import Method, adjust, caption
from ..warehouse import Warehouse
from .behaviours import MARTS, flagged, scanned_since_build
from .metrics import Metric
from .pooling import RunGroup, item_means, item_test

#: the multiplicity adjustment of the section's tests
METHOD: Method = "holm"
FINDINGS = "intermediate.int_core_scanner_findings_final"


def _marts_present(wh: Warehouse) -> bool:
    return all(wh.has(m) for m in MARTS) and wh.has_table(*FINDINGS.split("."))


def _outcomes(wh: Warehouse, run_ids: list[str], metric: Metric | None) -> list[dict[str, Any]]:
    """behaviour_outcomes of `run_ids` on `metric` (without one: the benchmark's primary metric)."""
    if metric is not None:
        return wh.rows("SELECT o.*, ? AS metric_label FROM behaviour_outcomes AS o "
                       "WHERE list_contains(?, o.run_id) AND o.benchmark = ? AND o.metric = ?",
                       [metric.short, run_ids, metric.benchmark, metric.name])
    return wh.rows("""SELECT o.*, d.label AS metric_label FROM behaviour_outcomes AS o
                      JOIN metric_defs AS d ON d.benchmark = o.benchmark AND d.metric = o.metric AND d.is_primary
                      WHERE list_contains(?, o.run_id)""", [run_ids])


def pooled_paired(found: Sequence[dict[str, Any]], ga: Sequence[str], gb: Sequence[str]) -> dict[str, Any]:
    """The paired prevalence difference A − B of one scanner over the items both sides classified, from its
    findings (rows run_id, sample_id, found): each item's flagged share over its side's runs, the sign-flip
    permutation test of the per-item differences."""
    values = {(r["run_id"], r["sample_id"]): 1.0 if r["found"] else 0.0 for r in found}
    t = item_test(item_means(values, ga), item_means(values, gb), mcnemar=False)
    return {"test": t.test_name, "n_shared": t.n, "prevalence_a": t.mean_a, "prevalence_b": t.mean_b,
            "difference": t.diff, "p": t.p, "a_only": None, "b_only": None}


def _single_paired(row: dict[str, Any] | None, a: str) -> dict[str, Any]:
    """behaviour_paired's row of two runs, oriented A − B (the mart orders the pair by run id)."""
    if row is None:  # no item classified in both runs
        return {"test": "exact McNemar", "n_shared": 0, "prevalence_a": None, "prevalence_b": None,
                "difference": None, "p": None, "a_only": 0, "b_only": 0}
    flip = row["run_a"] != a
    return {"test": "exact McNemar", "n_shared": row["n_shared"],
            "prevalence_a": row["prevalence_b" if flip else "prevalence_a"],
            "prevalence_b": row["prevalence_a" if flip else "prevalence_b"],
            "difference": -row["difference"] if flip else row["difference"], "p": row["mcnemar_p"],
            "a_only": row["b_only" if flip else "a_only"], "b_only": row["a_only" if flip else "b_only"]}


def section(wh: Warehouse, ga: RunGroup, gb: RunGroup, metric: Metric | None) -> dict[str, Any] | None:
    """The section's context, or None when no scanner has results for both sides (the page then has no
    section)."""
    if not _marts_present(wh):
        return None
    ids = ga.run_ids + gb.run_ids
    prevalence = wh.rows("SELECT * FROM scanner_prevalence WHERE list_contains(?, run_id)", [ids])
    sides = {}
    for p in prevalence:
        sides.setdefault(p["scanner"], set()).add("A" if p["run_id"] in ga.run_ids else "B")
    names = sorted(s for s, have in sides.items() if have == {"A", "B"})
    if not names:
        return None
    order = {r: i for i, r in enumerate(ids)}
    runs = {r.run_id: r for r in [*ga.runs, *gb.runs]}
    outcomes = [o for o in _outcomes(wh, ids, metric) if o["scanner"] in names]
    for o, adj in zip(outcomes, adjust([o["fisher_p"] for o in outcomes], METHOD)):
        o["p_adj"] = adj
    single = ga.n_runs == 1 and gb.n_runs == 1
    if single:
        pair = sorted((ga.run_ids[0], gb.run_ids[0]))
        marts = {r["scanner"]: r for r in wh.rows("SELECT * FROM behaviour_paired WHERE run_a = ? AND run_b = ?", pair)}
        paired = {s: _single_paired(marts.get(s), ga.run_ids[0]) for s in names}
    else:
        found = wh.rows(f"SELECT scanner, run_id, sample_id, found FROM {FINDINGS} WHERE list_contains(?, run_id)",
                        [ids])
        paired = {s: pooled_paired([f for f in found if f["scanner"] == s], ga.run_ids, gb.run_ids) for s in names}
    for s, adj in zip(names, adjust([paired[s]["p"] for s in names], METHOD)):
        paired[s]["p_adj"] = adj
    items = flagged(wh, names, ids)
    scanners = []
    for name in names:
        rows = sorted((dict(p, run=runs[p["run_id"]], side="A" if p["run_id"] in ga.run_ids else "B",
                            items=items.get((name, p["run_id"]), []))
                       for p in prevalence if p["scanner"] == name), key=lambda r: order[r["run_id"]])
        scanners.append({
            "name": name,
            "prevalence": rows,
            "has_corrected": any(r["corrected_prevalence"] is not None for r in rows),
            "outcomes": sorted((dict(o, run=runs[o["run_id"]]) for o in outcomes if o["scanner"] == name),
                               key=lambda o: order[o["run_id"]]),
            "paired": paired[name],
        })
    n_fisher = sum(1 for o in outcomes if o["fisher_p"] is not None)
    n_paired = sum(1 for s in names if paired[s]["p"] is not None)
    return {
        "scanners": scanners,
        "pooled": not single,
        "stale": scanned_since_build(wh),
        "fisher_caption": caption(METHOD, n_fisher, "Fisher test", "of this section"),
        "paired_caption": caption(METHOD, n_paired, "paired test", "of this section (one per scanner)"),
        "item_ids": list(dict.fromkeys(it["sample_id"] for s in scanners for r in s["prevalence"] for it in r["items"])),
    }
