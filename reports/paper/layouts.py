"""The paper's layout of each table, for the page and the LaTeX: wide blocks, the paper's headers, signs,
units and number formats. Each function takes the rows of a CSV table (analyses.py) and returns the view
Table; the CSV keeps its own long, raw columns (docs/reports.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import stats
from ..agenthop.sections import REASONING_ORDER, WRONG_READ_ACTIONS, in_order
from ..values import as_float
from .table import REPEATS, Column, Table

#: The paper's names of the capability tiers (group rows) and their short forms (column headers).
TIER_LABELS = {"closed_frontier": "Closed Frontier", "open_frontier": "Open Frontier",
               "compute_efficient": "Compute-Efficient", "untiered": "Untiered"}
#: One colour per tier wherever models are plotted by tier (Figure 5, the leaderboard's scatter).
TIER_POINT_COLOURS = {"closed_frontier": "#1f4e8c", "open_frontier": "#d4731c", "compute_efficient": "#3f9b4f",
                      "untiered": "#777777"}
TIER_SHORT = {"closed_frontier": "Closed", "open_frontier": "Open", "compute_efficient": "Comp.-eff."}
#: Table 14's tool abbreviations (search_papers has none in the paper).
TOOL_ABBREV = {"get_paper_info": "gpi", "get_references": "gr", "list_sections": "ls", "search_papers": "sp",
               "read_section": "rs", "think": "th", "submit_answer": "sub"}
#: The paper's cell order of the question-type x depth grid (Table 10).
CELLS = ("st_d1", "st_d2", "mt_d1", "mt_d2")
#: Table 13 shows this many bigrams per sign.
TOP_BIGRAMS = 7


#: Colours of tiers outside the paper's three (a plugin's panel), in order of appearance.
OTHER_TIER_COLOURS = ("#8c564b", "#9467bd", "#17becf", "#bcbd22", "#e377c2")


def tier_colours(tiers: Sequence[str]) -> list[str]:
    """One colour per tier, the paper's tiers always in the same colour."""
    others = iter(OTHER_TIER_COLOURS * (1 + len(tiers) // len(OTHER_TIER_COLOURS)))
    return [TIER_POINT_COLOURS.get(t) or next(others) for t in tiers]


def tier_label(tier: str | None) -> str:
    return TIER_LABELS.get(tier or "untiered", tier or "Untiered")


def arrow(seq: str, abbrev: dict[str, str] | None = None) -> str:
    """A tool sequence as the paper prints it: 'read_section>think' -> 'read_section→think'."""
    parts = seq.split(">")
    return "→".join(abbrev.get(p, p) for p in parts) if abbrev else "→".join(parts)


def _tiered(rows: list[dict[str, Any]], order: Sequence[str], rank: Callable[[dict[str, Any]], Any] | None = None,
            ) -> list[dict[str, Any]]:
    """Rows with a `tier_label`, in tier order; within a tier by `rank` (else in `order`, the model order)."""
    pos = {m: i for i, m in enumerate(order)}
    seen = list(dict.fromkeys(r.get("tier") or "untiered" for r in sorted(rows, key=lambda r: pos.get(r["model"], 0))))
    canon = [t for t in TIER_LABELS if t != "untiered"]
    tiers = ([t for t in canon if t in seen] + [t for t in seen if t not in canon and t != "untiered"]
             + (["untiered"] if "untiered" in seen else []))  # the tiers' order, as in Table 2
    out = []
    for tier in tiers:
        in_tier = [r for r in rows if (r.get("tier") or "untiered") == tier]
        in_tier.sort(key=rank if rank else (lambda r: pos.get(r["model"], len(pos))))
        out += [{**r, "tier_label": tier_label(tier)} for r in in_tier]
    return out


def _blank_repeats(rows: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """The paper prints a block's label on its first row only: later rows mark it as a repeat (blank in the
    LaTeX, muted on the page, where the label stays so that sorting keeps it with its row)."""
    out, last = [], object()
    for r in rows:
        out.append({**r, REPEATS: {key} if r[key] == last else set()})
        last = r[key]
    return out


def _view(base: Table, columns: list[Column], rows: list[dict[str, Any]], **kw: Any) -> Table:
    return Table(base.key, base.ref, kw.pop("title", base.title), base.definition, columns, rows, **kw)


# -- Table 2 -------------------------------------------------------------------------------------------


def table2(base: Table) -> Table:
    cols = [Column("model", "text", "Model"),
            Column("recall_st", "frac3", "Recall(ST)"), Column("recall_mt", "frac3", "Recall(MT)"),
            Column("secrec_st", "frac3", "SecRec(ST)", tip="section recall, single-target items"),
            Column("secrec_mt", "frac3", "SecRec(MT)", tip="section recall, multi-target items"),
            Column("conversion_st", "frac3", "Conversion(ST)"), Column("conversion_mt", "frac3", "Conversion(MT)"),
            Column("calls_per_turn", "num2", "Calls/Turn"), Column("avg_tokens_k", "num1", "Avg.Tokens",
                                                                   tip="thousands of tokens per sample"),
            Column("avg_turns", "num1", "Avg.Turns"), Column("avg_budget", "num1", "Avg.Budgets",
                                                             tip="budget points spent per sample"),
            Column("max_tokens_rate", "rate", "Max Tokens", tip="% of runs stopped by the token cap"),
            Column("max_turns_rate", "rate", "Max Turns", tip="% of runs stopped by the turn cap"),
            Column("max_budget_rate", "rate", "Max Budgets", tip="% of runs stopped by the budget"),
            Column("accuracy", "frac3", "Accuracy"), Column("tier_label")]
    rows = [{**r, "tier_label": tier_label(r["tier"])} for r in base.rows]
    return _view(base, cols, rows, group_by="tier_label", marks=dict(base.marks),
                 header_groups=[("", 1), ("Search↑", 4), ("Synthesis↑", 2), ("Tool-use", 1), ("Resource↓", 3),
                                ("Failure Ratio↓", 3), ("Outcome↑", 1)],
                 note="Fractions as in the paper; Avg.Tokens in thousands; failure ratios in % of runs; – = undefined "
                      "(conversion of a model that recalled no item). "
                      "* = tier leader by accuracy; bold = panel best; † on a conversion cell = the tier's "
                      "conversion leader differs from its runner-up by exact McNemar on the items both "
                      "recalled (p < 0.05). SIMULATED (\"(sim)\" in the LaTeX) = a simulated agent, not a real "
                      "model.")


# -- Tables 3, 9, 14, 15 -------------------------------------------------------------------------------

#: Table 3's columns: the actions' display names and descriptions (one source with the compare page);
#: ``other`` is a column only when a model has such reads
T3_ACTIONS = tuple((k, name, what) for k, (name, what) in WRONG_READ_ACTIONS.items() if k != "other")


def table3(base: Table, members: Sequence[dict[str, Any]], order: Sequence[str]) -> Table:
    per: dict[str, dict[str, Any]] = {}
    for r in base.rows:
        d = per.setdefault(r["model"], {"model": r["model"], "n": r["n_total"]})
        d[r["action"]] = r["share"]
    other = any((as_float(d.get("other")) or 0) > 0 for d in per.values())
    rows = [{"tier": m.get("tier"), **per.get(m["model"], {"model": m["model"], "n": 0})} for m in members]
    cols = [Column("model", "text", "Model"), Column("n", "int", "n", tip="wrong-paper read_section calls")]
    cols += [Column(k, "pct", h, tip=tip) for k, h, tip in T3_ACTIONS]
    if other:
        name, what = WRONG_READ_ACTIONS["other"]
        cols.append(Column("other", "pct", name, tip=what))
    return _view(base, [*cols, Column("tier_label")], _tiered(rows, order), group_by="tier_label",
                 title="Action distribution after a wrong-paper read_section call",
                 note="Share of a model's wrong-paper reads followed by each action; – = the model made no wrong-paper read.")


T9_BLOCKS = (("MT-fail", "MT-fail", (("zero_gold", "0-Gold"), ("premature", "Prem"), ("explored", "Explored"),
                                      ("stayed", "Stayed"))),
             ("ST", "ST (after gold)", (("immediate", "Imm"), ("think", "Thnk"), ("read", "Read"))),
             ("MT-both", "MT-both (after both)", (("immediate", "Imm"), ("think", "Thnk"), ("read", "Read"))))
T9_TIPS = {"0-Gold": "submitted without reaching a gold paper", "Prem": "premature commit after the first gold",
           "Explored": "explored further, missed the second gold", "Stayed": "read only the gold already reached",
           "Imm": "submitted immediately", "Thnk": "thought, then submitted", "Read": "read more before submitting"}


def table9(base: Table, members: Sequence[dict[str, Any]], order: Sequence[str]) -> Table:
    per: dict[str, dict[str, Any]] = {m["model"]: {"model": m["model"], "tier": m.get("tier")} for m in members}
    for r in base.rows:
        d = per.setdefault(r["model"], {"model": r["model"]})
        d[f"{r['scope']}:n"] = r["n_scope"]
        d[f"{r['scope']}:{r['category']}"] = r["share"]
    cols = [Column("model", "text", "Model")]
    groups: list[tuple[str, int]] = [("", 1)]
    for scope, label, cats in T9_BLOCKS:
        cols.append(Column(f"{scope}:n", "int", "n", tip=f"{scope} trajectories in scope"))
        cols += [Column(f"{scope}:{k}", "rate", h, tip=T9_TIPS[h]) for k, h in cats]
        groups.append((label, 1 + len(cats)))
    return _view(base, [*cols, Column("tier_label")], _tiered(list(per.values()), order), group_by="tier_label",
                 header_groups=groups, title="Stopping behaviour across the MT-fail, ST and MT-both scopes",
                 note="n: trajectories in scope; then the share (%) of each category. MT-fail's four "
                      "categories sum to 100%; the ST and MT-both residual navigates without reading. – = no "
                      "trajectory in that scope (n = 0).")


def table14(base: Table, members: Sequence[dict[str, Any]]) -> Table:
    tiers = {m["model"]: m.get("tier") for m in members}
    rows = [{**r, "tier": tiers.get(r["model"]), "trigram_short": arrow(r["trigram"], TOOL_ABBREV)}
            for r in base.rows]
    cols = [Column("model", "text", "Model"),
            Column("trigram_short", "text", "Top-1 trigram", tip=", ".join(f"{a} = {t}" for t, a in TOOL_ABBREV.items())),
            Column("share", "frac3", "Concentration", tip="share of all the model's trigrams"), Column("tier_label")]
    return _view(base, cols, _tiered(rows, list(tiers), rank=lambda r: (-(as_float(r["share"]) or 0), r["model"])),
                 group_by="tier_label", title="Per-model top-1 trigram and concentration share",
                 note="Ranked within tier by concentration. "
                      + ", ".join(f"{a} = {t}" for t, a in TOOL_ABBREV.items()) + ".")


def table15(base: Table) -> Table:
    cols = [Column("model", "text", "Model"), Column("accuracy", "rate", "Acc"),
            Column("na_rate", "rate", "NA", tip="no parseable answer letter"),
            Column("max_turns_rate", "rate", "MaxT", tip="stopped by the turn cap"),
            Column("max_budget_rate", "rate", "Bud", tip="stopped by the budget"),
            Column("max_tokens_rate", "rate", "Tok", tip="stopped by the token cap"), Column("tier_label")]
    rows = _tiered(list(base.rows), [r["model"] for r in base.rows],
                   rank=lambda r: (-(as_float(r["accuracy"]) or 0), r["model"]))
    view = _view(base, cols, rows, group_by="tier_label",
                 note="% of all trajectories. NA = no parseable answer letter; MaxT, Bud and Tok split NA by the "
                      "cap that ended the run.")
    view.latex_view = side_by_side(view)
    return view


def side_by_side(view: Table) -> Table:
    """The paper's two-column arrangement of a tier-grouped table (Tables 15 and 18): tiers in pairs, each
    pair's tiers side by side; a tier left without a partner is split into two halves, its better half
    left. The columns repeat once per half."""
    groups = [(g, [r for _, r in rows]) for g, rows in view.groups()]
    cols = [c for c in view.shown_columns]
    keys = [c.key for c in cols]
    out_rows: list[dict[str, Any]] = []
    i = 0
    while i < len(groups):
        if i + 1 < len(groups):
            (gl, left), (gr, right) = groups[i], groups[i + 1]
            i += 2
        else:
            gl, rows = groups[i]
            half = (len(rows) + 1) // 2
            left, right, gr = rows[:half], rows[half:], ""
            i += 1
        for j in range(max(len(left), len(right))):
            line: dict[str, Any] = {"pair": f"{gl}|{gr}", REPEATS: set()}
            for side, rows in (("l", left), ("r", right)):
                if j < len(rows):
                    line.update({f"{side}:{k}": rows[j].get(k) for k in keys})
                else:
                    line[REPEATS] |= {f"{side}:{k}" for k in keys}
            out_rows.append(line)
    halves = [Column(f"{side}:{c.key}", c.kind, c.header, c.latex) for side in ("l", "r") for c in cols]
    return Table(view.key, view.ref, view.title, view.definition, [*halves, Column("pair")], out_rows,
                 group_by="pair", split_groups=True, note=view.note)


# -- Tables 4 and 18 ------------------------------------------------------------------------------------


def table4(base: Table, panel_acc: dict[tuple[str, str], float]) -> Table:
    """Models with a panel run under closed_book, no_search and full: the paper's three settings with the
    two adjacent deltas, all of the panel runs (the runs the CSV's McNemar columns pair)."""
    models = sorted({r["model"] for r in base.rows})
    rows = []
    for m in models:
        z, ns, f = (panel_acc.get((m, c)) for c in ("closed_book", "no_search", "full"))
        if z is None or ns is None or f is None:
            continue
        rows.append({"model": m, "zero": z, "d_tools": 100 * (ns - z), "no_search": ns, "d_kw": 100 * (f - ns),
                     "full": f})
    rows.sort(key=lambda r: (r["full"], r["model"]))
    missing = "" if rows else ("No model has panel runs under all three of closed_book, no_search and full; "
                               "the pairs it has are in the CSV. ")
    cols = [Column("model", "text", "Model"), Column("zero", "rate", "Zero-tool"),
            Column("d_tools", "pp", "Δtools", r"$\Delta_{\textrm{tools}}$", tip="zero-tool → no-search"),
            Column("no_search", "rate", "No-search"),
            Column("d_kw", "pp", "Δkw", r"$\Delta_{\textrm{kw}}$", tip="no-search → full"),
            Column("full", "rate", "Full-tool")]
    return _view(base, cols, rows, units=["", "(%)", "(pp)", "(%)", "(pp)", "(%)"],
                 title="Ablation: zero-tool, no-search and full-tool, with each delta paired between adjacent settings",
                 note=missing + "Every number is of the panel runs (each condition's lowest replicate): the runs whose "
                      "exact McNemar counts the CSV gives. The CSV also has the mean over replicates "
                      "(accuracy_from, accuracy_to, delta_pp). Models without all three settings are in Table 18 "
                      "and the CSV only. The CSV's McNemar p is each test alone, not corrected for multiplicity, as "
                      "in the paper; p_holm adjusts it over all the table's tests (Holm).")


def table18(base: Table, order: Sequence[str]) -> Table:
    cols = [Column("model", "text", "Model"), Column("accuracy_zero", "rate", "Zero"),
            Column("accuracy_full", "rate", "Full"), Column("delta_pp", "pp", "Δ", tip="full − zero-tool (pp)"),
            Column("tier_label")]
    rows = _tiered(list(base.rows), order, rank=lambda r: (-(as_float(r["accuracy_full"]) or 0), r["model"]))
    view = _view(base, cols, rows, group_by="tier_label",
                 note="Accuracy (%) of the panel runs; chance is 25%. A negative Δ: the tools cost accuracy.")
    view.latex_view = side_by_side(view)
    return view


# -- Table 8 -------------------------------------------------------------------------------------------------


def table8(base: Table, order: Sequence[str] = ()) -> Table:
    """Table 8 in Table 2's model order (tier, family, accuracy), as the other per-model tables list them."""
    rows = []
    for r in base.rows:
        n = r.get("n_items") or 0
        rows.append({"model": r["model"], "full": r.get("total_usd"), "zero": r.get("closed_book_total_usd"),
                     "per_sample": r.get("usd_per_item"),
                     "input": (r["prompt_tokens"] / n) if n and r.get("prompt_tokens") is not None else None,
                     "output": (r["completion_tokens"] / n) if n and r.get("completion_tokens") is not None else None})

    pos = {m: i for i, m in enumerate(order)}
    rows.sort(key=lambda r: (pos.get(r["model"], len(pos)), r["model"]))

    def total(key: str) -> float | None:
        vals = [as_float(r[key]) for r in rows if as_float(r[key]) is not None]
        return sum(vals) if vals else None

    footer = [{"model": "Total", "full": total("full"), "zero": total("zero"), "per_sample": None, "input": None,
               "output": None}]
    cols = [Column("model", "text", "Model"), Column("full", "usd", "Full-tool ($)"),
            Column("zero", "usd", "Zero-tool ($)"), Column("per_sample", "num3", "$/sample (full)"),
            Column("input", "k0", "Input/sample (K)", tip="prompt tokens per sample, thousands"),
            Column("output", "comma", "Output/sample", tip="completion tokens per sample")]
    return _view(base, cols, rows, footer=footer, title="Per-model API cost and average per-sample token consumption",
                 note="Costs from the price table (tokens of every attempt); unpriced models (simulated, or not "
                      "in the table) print –. Tokens per sample of the full-tool run.")


# -- Table 10 --------------------------------------------------------------------------------------------------


def _acc_pm(r: dict[str, Any] | None) -> str:
    return stats.format_acc_pm(int(r["correct"]), int(r["n"])) if r and r.get("n") else "–"


def _wide_acc(base: Table, members: Sequence[dict[str, Any]], key: str, values: Sequence[str]) -> list[dict[str, Any]]:
    per: dict[str, dict[str, Any]] = {m["model"]: {"model": m["model"]} for m in members}
    for r in base.rows:
        per.setdefault(r["model"], {"model": r["model"]})[r[key]] = r
    return [{"model": m, **{v: _acc_pm(d.get(v)) for v in values}} for m, d in per.items()]


def table10(base: Table, spread: Table, members: Sequence[dict[str, Any]], order: Sequence[str]) -> Table:
    cells = [c for c in CELLS if any(r["cell"] == c for r in base.rows)]
    cells += sorted({r["cell"] for r in base.rows} - set(cells))
    rows = _wide_acc(base, members, "cell", cells)
    delta = {r["model"]: r["delta_pp"] for r in spread.rows}
    easiest = next((r["easiest_cell"] for r in spread.rows), "easiest")
    hardest = next((r["hardest_cell"] for r in spread.rows), "hardest")
    for r in rows:
        r["delta_pp"] = delta.get(r["model"])
    pos = {m: i for i, m in enumerate(order)}
    rows.sort(key=lambda r: pos.get(r["model"], len(pos)))
    n_cell = {c: max((int(r["n"]) for r in base.rows if r["cell"] == c), default=0) for c in cells}
    tex = rf"$\Delta_{{\textrm{{{easiest.replace('_', chr(92) + '_')}}}-\textrm{{{hardest.replace('_', chr(92) + '_')}}}}}$"
    cols = [Column("model", "text", "Model"), *[Column(c, "cell", c) for c in cells],
            Column("delta_pp", "pp", f"Δ{easiest}−{hardest}", tex, tip="the drop from the easiest to the hardest cell")]
    return _view(base, cols, rows, units=["", *[f"(n={n_cell[c]})" for c in cells], "(pp)"],
                 title="Per-cell accuracy on the question-type × depth grid",
                 note=f"Accuracy (%) {stats.ACC_PM_MEANING} (not a half-width; the full intervals are in the "
                      "table10_cells.csv export). Δ is the drop from the easiest to "
                      "the hardest cell, by the panel's pooled accuracy (positive = the hard cell is worse).")


def table10_reasoning(base: Table, members: Sequence[dict[str, Any]], order: Sequence[str]) -> Table:
    types = in_order([r["reasoning_type"] for r in base.rows], REASONING_ORDER)
    rows = _wide_acc(base, members, "reasoning_type", types)
    pos = {m: i for i, m in enumerate(order)}
    rows.sort(key=lambda r: pos.get(r["model"], len(pos)))
    return _view(base, [Column("model", "text", "Model"), *[Column(t, "cell", t) for t in types]], rows,
                 note=f"Accuracy (%) {stats.ACC_PM_MEANING}, per reasoning type.")


# -- Tables 11, 12, 13 -------------------------------------------------------------------------------------------

T11_GROUPS = {"header": "Read a direct-labelled section (header match)",
              "parent": "Read the labelled content inside its parent section",
              "none": "Read no direct-labelled content"}


def table11(base: Table) -> Table:
    rows = [{**r, "group": T11_GROUPS.get(r["evidence_contact"], r["evidence_contact"])} for r in base.rows]
    cols = [Column("group", "text", "Group"), Column("n", "int", "n"), Column("share", "pct", "Share"),
            Column("conversion", "pct", "Conversion"),
            Column("closed_book_accuracy", "pct", "Zero-tool", tip="the same models' closed-book accuracy on the same items")]
    return _view(base, cols, rows, title="Evidence-contact decomposition of the recall-credited trajectories")


def table12(base: Table) -> Table:
    rows = []
    for r in base.rows:
        if r["axis"] == "accuracy":
            continue
        scope = "MT" if r["axis"] == "conversion_mt" else "ST"
        walk = r["panel"].startswith("top")
        label = scope if walk else f"{TIER_SHORT.get(r['panel'], r['panel'])}, {scope}"
        rows.append({"pair": f"{label} {r['model_a']} vs {r['model_b']}", "n": r["n"],
                     "discordant": f"{r['a_only']}/{r['b_only']}", "p_value": r["p_value"],
                     "block": "Adjacent pairs among the six highest MT conversions" if walk
                     else "Tier conversion leader against the runner-up"})
    cols = [Column("pair", "text", "Pair"), Column("n", "int", "n", tip="common recalled items"),
            Column("discordant", "cell", "Discordant", tip="A right, B wrong / A wrong, B right"),
            Column("p_value", "p", "p"), Column("block")]
    return _view(base, cols, rows, group_by="block",
                 title="Exact McNemar tests on common recalled items (discordant pairs; two-sided p)",
                 note="p: each test alone, not corrected for multiplicity, as in the paper (whose numbers this "
                      "reproduces); the Holm-adjusted p over all the table's tests is in the CSV (p_holm). The accuracy "
                      "tests of each tier's leader are in the CSV (axis = accuracy).")


def bigram_selection(rows: Sequence[dict[str, Any]], top: int = TOP_BIGRAMS) -> dict[str, str]:
    """Table 13's rows: bigrams present in more than half of the panel's models, the `top` largest positive
    and the `top` largest negative panel-mean Δ. bigram -> 'productive' | 'anti_productive'."""
    eligible = [r for r in rows if as_float(r["panel_mean_effect_pp"]) is not None
                and 2 * int(r["models_present"]) > int(r["n_models"])]
    pos = sorted((r for r in eligible if r["panel_mean_effect_pp"] > 0),
                 key=lambda r: (-r["panel_mean_effect_pp"], r["bigram"]))[:top]
    neg = sorted((r for r in eligible if r["panel_mean_effect_pp"] < 0),
                 key=lambda r: (r["panel_mean_effect_pp"], r["bigram"]))[:top]
    return {**{r["bigram"]: "productive" for r in pos}, **{r["bigram"]: "anti_productive" for r in neg}}


def table13(base: Table) -> Table:
    chosen = bigram_selection(base.rows)
    blocks = {"productive": "Productive (positive Δ)", "anti_productive": "Anti-productive (negative Δ)"}
    rows = [{"bigram": arrow(r["bigram"]), "delta": r["panel_mean_effect_pp"],
             "sig": f"{r['sig_count']}/{r['n_models']}", "models": f"{r['models_present']}/{r['n_models']}",
             "block": blocks[chosen[r["bigram"]]], "_order": (chosen[r["bigram"]] != "productive",
                                                          -abs(r["panel_mean_effect_pp"]), r["bigram"])}
            for r in base.rows if r["bigram"] in chosen]
    rows.sort(key=lambda r: r.pop("_order"))
    cols = [Column("bigram", "text", "Bigram"), Column("delta", "pp", "Δ (pp)"),
            Column("sig", "cell", "Sig. count", tip="models where the effect is significant after Bonferroni (49)"),
            Column("models", "cell", "Models", tip="models with the bigram in at least one trajectory"),
            Column("block")]
    return _view(base, cols, rows, group_by="block",
                 title="Top productive and anti-productive bigrams, ranked by panel-mean |Δ|",
                 note=f"The {TOP_BIGRAMS} largest |Δ| of each sign among the bigrams present in more than half of "
                      "the panel's models (all 49 in the CSV). Δ = panel-mean accuracy difference between "
                      "trajectories with and without the bigram.")


# -- Tables 16, 17, 19 --------------------------------------------------------------------------------------------


def table16(base: Table, order: Sequence[str]) -> Table:
    benches = list(dict.fromkeys(r["benchmark"] for r in base.rows))
    per: dict[str, dict[str, Any]] = {}
    for r in base.rows:
        d = per.setdefault(r["model"], {"model": r["model"], "tier": r["tier"], "agenthop": r["agenthop_accuracy"]})
        d[f"b:{r['benchmark']}"] = f"{float(r['score']):.1f}{r.get('mark') or ''}"
    rows = _tiered(list(per.values()), order, rank=lambda r: (-(as_float(r["agenthop"]) or 0), r["model"]))
    cols = [Column("model", "text", "Model"), *[Column(f"b:{b}", "cell", b) for b in benches],
            Column("agenthop", "rate", "AgentHop"), Column("tier_label")]
    return _view(base, cols, rows, group_by="tier_label", title="Per-model scores on external benchmarks",
                 note="Scores as given in --external; ∗ = a proxy from a closely related checkpoint, † = a "
                      "context-managed variant (the file's mark column); AgentHop = accuracy (%). – = no score.")


#: Table 17's metric labels and number formats (fractions with three decimals, tokens in thousands with one).
T17_METRICS = {"accuracy": ("Accuracy", "{:.3f}"), "section_recall": ("Section recall", "{:.3f}"),
               "conversion": ("Conversion", "{:.3f}"), "avg_tokens_k": ("Tokens (k)", "{:.1f}")}


def table17(base: Table) -> Table:
    n_runs = max((len(r["run_values"].split(";")) for r in base.rows if r.get("run_values")), default=0)
    rows = []
    for r in base.rows:
        label, fmt = T17_METRICS.get(r["metric"], (r["metric"], "{:.3f}"))
        values = r["run_values"].split(";") if r.get("run_values") else []

        def f(v: Any) -> str:
            x = as_float(v)
            return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else fmt.format(x)

        row = {"model": r["model"], "metric": label, "mean": f(r["mean"]), "std": f(r["std"]), "range": f(r["range"])}
        for i in range(n_runs):
            row[f"run{i}"] = f(values[i]) if i < len(values) and values[i] != "" else "–"
        rows.append(row)
    cols = [Column("model", "text", "Model"), Column("metric", "text", "Metric"),
            *[Column(f"run{i}", "cell", f"Run {i}") for i in range(n_runs)],
            Column("mean", "cell", "Mean"), Column("std", "cell", "Std"), Column("range", "cell", "Range")]
    return _view(base, cols, _blank_repeats(rows, "model"), title="Run-to-run figures for the models with replicates",
                 note="Run i = replicate i; Std with ddof = 0; Range = max − min. Fractions except tokens "
                      "(thousands per trajectory).")


def _bound(x: Any) -> str:
    v = as_float(x)
    if v is None:
        return ""
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.2f}"


def table19(base: Table) -> Table:
    slices: dict[tuple[str, str], dict[str, Any]] = {}
    tiers: list[str] = []
    for r in base.rows:
        key = (r["slice"], r["value"])
        d = slices.setdefault(key, {"axis": r["slice"], "value": r["value"]})
        if r["tier"] == "all":
            d["n"] = int(r["n"]) // max(1, int(r["n_models"]))
            if r.get("lo") is not None:
                d["value"] = f"{r['value']} ({_bound(r['lo'])}–{_bound(r['hi'])})"
        else:
            d[f"t:{r['tier']}"] = r["accuracy"]
            if r["tier"] not in tiers:
                tiers.append(r["tier"])
    axis_label = {"seed_year": "Year", "venue": "Venue"}
    rows = [{**d, "axis": axis_label.get(d["axis"], d["axis"].removesuffix(" quartile"))} for d in slices.values()]
    cols = [Column("axis", "text", "Axis"), Column("value", "text", "Stratum"),
            Column("n", "int", "n", tip="items (closed-book trajectories ÷ models)"),
            *[Column(f"t:{t}", "rate", TIER_SHORT.get(t, t)) for t in tiers]]
    return _view(base, cols, _blank_repeats(rows, "axis"), title="Zero-tool accuracy (%) by stratum, per tier",
                 note="Closed-book panel runs. Quartiles are rank-based over the items with a value; the range "
                      "gives the covariate's values.")


def bigram_frequency(base: Table, per_pair: int = 5) -> Table:
    """Per pair, the bigrams whose frequency differs significantly (BH q < 0.05), else the three smallest q."""
    rows: list[dict[str, Any]] = []
    pairs = list(dict.fromkeys((r["model_a"], r["model_b"]) for r in base.rows))
    for a, b in pairs:
        tested = sorted((r for r in base.rows if (r["model_a"], r["model_b"]) == (a, b)),
                        key=lambda r: (r["q_value"], -abs((r["share_a"] or 0) - (r["share_b"] or 0)), r["bigram"]))
        sig = [r for r in tested if r["significant"]]
        pick = sig[:per_pair] if sig else tested[:3]
        rows += [{**r, "pair": f"{a} vs {b}" + ("" if sig else " (none significant: smallest q)"),
                  "bigram_arrow": arrow(r["bigram"])} for r in pick]
    cols = [Column("bigram_arrow", "text", "Bigram"), Column("share_a", "pct", "A", tip="share of A's trajectories"),
            Column("share_b", "pct", "B", tip="share of B's trajectories"), Column("p_value", "p", "p"),
            Column("q_value", "p", "q", tip="Benjamini-Hochberg over the pair's bigrams"), Column("pair")]
    return _view(base, cols, rows, group_by="pair", latex=True,
                 title="Bigrams whose frequency differs between two models",
                 note=f"Per pair (--pair, else neighbours in the accuracy ranking) up to {per_pair} bigrams with "
                      "q < 0.05 (smallest q, then the largest difference first), else the three smallest q; every tested "
                      "bigram is in the CSV.")


def hidden(base: Table) -> Table:
    """A CSV-only table: its content is a column of another table's paper layout (Table 10's Δ)."""
    return _view(base, [], [], latex=False, note="In the CSV only: its Δ is the last column of the table above.")


# -- Figure 4 ----------------------------------------------------------------------------------------------


def bucket(n_correct: int, n_models: int) -> str:
    """Figure 4's bucket of an item by the share of panel models that answered it: below a third 'low', above
    two thirds 'high', else 'mid' (for 19 models the paper's 0-6, 7-12 and 13-19)."""
    if 3 * n_correct < n_models:
        return "low"
    return "high" if 3 * n_correct > 2 * n_models else "mid"


def bucket_ranges(n_models: int) -> dict[str, str]:
    """'low' -> '0–6' for 19 models: the counts of each bucket."""
    ks = {b: [k for k in range(n_models + 1) if bucket(k, n_models) == b] for b in ("low", "mid", "high")}
    return {b: (f"{v[0]}–{v[-1]}" if len(v) > 1 else str(v[0])) if v else "none" for b, v in ks.items()}


def figure4_buckets(base: Table, n_models: int) -> Table:
    ranges = bucket_ranges(n_models)
    labels = {"all": "All items"}
    rows = [{**r, "group_label": labels.get(r["group"], r["group"]),
             "block": {"all": "Panel", "cell": "(a) Question type × depth", "consensus_tier": "(b) Consensus tier"}[r["by"]]}
            for r in base.rows]
    cols = [Column("group_label", "text", "Group"), Column("n_items", "int", "n"),
            *[Column(f"share_{b}", "rate", f"{b.capitalize()} ({ranges[b]})", tip=f"{ranges[b]} of {n_models} models correct")
              for b in ("low", "mid", "high")],
            Column("share_all_correct", "rate", "All correct"), Column("share_none_correct", "rate", "None correct"),
            Column("block")]
    return _view(base, cols, rows, group_by="block", title="Items by coverage bucket (%)",
                 note=f"Each item is low, mid or high by how many of the {n_models} panel models answered it.")
