"""The paper's analyses for one panel, each as a Table built from the marts (statistics from reports/stats.py).

The panel is every model's run with the lowest replicate under one condition (the panel_members mart).
Each builder takes the Warehouse and the Panel and returns Tables; nothing here formats HTML.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import multiplicity, rank_tests, stats
from ..agenthop.queries import correctness_matrix
from ..values import as_float
from ..warehouse import Warehouse
from . import layouts
from . import queries as q
from .inputs import Covariates, ExternalScore
from .table import Column, Table

TIER_ORDER = ("closed_frontier", "open_frontier", "compute_efficient")
UNTIERED = "untiered"
#: The paper's order of the seven tools (Figure 6).
PAPER_TOOLS = ("get_paper_info", "get_references", "list_sections", "search_papers", "read_section", "think",
               "submit_answer")
CHANCE = 0.25
ALPHA = 0.05
CONVERSION_AXES = {"conversion_st": "conversion_st", "conversion_mt": "conversion_mt"}


@dataclass
class Panel:
    """The panel of one condition: one model_summary row per model, plus lookups."""

    condition: str
    members: list[dict[str, Any]]
    by_model: dict[str, dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.by_model = {m["model"]: m for m in self.members}

    @property
    def run_ids(self) -> list[str]:
        return [m["run_id"] for m in self.members]

    @property
    def models(self) -> list[str]:
        return [m["model"] for m in self.members]

    def model_of(self, run_id: str) -> str:
        return next(m["model"] for m in self.members if m["run_id"] == run_id)


def load_panel(wh: Warehouse, condition: str) -> Panel:
    wh.require(q.MARTS)
    return Panel(condition, q.panel(wh, condition))


def _tier(m: dict[str, Any]) -> str:
    return m.get("tier") or UNTIERED


def tier_names(members: Sequence[dict[str, Any]]) -> list[str]:
    present = {_tier(m) for m in members}
    return ([t for t in TIER_ORDER if t in present] + sorted(present - set(TIER_ORDER) - {UNTIERED})
            + ([UNTIERED] if UNTIERED in present else []))


def _ranked(members: Sequence[dict[str, Any]], metric: str) -> list[dict[str, Any]]:
    """Members with a value of `metric`, best first (ties by model name)."""
    have = [m for m in members if as_float(m.get(metric)) is not None]
    return sorted(have, key=lambda m: (-float(m[metric]), m["model"]))


def mcnemar_row(counts: dict[tuple[str, str, str], dict[str, Any]], panel: str, axis: str, a: str, b: str,
                value_a: Any = None, value_b: Any = None) -> dict[str, Any]:
    """One exact McNemar test of model a against b on `axis`, from panel_paired_counts."""
    c = counts[(a, b, axis)]
    test = stats.paired_test_from_counts(int(c["n"]), int(c["a_only"]), int(c["b_only"]))
    return {"panel": panel, "axis": axis, "model_a": a, "model_b": b, "n": test.n, "a_only": test.a_only,
            "b_only": test.b_only, "p_value": test.p, "significant": test.p < ALPHA, "value_a": value_a,
            "value_b": value_b, "mde": test.mde}


def leader_tests(panel: Panel, counts: dict[tuple[str, str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """Per tier and axis (accuracy, conversion_st, conversion_mt): the leader against the runner-up."""
    out = []
    for tier in tier_names(panel.members):
        members = [m for m in panel.members if _tier(m) == tier]
        for axis in ("accuracy", "conversion_st", "conversion_mt"):
            ranked = _ranked(members, axis)
            if len(ranked) >= 2:
                a, b = ranked[0], ranked[1]
                out.append(mcnemar_row(counts, tier, axis, a["model"], b["model"], a[axis], b[axis]))
    return out


def walk_tests(panel: Panel, counts: dict[tuple[str, str, str], dict[str, Any]], top: int = 6) -> list[dict[str, Any]]:
    """Adjacent pairs among the `top` highest MT-conversion models, on conversion_mt."""
    ranked = _ranked(panel.members, "conversion_mt")[:top]
    return [mcnemar_row(counts, f"top{top}_conversion_mt", "conversion_mt", a["model"], b["model"],
                        a["conversion_mt"], b["conversion_mt"])
            for a, b in zip(ranked, ranked[1:])]


# -- Table 2 -------------------------------------------------------------------------------------------

T2_METRICS = ("accuracy", "recall_st", "recall_mt", "secrec_st", "secrec_mt", "conversion_st", "conversion_mt",
              "calls_per_turn", "avg_tokens_k", "avg_turns", "avg_budget", "max_tokens_rate", "max_turns_rate",
              "max_budget_rate", "na_rate")
T2_HEADERS = {"accuracy": "Acc", "recall_st": "Rec ST", "recall_mt": "Rec MT", "secrec_st": "SecRec ST",
              "secrec_mt": "SecRec MT", "conversion_st": "Conv ST", "conversion_mt": "Conv MT",
              "calls_per_turn": "Calls/turn", "avg_tokens_k": "Tok (K)", "avg_turns": "Turns",
              "avg_budget": "Budget", "max_tokens_rate": "Max tok", "max_turns_rate": "Max turns",
              "max_budget_rate": "Max budget", "na_rate": "NA"}
#: Table 2 columns whose panel best is printed in bold (higher is better).
T2_BOLD = ("accuracy", "recall_st", "recall_mt", "secrec_st", "secrec_mt", "conversion_st", "conversion_mt")


def table2_order(members: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """By tier; within a tier families ordered by their best member, members by accuracy (ties by name)."""
    out: list[dict[str, Any]] = []
    for tier in tier_names(members):
        in_tier = [m for m in members if _tier(m) == tier]
        families: dict[str, list[dict[str, Any]]] = {}
        for m in in_tier:
            families.setdefault(m.get("family") or f"\x00{m['model']}", []).append(m)
        ranked_families = sorted(
            families.values(), key=lambda ms: (-max(float(x["accuracy"]) for x in ms), min(x["model"] for x in ms))
        )
        for ms in ranked_families:
            out += sorted(ms, key=lambda x: (-float(x["accuracy"]), x["model"]))
    return out


def table2(panel: Panel, leaders: Sequence[dict[str, Any]]) -> Table:
    rows = []
    sig = {(t["panel"], t["axis"]): t for t in leaders}
    for m in table2_order(panel.members):
        tier = _tier(m)
        acc_leader = sig.get((tier, "accuracy"))
        row = {k: m.get(k) for k in ("model", "replicate", "tier", "family", "n_items", *T2_METRICS)}
        row["tier"] = tier
        row.update(run_id=m["run_id"], generation=m.get("generation"), is_simulated=m.get("is_simulated"))
        in_tier = [x for x in panel.members if _tier(x) == tier]
        row["tier_leader"] = bool(_ranked(in_tier, "accuracy")) and _ranked(in_tier, "accuracy")[0]["model"] == m["model"]
        for axis in CONVERSION_AXES:
            t = sig.get((tier, axis))
            row[f"{axis}_sig"] = bool(t and t["model_a"] == m["model"] and t["significant"])
        row["accuracy_leader_p"] = acc_leader["p_value"] if acc_leader and acc_leader["model_a"] == m["model"] else None
        rows.append(row)
    cols = [Column("model", "text", "Model"), Column("replicate", "int"), Column("tier", "text", "Tier"),
            Column("family", "text"), Column("n_items", "int", "n")]
    for k in T2_METRICS:
        kind = "rate" if k not in ("calls_per_turn", "avg_tokens_k", "avg_turns", "avg_budget") else "num1"
        if k == "calls_per_turn":
            kind = "num2"
        cols.append(Column(k, kind, T2_HEADERS[k]))
    cols += [Column("run_id"), Column("generation"), Column("is_simulated", "bool"), Column("tier_leader", "bool"),
             Column("conversion_st_sig", "bool"), Column("conversion_mt_sig", "bool"),
             Column("accuracy_leader_p", "num3")]
    table = Table("table02_main", "Table 2", "Main results by tier", "paper-table-2", cols, rows,
                  note="Rates in %. * = tier leader by accuracy; bold = panel best; † on a conversion cell = the "
                       "tier's conversion leader differs from the runner-up by exact McNemar on the items both "
                       "recalled (p < 0.05).",
                  group_by="tier")
    for k in T2_BOLD:
        vals = [as_float(r.get(k)) for r in rows]
        best = max((v for v in vals if v is not None), default=None)
        for i, v in enumerate(vals):
            if best is not None and v == best:
                table.mark(i, k, "best")
    for i, r in enumerate(rows):
        if r["tier_leader"]:
            table.mark(i, "model", "leader")
        if r["is_simulated"]:
            table.mark(i, "model", "sim")
        for axis in CONVERSION_AXES:
            if r[f"{axis}_sig"]:
                table.mark(i, axis, "sig")
    return table


# -- Tables 3, 9, 14, 15 -------------------------------------------------------------------------------


def table3(wh: Warehouse, panel: Panel) -> Table:
    rows = q.by_runs(wh, "wrong_read_actions", panel.run_ids, "s.model, x.action_order")
    rows = [{k: r[k] for k in ("model", "action", "n", "n_total", "share", "run_id")} for r in rows]
    return Table("table03_wrong_read", "Table 3", "Actions after a wrong-paper read", "paper-table-3",
                 [Column("model", "text", "Model"), Column("action", "text", "Next action"), Column("n", "int", "n"),
                  Column("n_total", "int", "of"), Column("share", "rate", "%"), Column("run_id")], rows,
                 group_by="model")


def table9(wh: Warehouse, panel: Panel) -> Table:
    rows = q.by_runs(wh, "stopping_behavior", panel.run_ids,
                     "s.model, CASE x.scope WHEN 'ST' THEN 1 WHEN 'MT-both' THEN 2 ELSE 3 END, x.category_order")
    rows = [{k: r[k] for k in ("model", "scope", "category", "n", "n_scope", "share", "run_id")} for r in rows]
    return Table("table09_stopping", "Table 9", "Stopping behaviour in the three scopes", "paper-table-9",
                 [Column("model", "text", "Model"), Column("scope", "text", "Scope"),
                  Column("category", "text", "Category"), Column("n", "int", "n"), Column("n_scope", "int", "of"),
                  Column("share", "rate", "%"), Column("run_id")], rows, group_by="model")


def table14(wh: Warehouse, panel: Panel) -> Table:
    rows = q.top_trigrams(wh, panel.run_ids)
    rows = [{"model": r["model"], "trigram": r["trigram"], "share": r["share"], "n": r["n"],
             "n_trigrams": r["n_trigrams"],
             "concentration": panel.by_model[r["model"]].get("trigram_concentration"), "run_id": r["run_id"]}
            for r in rows]
    return Table("table14_trigrams", "Table 14", "Top trigram and concentration", "paper-table-14",
                 [Column("model", "text", "Model"), Column("trigram", "text", "Top trigram"),
                  Column("share", "rate", "Share %"), Column("n", "int", "n"), Column("n_trigrams", "int", "of"),
                  Column("concentration", "rate"), Column("run_id")], rows)


def table15(panel: Panel) -> Table:
    keys = ("na_rate", "max_turns_rate", "max_budget_rate", "max_tokens_rate", "error_rate", "non_submission_rate")
    rows = [{"model": m["model"], **{k: m.get(k) for k in keys}, "run_id": m["run_id"], "accuracy": m.get("accuracy"),
             "tier": _tier(m)} for m in panel.members]
    return Table("table15_terminations", "Table 15", "Non-submission terminations", "paper-table-15",
                 [Column("model", "text", "Model"), Column("na_rate", "rate", "NA %"),
                  Column("max_turns_rate", "rate", "Max turns %"), Column("max_budget_rate", "rate", "Budget %"),
                  Column("max_tokens_rate", "rate", "Tokens %"), Column("error_rate", "rate", "Error %"),
                  Column("non_submission_rate", "rate"), Column("run_id"), Column("accuracy", "rate", "Acc %"),
                  Column("tier")], rows,
                 note="NA = no valid answer (predicted_index = -1); the other columns split terminations by cap.")


# -- Tables 4 / 18 and 8 ------------------------------------------------------------------------------


def table4(wh: Warehouse, panel: Panel) -> Table:
    rows = []
    acc = q.panel_accuracies(wh, panel.models)
    for r in q.condition_deltas(wh, panel.models):
        p = None
        if r["n"] is not None:
            p = stats.mcnemar_exact(int(r["from_only"]), int(r["to_only"]))
        rows.append({**{k: r[k] for k in ("model", "condition_from", "condition_to", "accuracy_from", "accuracy_to",
                                           "delta_pp", "n", "from_only", "to_only")},
                     "p_value": p, "chance": CHANCE, "n_runs_from": r["n_runs_from"], "n_runs_to": r["n_runs_to"],
                     **_panel_pair(acc, r["model"], r["condition_from"], r["condition_to"])})
    with_holm(rows)
    return Table("table04_conditions", "Tables 4 and 18", "Closed-book, no-search and full: paired deltas",
                 "paper-table-4", [
                     Column("model", "text", "Model"), Column("condition_from", "text", "From"),
                     Column("condition_to", "text", "To"), Column("accuracy_from", "rate", "Acc from %"),
                     Column("accuracy_to", "rate", "Acc to %"), Column("delta_pp", "pp", "Δ (pp)"),
                     Column("n", "int", "n"), Column("from_only", "int", "from only"),
                     Column("to_only", "int", "to only"), Column("p_value", "p", "p"), Column("chance", "rate"),
                     Column("n_runs_from", "int"), Column("n_runs_to", "int"),
                     Column("panel_accuracy_from", "rate"), Column("panel_accuracy_to", "rate"),
                     Column("panel_delta_pp", "pp"), Column("p_holm", "p", "p (Holm)")], rows,
                 note="accuracy_from/to and delta_pp: the mean over a condition's replicates; panel_accuracy_from/to, "
                      "panel_delta_pp and the exact McNemar columns: the two panel runs (lowest replicates) on "
                      "their shared items. p_value: each test alone, not adjusted for multiplicity, as in the paper "
                      f"(its numbers are reproduced); p_holm: {holm_note(rows)} Chance = 25% (four options).",
                 group_by="model")


def _panel_pair(acc: dict[tuple[str, str], float], model: str, a: str, b: str) -> dict[str, Any]:
    x, y = acc.get((model, a)), acc.get((model, b))
    return {"panel_accuracy_from": x, "panel_accuracy_to": y,
            "panel_delta_pp": None if x is None or y is None else 100.0 * (y - x)}


def table18(wh: Warehouse, panel: Panel) -> Table:
    """Every panel model with a closed_book panel run: closed-book vs full accuracy of the panel runs."""
    acc = q.panel_accuracies(wh, panel.models)
    rows = []
    for m in panel.members:
        z = acc.get((m["model"], "closed_book"))
        if z is None or panel.condition == "closed_book":
            continue
        f = m["accuracy"]
        rows.append({"model": m["model"], "tier": _tier(m), "accuracy_zero": z, "accuracy_full": f,
                     "delta_pp": 100.0 * (f - z), "chance": CHANCE})
    return Table("table18_zero_full", "Table 18", "Parametric (zero-tool) vs full-tool accuracy", "paper-table-4", [
        Column("model", "text", "Model"), Column("tier", "text", "Tier"), Column("accuracy_zero", "rate", "Zero %"),
        Column("accuracy_full", "rate", "Full %"), Column("delta_pp", "pp", "Δ (pp)"), Column("chance", "rate")],
        rows)


def table8(wh: Warehouse, panel: Panel) -> Table:
    rows = [{k: r[k] for k in ("model", "pricing_found", "total_usd", "usd_per_item", "closed_book_total_usd",
                                "closed_book_usd_per_item", "n_items", "prompt_tokens", "completion_tokens",
                                "cache_read_tokens", "cache_creation_tokens", "run_id", "closed_book_run_id")}
            for r in q.costs(wh, panel.models, panel.condition)]
    return Table("table08_cost", "Table 8", "Cost per model", "paper-table-8", [
        Column("model", "text", "Model"), Column("pricing_found", "bool", "Priced"),
        Column("total_usd", "usd", "Total USD"), Column("usd_per_item", "usd4", "USD/item"),
        Column("closed_book_total_usd", "usd", "Closed-book USD"), Column("closed_book_usd_per_item", "usd4"),
        Column("n_items", "int"), Column("prompt_tokens", "int", "Prompt tok"),
        Column("completion_tokens", "int", "Completion tok"), Column("cache_read_tokens", "int"),
        Column("cache_creation_tokens", "int"), Column("run_id"), Column("closed_book_run_id")], rows,
        note="From model_cost (tokens of all attempts times the price table); simulated and unknown models are "
             "unpriced.")


# -- Table 10 ----------------------------------------------------------------------------------------------


#: what Table 10's intervals are over (the paper's, unclustered)
WILSON_CELL_NOTE = ("Wilson 95% interval of the run's accuracy over the n items of the row, each item its own unit, as "
                    "the paper computes it (not clustered by source paper; the leaderboard's intervals are).")


def table10(wh: Warehouse, panel: Panel) -> list[Table]:
    cells = q.by_runs(wh, "cell_accuracy", panel.run_ids, "s.model, x.cell")
    keys = ("model", "cell", "n", "correct", "accuracy", "wilson_lo", "wilson_hi", "run_id")
    ci_cols = [Column("n", "int", "n"), Column("correct", "int", "correct"), Column("accuracy", "rate", "Acc %"),
               Column("wilson_lo", "rate", "lo %"), Column("wilson_hi", "rate", "hi %"), Column("run_id")]
    t_cells = Table("table10_cells", "Table 10", "Accuracy per cell with Wilson 95% intervals", "paper-table-10",
                    [Column("model", "text", "Model"), Column("cell", "text", "Cell"), *ci_cols],
                    [{k: r[k] for k in keys} for r in cells], group_by="model", note=WILSON_CELL_NOTE)
    pooled, spread = q.cell_spread(wh, panel.run_ids)
    t_spread = Table("table10_spread", "Table 10", "Δ from the easiest to the hardest cell", "paper-table-10", [
        Column("model", "text", "Model"), Column("easiest_cell", "text", "Easiest"),
        Column("accuracy_easiest", "rate", "Acc %"), Column("hardest_cell", "text", "Hardest"),
        Column("accuracy_hardest", "rate", "Acc %"), Column("delta_pp", "pp", "Δ (pp)"), Column("run_id")],
        [{k: r[k] for k in ("model", "easiest_cell", "accuracy_easiest", "hardest_cell", "accuracy_hardest",
                             "delta_pp", "run_id")} for r in spread],
        note="Easiest and hardest cell by the panel's pooled accuracy ("
             + ", ".join(f"{p['cell']} {100 * float(p['accuracy']):.1f}%" for p in pooled) + ").")
    rtypes = q.by_runs(wh, "reasoning_type_accuracy", panel.run_ids, "s.model, x.reasoning_type")
    t_types = Table("table10_reasoning", "Table 10", "Accuracy per reasoning type", "paper-table-10",
                    [Column("model", "text", "Model"), Column("reasoning_type", "text", "Type"), *ci_cols],
                    [{k: r[k] for k in ("model", "reasoning_type", *keys[2:])} for r in rtypes], group_by="model",
                    note=WILSON_CELL_NOTE)
    return [t_cells, t_spread, t_types]


# -- Table 11 ----------------------------------------------------------------------------------------------


def table11(wh: Warehouse, panel: Panel) -> Table:
    rows = [{k: r[k] for k in ("evidence_contact", "n", "n_recalled", "share", "correct", "conversion",
                                "n_closed_book", "closed_book_correct", "closed_book_accuracy")}
            for r in q.evidence_contact(wh, panel.condition)]
    has_cb = any(r["n_closed_book"] for r in rows)
    return Table("table11_evidence", "Table 11", "Evidence contact pooled over the panel", "paper-table-11", [
        Column("evidence_contact", "text", "Contact"), Column("n", "int", "n"), Column("n_recalled", "int", "of"),
        Column("share", "rate", "Share %"), Column("correct", "int"), Column("conversion", "rate", "Conv %"),
        Column("n_closed_book", "int", "n closed-book"), Column("closed_book_correct", "int"),
        Column("closed_book_accuracy", "rate", "Closed-book acc %")], rows,
        note="Over the panel's trajectories with paper recall. " + (
            "Closed-book accuracy: the same models on the same items, where they have closed_book runs."
            if has_cb else "No panel model has a closed_book run, so the closed-book columns are empty."))


# -- Tables 12 and 13 --------------------------------------------------------------------------------------


def with_holm(rows: list[dict[str, Any]]) -> None:
    """Add ``p_holm`` to each row: Holm's adjustment over every p_value of the table (a row without one has
    none and is not in the family)."""
    for r, adj in zip(rows, multiplicity.adjust([r.get("p_value") for r in rows], "holm")):
        r["p_holm"] = adj


def holm_note(rows: Sequence[dict[str, Any]]) -> str:
    """The caption's sentence on the adjusted column."""
    m = sum(1 for r in rows if r.get("p_value") is not None)
    return multiplicity.caption("holm", m, where="of this table (CSV column p_holm)")


def table12(walk: Sequence[dict[str, Any]], leaders: Sequence[dict[str, Any]]) -> Table:
    rows = [dict(r) for r in (*walk, *leaders)]
    with_holm(rows)
    return Table("table12_mcnemar", "Table 12", "The walk of paired exact McNemar tests", "paper-table-12", [
        Column("panel", "text", "Comparison"), Column("axis", "text", "Axis"), Column("model_a", "text", "A"),
        Column("model_b", "text", "B"), Column("n", "int", "n"), Column("a_only", "int", "A only"),
        Column("b_only", "int", "B only"), Column("p_value", "p", "p"), Column("significant", "bool", "p < 0.05"),
        Column("value_a", "rate", "A %"), Column("value_b", "rate", "B %"), Column("mde", "rate", "MDE %"),
        Column("p_holm", "p", "p (Holm)")], rows,
        note="Adjacent pairs among the six highest MT-conversion models, then each tier's leader against its "
             "runner-up on accuracy (all shared items) and on conversion (ST / MT items both recalled); n: those items, "
             "each its own unit (not clustered by source paper). p and "
             "p < 0.05: the paper's exact McNemar p of each test alone, not adjusted for multiplicity (the paper's "
             f"numbers, reproduced); p (Holm): {holm_note(rows)}")


def bigram_significance(wh: Warehouse, panel: Panel) -> dict[str, dict[str, int]]:
    """Per bigram: panel members whose effect is significant after Bonferroni (49), split by sign."""
    out: dict[str, dict[str, int]] = {}
    for r in q.by_runs(wh, "bigram_effects", panel.run_ids, "x.bigram, s.model"):
        d = out.setdefault(r["bigram"], {"sig_count": 0, "sig_positive": 0, "sig_negative": 0})
        p = stats.fisher_p(int(r["correct_with"]), int(r["n_with"]), int(r["correct_without"]), int(r["n_without"]))
        if stats.bonferroni_significant(p, ALPHA):
            d["sig_count"] += 1
            effect = as_float(r["effect_pp"]) or 0.0
            d["sig_positive" if effect > 0 else "sig_negative"] += 1
    return out


def table13(wh: Warehouse, panel: Panel) -> Table:
    sig = bigram_significance(wh, panel)
    rows = []
    for r in q.bigram_summary(wh, panel.condition):
        s = sig.get(r["bigram"], {"sig_count": 0, "sig_positive": 0, "sig_negative": 0})
        mean = as_float(r["panel_mean_effect_pp"])
        kind = ""
        if s["sig_count"] and mean is not None:
            kind = "productive" if mean > 0 else ("anti_productive" if mean < 0 else "")
        rows.append({"bigram": r["bigram"], "panel_mean_effect_pp": mean, "sig_count": s["sig_count"],
                     "models_present": r["models_present"], "sig_positive": s["sig_positive"],
                     "sig_negative": s["sig_negative"], "n_models_with_effect": r["n_models_with_effect"],
                     "n_models": r["n_models"], "list": kind})
    chosen = layouts.bigram_selection(rows)
    for r in rows:
        r["in_paper_table"] = r["bigram"] in chosen
    rows.sort(key=lambda r: ({"productive": 0, "anti_productive": 2}.get(r["list"], 1),
                             -(r["panel_mean_effect_pp"] or 0) if r["list"] != "anti_productive"
                             else (r["panel_mean_effect_pp"] or 0), r["bigram"]))
    return Table("table13_bigrams", "Table 13", "Bigram effects over the panel", "paper-table-13", [
        Column("bigram", "text", "Bigram"), Column("panel_mean_effect_pp", "pp", "Mean Δ (pp)"),
        Column("sig_count", "int", "Significant in"), Column("models_present", "int", "Present in"),
        Column("sig_positive", "int"), Column("sig_negative", "int"), Column("n_models_with_effect", "int"),
        Column("n_models", "int"), Column("list", "text", "List"), Column("in_paper_table", "bool")], rows,
        note="Mean Δ over the models where the bigram occurs; significant = Fisher's exact p below 0.05 after "
             "Bonferroni over the 49 ordered tool pairs. Productive: positive mean and significant somewhere; "
             "anti-productive: negative mean and significant somewhere.")


# -- Table 16 ----------------------------------------------------------------------------------------------


def table16(panel: Panel, scores: Sequence[ExternalScore]) -> tuple[Table, list[str]]:
    """Spearman and Pearson of AgentHop accuracy vs each external benchmark; also the unmatched models."""
    by_bench: dict[str, list[tuple[str, float, float]]] = {}
    unmatched = sorted({s.model for s in scores if s.model not in panel.by_model})
    for s in scores:
        m = panel.by_model.get(s.model)
        if m is not None:
            by_bench.setdefault(s.benchmark, []).append((s.model, float(m["accuracy"]), s.score))
    rows = []
    for bench in sorted(by_bench):
        pts = sorted(by_bench[bench])
        x, y = [p[1] for p in pts], [p[2] for p in pts]
        sp, pe = stats.spearman_ci(x, y), stats.pearson_ci(x, y)
        rows.append({"benchmark": bench, "n_models": len(pts), "spearman": sp.r, "spearman_lo": sp.lo,
                     "spearman_hi": sp.hi, "spearman_p": sp.p, "pearson": pe.r, "pearson_lo": pe.lo,
                     "pearson_hi": pe.hi, "pearson_p": pe.p, "models": ";".join(p[0] for p in pts)})
    table = Table("table16_external", "Table 16", "Correlation with external benchmarks", "paper-table-16", [
        Column("benchmark", "text", "Benchmark"), Column("n_models", "int", "n"),
        Column("spearman", "num2", "Spearman"), Column("spearman_lo", "num2", "lo"),
        Column("spearman_hi", "num2", "hi"), Column("spearman_p", "p", "p"), Column("pearson", "num2", "Pearson"),
        Column("pearson_lo", "num2", "lo"), Column("pearson_hi", "num2", "hi"), Column("pearson_p", "p", "p"),
        Column("models")], rows,
        note="95% intervals by Fisher's z (1/sqrt(n-3)); coefficients need at least four models. Spearman with "
             f"at most {rank_tests.EXACT_MAX_N} models: the exact permutation p over all n! pairings, no interval."
             + (f" Not in the panel (ignored): {', '.join(unmatched)}." if unmatched else ""))
    return table, unmatched


def table16_scores(panel: Panel, scores: Sequence[ExternalScore]) -> Table:
    """The external scores of the panel's models, with their AgentHop accuracy (one row per model x benchmark)."""
    rows = [{"model": s.model, "tier": _tier(panel.by_model[s.model]), "benchmark": s.benchmark, "score": s.score,
             "agenthop_accuracy": panel.by_model[s.model]["accuracy"], "mark": s.mark}
            for s in scores if s.model in panel.by_model]
    return Table("table16_scores", "Table 16", "Per-model scores on external benchmarks", "paper-table-16", [
        Column("model", "text", "Model"), Column("tier", "text", "Tier"), Column("benchmark", "text", "Benchmark"),
        Column("score", "num1", "Score"), Column("agenthop_accuracy", "rate", "AgentHop %"), Column("mark")], rows)


# -- Tables 17 and 19 --------------------------------------------------------------------------------------


def table17(wh: Warehouse, panel: Panel) -> Table:
    keys = ("model", "metric", "n_runs", "mean", "std", "range", "min_value", "max_value", "n_values")
    values = q.replicate_values(wh, panel.condition)
    rows = [{**{k: r[k] for k in keys},
             "run_values": ";".join("" if v is None else repr(float(v)) for v in values.get((r["model"], r["metric"]), []))}
            for r in q.reruns(wh, panel.condition)]
    return Table("table17_reruns", "Table 17", "Rerun variance", "paper-table-17", [
        Column("model", "text", "Model"), Column("metric", "text", "Metric"), Column("n_runs", "int", "Runs"),
        Column("mean", "num3", "Mean"), Column("std", "num3", "SD"), Column("range", "num3", "Range"),
        Column("min_value", "num3", "Min"), Column("max_value", "num3", "Max"), Column("n_values", "int"),
        Column("run_values")], rows,
        note="Per model with at least two replicates under the condition; SD with ddof = 0; accuracy, "
             "section recall and conversion as fractions, tokens in thousands; run_values = each replicate's "
             "value, by replicate, ';'-separated.", group_by="model")


def covariate_quartiles(values: dict[str, float]) -> dict[str, tuple[int, float, float]]:
    """sample_id -> (quartile 1..4, lo, hi of that quartile): equal-count bins by rank (ties by sample_id)."""
    order = sorted(values, key=lambda s: (values[s], s))
    n = len(order)
    bins: dict[str, int] = {sid: 4 * i // n + 1 for i, sid in enumerate(order)}
    bounds: dict[int, tuple[float, float]] = {}
    for sid, b in bins.items():
        lo, hi = bounds.get(b, (values[sid], values[sid]))
        bounds[b] = (min(lo, values[sid]), max(hi, values[sid]))
    return {sid: (b, *bounds[b]) for sid, b in bins.items()}


def table19(wh: Warehouse, covariates: Covariates | None) -> Table:
    rows = [{**{k: r[k] for k in ("tier", "slice", "value", "n_models", "n", "correct", "accuracy")},
             "lo": None, "hi": None} for r in q.closed_book_slices(wh)]
    if covariates and rows:
        traj = q.closed_book_trajectories(wh)
        for column, values in covariates.numeric.items():
            quart = covariate_quartiles(values)
            acc: dict[tuple[str, int], list[Any]] = {}
            for t in traj:
                if t["sample_id"] not in quart:
                    continue
                b = quart[t["sample_id"]][0]
                for tier in ("all", t["tier"]):
                    a = acc.setdefault((tier, b), [set(), 0, 0])
                    a[0].add(t["model"])
                    a[1] += 1
                    a[2] += int(bool(t["is_correct"]))
            bounds = {b: (lo, hi) for b, lo, hi in quart.values()}
            tiers = ["all", *[t for t in TIER_ORDER if any(k[0] == t for k in acc)],
                     *sorted({k[0] for k in acc} - {"all", *TIER_ORDER})]
            for tier in tiers:
                for b in sorted(bounds):
                    if (tier, b) in acc:
                        models, n, correct = acc[(tier, b)]
                        rows.append({"tier": tier, "slice": f"{column} quartile", "value": f"Q{b}",
                                     "n_models": len(models), "n": n, "correct": correct, "accuracy": correct / n,
                                     "lo": bounds[b][0], "hi": bounds[b][1]})
    return Table("table19_closed_book", "Table 19", "Closed-book accuracy by seed year, venue and covariate",
                 "paper-table-19", [
                     Column("tier", "text", "Tier"), Column("slice", "text", "Slice"), Column("value", "text", "Value"),
                     Column("n_models", "int", "Models"), Column("n", "int", "n"), Column("correct", "int"),
                     Column("accuracy", "rate", "Acc %"), Column("lo", "num2", "from"), Column("hi", "num2", "to")],
                 rows, group_by="tier",
                 note="Closed-book panel runs (each model's lowest closed_book replicate); 'all' pools the tiers. "
                      "Covariate quartiles are equal-count bins of the items that have a value.")


# -- Figures -----------------------------------------------------------------------------------------------


def figure2(wh: Warehouse, panel: Panel) -> Table:
    keys = ("family", "step", "generation_from", "generation_to", "models_from", "models_to", "accuracy_from",
            "accuracy_to", "delta_pp")
    rows = [{k: r[k] for k in keys} for r in q.generation_gaps(wh, panel.condition)]
    return Table("figure02_generations", "Figure 2", "Within-family generation gap", "paper-figure-2", [
        Column("family", "text", "Family"), Column("step", "int"), Column("generation_from", "text", "From"),
        Column("generation_to", "text", "To"), Column("models_from", "text", "Models from"),
        Column("models_to", "text", "Models to"), Column("accuracy_from", "rate", "Acc from %"),
        Column("accuracy_to", "rate", "Acc to %"), Column("delta_pp", "pp", "Δ (pp)")], rows)


def figure4(wh: Warehouse, panel: Panel) -> tuple[Table, Table, Table]:
    items = q.item_difficulty(wh, panel.condition)
    t_items = Table("figure04_difficulty", "Figure 4", "Item difficulty: models correct per item", "paper-figure-4", [
        Column("sample_id", "text", "Item"), Column("cell", "text", "Cell"), Column("n_models", "int", "Models"),
        Column("n_correct", "int", "Correct"), Column("consensus_tier", "text", "Consensus"),
        Column("reasoning_type", "text", "Type")],
        [{k: r[k] for k in ("sample_id", "cell", "n_models", "n_correct", "consensus_tier", "reasoning_type")}
         for r in items], latex=False)
    hist: dict[tuple[str, str, int], int] = {}
    for r in items:
        for by, group in (("all", "all"), ("cell", r["cell"]), ("consensus_tier", r["consensus_tier"] or "unknown")):
            key = (by, group, int(r["n_correct"]))
            hist[key] = hist.get(key, 0) + 1
    order = {"all": 0, "cell": 1, "consensus_tier": 2}
    rows = [{"by": by, "group": g, "n_correct": k, "n_items": n}
            for (by, g, k), n in sorted(hist.items(), key=lambda kv: (order[kv[0][0]], kv[0][1], kv[0][2]))]
    t_hist = Table("figure04_histogram", "Figure 4", "How many models answered each item correctly", "paper-figure-4", [
        Column("by", "text"), Column("group", "text", "Group"), Column("n_correct", "int", "Models correct"),
        Column("n_items", "int", "Items")], rows, latex=False)
    return t_items, t_hist, figure4_buckets(items, len(panel.members))


def figure4_buckets(items: Sequence[dict[str, Any]], n_models: int) -> Table:
    """Per group (all, cell, consensus tier): the share of its items in each coverage bucket."""
    groups: dict[tuple[str, str], list[int]] = {}
    for r in items:
        for by, g in (("all", "all"), ("cell", r["cell"]), ("consensus_tier", r["consensus_tier"] or "unknown")):
            groups.setdefault((by, g), []).append(int(r["n_correct"]))
    order = {"all": 0, "cell": 1, "consensus_tier": 2}
    tier_order = {"gold": 0, "silver": 1, "bronze": 2, **{c: i for i, c in enumerate(layouts.CELLS)}}
    rows = []
    for (by, g), ks in sorted(groups.items(), key=lambda kv: (order[kv[0][0]], tier_order.get(kv[0][1], 9), kv[0][1])):
        n = len(ks)
        counts = {b: sum(1 for k in ks if layouts.bucket(k, n_models) == b) for b in ("low", "mid", "high")}
        rows.append({"by": by, "group": g, "n_items": n, **{f"n_{b}": c for b, c in counts.items()},
                     **{f"share_{b}": c / n for b, c in counts.items()},
                     "share_all_correct": sum(1 for k in ks if k == n_models) / n,
                     "share_none_correct": sum(1 for k in ks if k == 0) / n, "n_models": n_models})
    cols = [Column("by"), Column("group"), Column("n_items", "int"), Column("n_low", "int"), Column("n_mid", "int"),
            Column("n_high", "int"), Column("share_low", "rate"), Column("share_mid", "rate"),
            Column("share_high", "rate"), Column("share_all_correct", "rate"), Column("share_none_correct", "rate"),
            Column("n_models", "int")]
    t = Table("figure04_buckets", "Figure 4", "Items by coverage bucket", "paper-figure-4", cols, rows)
    t.view = layouts.figure4_buckets(t, n_models)
    return t


def figure5(panel: Panel) -> Table:
    rows = [{"model": m["model"], "tier": _tier(m), "paper_recall": m.get("paper_recall"),
             "accuracy": m.get("accuracy"), "run_id": m["run_id"], "is_simulated": m.get("is_simulated")}
            for m in panel.members]
    return Table("figure05_recall_accuracy", "Figure 5", "Accuracy against paper recall", "paper-figure-5", [
        Column("model", "text", "Model"), Column("tier", "text", "Tier"), Column("paper_recall", "rate", "Recall %"),
        Column("accuracy", "rate", "Acc %"), Column("run_id"), Column("is_simulated", "bool")], rows, latex=False)


def figure6(wh: Warehouse, panel: Panel) -> Table:
    rows = q.by_runs(wh, "tool_transitions", panel.run_ids, "s.model, x.prev_tool, x.next_tool")
    rows = [{k: r[k] for k in ("model", "prev_tool", "next_tool", "n", "p_next", "run_id")} for r in rows]
    return Table("figure06_transitions", "Figure 6", "Tool transition matrices", "paper-figure-6", [
        Column("model", "text"), Column("prev_tool", "text"), Column("next_tool", "text"), Column("n", "int"),
        Column("p_next", "num3"), Column("run_id")], rows, latex=False)


# -- Reliability -------------------------------------------------------------------------------------------


def reliability(wh: Warehouse, panel: Panel) -> tuple[Table, Table]:
    items, matrix = correctness_matrix(wh, panel.run_ids)
    alpha = stats.cronbach_alpha(matrix)
    ci = stats.cronbach_alpha_ci(alpha, len(matrix), len(items))
    disc = stats.corrected_item_total(matrix) if matrix else []
    summary = stats.discrimination_summary(disc)
    row = {"n_models": len(matrix), "n_items": len(items), "alpha": alpha,
           "alpha_lo": ci[0] if ci else None, "alpha_hi": ci[1] if ci else None,
           "n_items_discriminating": summary.n_items, "discrimination_median": summary.median,
           "discrimination_q1": summary.q1, "discrimination_q3": summary.q3,
           "share_above_0_2": summary.share_above}
    t = Table("reliability", "Reliability", "Cronbach's α and item discrimination", "paper-reliability", [
        Column("n_models", "int", "Models"), Column("n_items", "int", "Items"), Column("alpha", "num3", "α"),
        Column("alpha_lo", "num3", "lo"), Column("alpha_hi", "num3", "hi"),
        Column("n_items_discriminating", "int", "Items with r"), Column("discrimination_median", "num3", "Median r"),
        Column("discrimination_q1", "num3", "Q1"), Column("discrimination_q3", "num3", "Q3"),
        Column("share_above_0_2", "rate", "r > 0.2 %")], [row],
        note="α over the models × items correctness matrix (items every panel model answered), with its Feldt "
             "95% interval; r = corrected item-total correlation (undefined for items all models got right or "
             "all got wrong).")
    t_items = Table("reliability_items", "Reliability", "Corrected item-total correlation per item",
                    "paper-reliability", [Column("sample_id", "text", "Item"), Column("discrimination", "num3", "r")],
                    [{"sample_id": s, "discrimination": d} for s, d in zip(items, disc)], latex=False)
    return t, t_items


# -- Beyond the paper --------------------------------------------------------------------------------------


def budget_truncated(wh: Warehouse, panel: Panel) -> Table:
    rows = [{k: r[k] for k in ("model", "axis", "b", "n_items", "n_correct", "accuracy", "run_id")}
            for r in q.budget_truncated(wh, panel.run_ids)]
    return Table("budget_truncated", "Beyond the paper", "Accuracy at lower caps", "paper-budget-truncated", [
        Column("model", "text"), Column("axis", "text"), Column("b", "int"), Column("n_items", "int"),
        Column("n_correct", "int"), Column("accuracy", "rate"), Column("run_id")], rows, latex=False)


def bigram_frequency_pairs(panel: Panel, pairs: Sequence[tuple[str, str]] | None) -> list[tuple[str, str]]:
    """The model pairs to test: the given ones, else neighbours in the panel's accuracy ranking."""
    if pairs:
        return list(pairs)
    ranked = _ranked(panel.members, "accuracy")
    return [(a["model"], b["model"]) for a, b in zip(ranked, ranked[1:])]


def bigram_frequency(wh: Warehouse, panel: Panel, pairs: Sequence[tuple[str, str]]) -> Table:
    """Per pair and bigram: share of trajectories containing it in A vs B, Fisher's exact p, BH over bigrams."""
    effects: dict[str, dict[str, dict[str, Any]]] = {}
    for r in q.by_runs(wh, "bigram_effects", panel.run_ids, "s.model, x.bigram"):
        effects.setdefault(r["model"], {})[r["bigram"]] = r
    rows: list[dict[str, Any]] = []
    for a, b in pairs:
        ea, eb = effects.get(a, {}), effects.get(b, {})
        tested = []
        for bigram in sorted(set(ea) | set(eb)):
            ra, rb = ea.get(bigram), eb.get(bigram)
            with_a = int(ra["n_with"]) if ra else 0
            with_b = int(rb["n_with"]) if rb else 0
            if with_a == 0 and with_b == 0:
                continue
            n_a = int(ra["n_with"] + ra["n_without"]) if ra else 0
            n_b = int(rb["n_with"] + rb["n_without"]) if rb else 0
            tested.append({"model_a": a, "model_b": b, "bigram": bigram, "with_a": with_a, "n_a": n_a,
                           "with_b": with_b, "n_b": n_b, "share_a": with_a / n_a if n_a else None,
                           "share_b": with_b / n_b if n_b else None,
                           "p_value": stats.fisher_p(with_a, n_a, with_b, n_b)})
        for row, qv in zip(tested, stats.benjamini_hochberg([t["p_value"] for t in tested])):
            row["q_value"] = qv
            row["significant"] = qv < ALPHA
        rows += tested
    return Table("bigram_frequency_tests", "Beyond the paper", "Bigram frequency differences between two models",
                 "paper-bigram-frequency", [
                     Column("model_a", "text"), Column("model_b", "text"), Column("bigram", "text"),
                     Column("with_a", "int"), Column("n_a", "int"), Column("with_b", "int"), Column("n_b", "int"),
                     Column("p_value", "p"), Column("q_value", "p"), Column("significant", "bool"),
                     Column("share_a", "rate"), Column("share_b", "rate")], rows, latex=False,
                 note="q_value: Benjamini–Hochberg (false discovery rate) over the bigrams tested for each model "
                      "pair; significant = q below 0.05.")


def all_pairs(models: Sequence[str]) -> list[tuple[str, str]]:
    return list(itertools.combinations(models, 2))
