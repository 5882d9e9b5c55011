"""The behaviours page (`agenthop-report behaviours`, docs/reports.md#behaviours): per scanner, its prevalence in
every run (corrected for its error rates where people labelled its findings), its agreement with the
labelers, its association with the benchmark's primary metric (Fisher's exact p, adjusted over every test
on the page), and links to the items it flagged."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agenthop.harness.errors import AgentHopError

from ..freshness import STALE
from ..multiplicity import Method, adjust, caption
from ..warehouse import Warehouse
from .runs import RunInfo, label_runs, shared_runs

MARTS = ("scanner_prevalence", "scanner_agreement", "behaviour_outcomes", "behaviour_paired", "metric_defs")
#: run pairs shown per scanner (the smallest p first)
PAIRS_PER_SCANNER = 10
#: flagged items linked per run and scanner
ITEMS_PER_RUN = 12


def flagged(wh: Warehouse, scanners: Sequence[str], run_ids: Sequence[str]) -> dict[tuple[str, str], list[dict]]:
    """(scanner, run_id) -> the first flagged final attempts (sample_id, value, label, evidence turns)."""
    rows = wh.rows(
        """
        SELECT r.scanner, r.run_id, r.sample_id, r.value, r.label,
               list_sort(list_distinct([e.turn FOR e IN coalesce(r.evidence, [])])) AS turns,
               row_number() OVER (PARTITION BY r.scanner, r.run_id ORDER BY r.sample_id) AS k
        FROM raw.scanner_results AS r
        JOIN raw.trajectories AS t USING (run_id, sample_id, attempt)
        WHERE t.is_final AND r.value > 0 AND list_contains(?, r.scanner) AND list_contains(?, r.run_id)
        QUALIFY k <= ?
        ORDER BY r.scanner, r.run_id, r.sample_id
        """, [list(scanners), list(run_ids), ITEMS_PER_RUN])
    out: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        out.setdefault((r["scanner"], r["run_id"]), []).append(r)
    return out


def scanned_since_build(wh: Warehouse) -> bool:
    """Whether a scan, a Scout import or a labels file was written after the last dbt build (the scanner
    marts would then show the state before it)."""
    built = wh.rows("SELECT max(built_at) AS t FROM build_info")[0]["t"]
    for table, column in (("scanner_runs", "scanned_at"), ("human_labels", "loaded_at")):
        if wh.con.execute("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'raw' AND table_name = ? "
                          "AND table_catalog = current_database()", [table]).fetchall()[0][0]:
            latest = wh.con.execute(f"SELECT max({column}) FROM raw.{table}").fetchall()[0][0]
            if latest is not None and (built is None or latest > built):
                return True
    return False


def build(wh: Warehouse, method: Method) -> dict[str, Any]:
    """The page's context (no scanners when the warehouse holds no scanner results: the page says how to scan);
    an error when scanner results or labels were written after the last dbt build."""
    wh.require(MARTS)
    if scanned_since_build(wh):
        raise AgentHopError(f"{STALE} (scanner results or labels were written to {wh.path} after the last build)")
    prevalence = wh.rows("SELECT * FROM scanner_prevalence ORDER BY scanner, model, run_id")
    if not prevalence:
        return {"title": "Behaviours", "scanners": [], "adjust_caption": "", "pairs_caption": "", "method": method,
                "link_runs": {}}
    runs = {r.run_id: r for r in shared_runs(wh)}
    shown = [runs[r] for r in dict.fromkeys(p["run_id"] for p in prevalence) if r in runs]
    label_runs(shown)
    agreement = wh.rows("SELECT * FROM scanner_agreement ORDER BY scanner, labeler")
    outcomes = wh.rows(
        """SELECT o.*, d.label AS metric_label FROM behaviour_outcomes AS o
           JOIN metric_defs AS d ON d.benchmark = o.benchmark AND d.metric = o.metric AND d.is_primary
           ORDER BY o.scanner, o.model, o.run_id""")
    adjusted = adjust([o["fisher_p"] for o in outcomes], method)
    for o, a in zip(outcomes, adjusted):
        o["p_adj"] = a
    n_tests = sum(1 for o in outcomes if o["fisher_p"] is not None)
    paired = wh.rows("SELECT * FROM behaviour_paired WHERE a_only + b_only > 0 ORDER BY scanner, mcnemar_p, run_a, run_b")
    for pr, a in zip(paired, adjust([pr["mcnemar_p"] for pr in paired], method)):
        pr["p_adj"] = a
    versions = dict(wh.con.execute("SELECT scanner, string_agg(DISTINCT scanner_version, '; ') FROM raw.scanner_results "
                                   "GROUP BY scanner").fetchall())
    names = sorted({p["scanner"] for p in prevalence})
    found = flagged(wh, names, list(runs))
    scanners = []
    for name in names:
        rows = [dict(p, run=runs.get(p["run_id"])) for p in prevalence if p["scanner"] == name]
        for row in rows:
            row["items"] = found.get((name, row["run_id"]), [])
        scanners.append({
            "name": name,
            "version": versions.get(name, ""),
            "prevalence": rows,
            "has_corrected": any(r["corrected_prevalence"] is not None for r in rows),
            "agreement": [a for a in agreement if a["scanner"] == name],
            "outcomes": [dict(o, run=runs.get(o["run_id"])) for o in outcomes if o["scanner"] == name],
            "pairs": [dict(pr, a=runs.get(pr["run_a"]), b=runs.get(pr["run_b"]))
                      for pr in paired if pr["scanner"] == name][:PAIRS_PER_SCANNER],
            "n_pairs": sum(1 for pr in paired if pr["scanner"] == name),
        })
    return {
        "title": "Behaviours",
        "scanners": scanners,
        "adjust_caption": caption(method, n_tests, "Fisher test", "on this page (every scanner and run)"),
        "pairs_caption": caption(method, len(paired), "McNemar test", "of every scanner (pairs with discordant items)"),
        "method": method,
        "link_runs": _item_runs(scanners, runs),
    }


def _item_runs(scanners: Sequence[dict[str, Any]], runs: dict[str, RunInfo]) -> dict[str, list[RunInfo]]:
    """sample_id -> the runs (at most six, one benchmark) its item page shows: those that flagged it."""
    out: dict[str, list[RunInfo]] = {}
    for s in scanners:
        for row in s["prevalence"]:
            run = row["run"]
            if run is None:
                continue
            for item in row["items"]:
                page = out.setdefault(item["sample_id"], [])
                if run not in page and len(page) < 6 and (not page or page[0].benchmark == run.benchmark):
                    page.append(run)
    return out
