"""The SciExplore paper's tables for the loaded systems (docs/sciexplore.md#report).

Tables 3, 4 and 6 show each system's mean over its replicates, grouped by paradigm as the paper
groups them; a CSV-only companion holds one row per replicate. Percentages with two decimals, as
the paper prints them; the CSVs hold fractions (variances: percentage points squared).
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import mean
from typing import Any

from .. import multiplicity, rank_tests, stats
from ..core import clusters
from ..paper.table import FORMATS, Column, Table, _numeric
from ..core.coverage import Coverage, exclusions
from .audit import AuditCounts
from .data import PARADIGM_TITLES, System

FORMATS.setdefault("rate2", _numeric("{:.2f}", scale=100))  # a fraction as the paper's percentage: 0.2051 -> 20.51

DOC = "sciexplore.md#"
TYPES = ("T1", "T2", "T3", "T4")
SCORE_OF_TYPE = {"T1": "t1_fem", "T2": "t2_fem", "T3": "t3_fcite", "T4": "t4_item_recall"}
T3_COLUMNS = (("t1_fem", "T1"), ("t2_fem", "T2"), ("t3_fcite", "T3"), ("t4_item_recall", "T4 Item"),
              ("t4_row_recall", "T4 Row"), ("overall", "Overall"))
#: Table 6's caption: how its columns relate to Table 3's T1 here, and that the paper's two tables disagree
T6_NOTE = ("Mean over each system's replicates. Here T1 in Table 3 and these columns come from the same T1 "
           "verdicts, so they always agree. The paper's own tables do not: weighting its hop columns by the tasks "
           "per hop (9, 10, 8, 8 and 4 of the 39 T1 tasks) gives a different T1 than its Table 3 prints for 6 of "
           "its 13 systems (Gemini Deep Research, for one: 9 of 39 tasks, 23.08, against 35.90 printed). When "
           "comparing with the paper, hold this table against its Table 6 and Table 3's T1 against its T1, each "
           "on its own; neither of the paper's two columns can be checked against the other.")
#: premature abandonment: not attempted after at most this many search calls
ABANDON_MAX_SEARCHES = 2


def _base(s: System) -> dict[str, Any]:
    return {"paradigm": PARADIGM_TITLES.get(s.paradigm, s.paradigm), "model": s.label, "n_runs": len(s.runs)}


def _mean_of(s: System, key: str) -> float:
    return mean(float(r[key]) for r in s.runs)


def _replicates(key: str, ref: str, title: str, anchor: str, systems: Sequence[System],
                cols: Sequence[str]) -> Table:
    rows = [{"paradigm": s.paradigm, "model": s.model, "replicate": r["replicate"], "run_id": r["run_id"],
             **{c: r[c] for c in cols}} for s in systems for r in s.runs]
    return Table(key, ref, title + " (one row per replicate)", DOC + anchor,
                 [Column("paradigm"), Column("model"), Column("replicate", "int"), Column("run_id"),
                  *[Column(c, "num3") for c in cols]], rows, latex=False)


def _n_tasks(systems: Sequence[System]) -> int:
    return max((int(s.runs[0]["n_tasks"]) for s in systems), default=0)


def table3(systems: Sequence[System]) -> list[Table]:
    cols = [k for k, _ in T3_COLUMNS]
    rows = [{**_base(s), **{k: _mean_of(s, k) for k in cols}} for s in systems]
    t = Table("table03_main", "Table 3", "Main results (%)", DOC + "summary",
              [Column("paradigm", header="Paradigm"), Column("model", header="Model"), Column("n_runs", "int"),
               *[Column(k, "rate2", h) for k, h in T3_COLUMNS]], rows, group_by="paradigm",
              note=f"Mean over each system's replicates, each run scored over the release's {_n_tasks(systems)} tasks: a "
                   "task without a response counts as not attempted, as the paper counts it (how many tasks each "
                   "system answered: at the top of the page). Overall = 0.2 T1 + 0.2 T2 + 0.3 T3 + 0.3 T4 Item, computed "
                   "from the columns: the paper's own printed Overall column does not follow from its other columns "
                   "with these weights, so it cannot be compared digit for digit. Bold: the best value of each column.")
    _mark_best(t, cols)
    _mark_simulated(t, systems)
    return [t, _replicates("table03_main_replicates", "Table 3", "Main results", "summary", systems, cols)]


def table4(systems: Sequence[System]) -> list[Table]:
    cols = ("format_acc", "pk_recall")
    rows = [{**_base(s), **{k: _mean_of(s, k) for k in cols}} for s in systems]
    t = Table("table04_format_pk", "Table 4", "T4 format accuracy and primary-key recall (%)", DOC + "summary",
              [Column("paradigm", header="Paradigm"), Column("model", header="Model"), Column("n_runs", "int"),
               Column("format_acc", "rate2", "Format Acc"), Column("pk_recall", "rate2", "PK Recall")], rows,
              group_by="paradigm", note="Mean over each system's replicates. Bold: the best value of each column.")
    _mark_best(t, cols)
    _mark_simulated(t, systems)
    return [t, _replicates("table04_format_pk_replicates", "Table 4", "T4 format and PK recall", "summary", systems,
                           cols)]


def table6(systems: Sequence[System], hop_rows: Sequence[dict[str, Any]]) -> list[Table]:
    by_run: dict[str, dict[int, float]] = {}
    for r in hop_rows:
        by_run.setdefault(r["run_id"], {})[int(r["hops"])] = float(r["f_em"])
    hops = sorted({int(r["hops"]) for r in hop_rows})
    rows, reps = [], []
    for s in systems:
        row = _base(s)
        for h in hops:
            vals = [by_run.get(r["run_id"], {}).get(h) for r in s.runs]
            row[f"hop{h}"] = mean(vals) if all(v is not None for v in vals) else None
        rows.append(row)
        for r in s.runs:
            reps.append({"paradigm": s.paradigm, "model": s.model, "replicate": r["replicate"], "run_id": r["run_id"],
                         **{f"hop{h}": by_run.get(r["run_id"], {}).get(h) for h in hops}})
    cols = [Column(f"hop{h}", "rate2", f"{h}-hop") for h in hops]
    t = Table("table06_hops", "Table 6", "T1 F_em by hop length (%)", DOC + "hop-accuracy",
              [Column("paradigm", header="Paradigm"), Column("model", header="Model"), Column("n_runs", "int"), *cols],
              rows, group_by="paradigm", note=T6_NOTE)
    _mark_simulated(t, systems)
    rt = Table("table06_hops_replicates", "Table 6", "T1 F_em by hop length (one row per replicate)", DOC + "hop-accuracy",
               [Column("paradigm"), Column("model"), Column("replicate", "int"), Column("run_id"),
                *[Column(c.key, "num3") for c in cols]], reps, latex=False)
    return [t, rt]


def table7(systems: Sequence[System], variance_rows: Sequence[dict[str, Any]]) -> Table:
    metrics = (("t1", "T1"), ("t2", "T2"), ("t3", "T3"), ("t4_item", "T4 Item"), ("t4_row", "T4 Row"),
               ("overall", "Overall"))  # the headers of Table 3
    by_sys = {(r["model"], r["paradigm"], r["metric"]): r for r in variance_rows}
    rows = []
    for s in systems:
        if len(s.runs) < 2:
            continue
        rows.append({"model": s.label, "paradigm": s.paradigm, "n_runs": len(s.runs),
                     **{m: by_sys[(s.model, s.paradigm, m)]["variance"] for m, _ in metrics}})
    footer = [{"model": "Mean", "paradigm": None, "n_runs": None,
               **{m: mean(float(r[m]) for r in rows) for m, _ in metrics}}] if rows else []
    cols = [Column("model", header="Model"), Column("paradigm"), Column("n_runs", "int"),
            *[Column(m, "num2", h) for m, h in metrics]]
    title, note = ("Run-to-run variance (percentage points squared)",
                   "Population variance (ddof = 0) of each system's percentage scores over its replicates; "
                   "systems with one replicate are left out; Mean is the mean over the systems shown.")
    # the CSV's last row is the Mean; the page and the LaTeX print it under a rule, never sorted with the systems
    view = Table("table07_variance", "Table 7", title, DOC + "rerun-variance", cols, rows, note=note, footer=footer,
                 row_noun="system")
    t = Table("table07_variance", "Table 7", title, DOC + "rerun-variance", cols, rows + footer, note=note,
              view=view)
    _mark_simulated(t, systems)
    return t


def figure3(systems: Sequence[System], effort: Sequence[dict[str, Any]]) -> list[Table]:
    """Figure 3's data (mean search calls per system and type) and the Spearman correlation per type."""
    runs = {r["run_id"]: s for s in systems for r in s.runs}
    per_sys: dict[tuple[str, str], list[float]] = {}
    for r in effort:
        s = runs.get(r["run_id"])
        if s is not None:
            per_sys.setdefault((s.label, r["type"]), []).append(float(r["mean_search_calls"]))
    data = [{"model": s.label, "paradigm": s.paradigm, "type": t, "mean_search_calls": mean(per_sys[(s.label, t)])}
            for s in systems for t in TYPES if (s.label, t) in per_sys]
    fig = Table("figure03_search_effort", "Figure 3", "Average search calls per task and type", DOC + "search-effort",
                [Column("model"), Column("paradigm"), Column("type"), Column("mean_search_calls", "num2")], data,
                latex=False)
    corr_rows = []
    for t in (*TYPES, "all"):
        pts = _system_means(runs, [r for r in effort if t == "all" or r["type"] == t])
        c = stats.spearman_ci([x for x, _ in pts], [y for _, y in pts])
        corr_rows.append({"type": t if t != "all" else "T1-T4 pooled", "n_points": c.n, "rho": c.r, "lo": c.lo,
                          "hi": c.hi, "p": c.p})
    corr = Table("figure03_spearman", "Figure 3", "Search effort against score (Spearman, across systems)",
                 DOC + "search-effort",
                 [Column("type", header="Type"), Column("n_points", "int", "Systems"), Column("rho", "num3", "ρ"),
                  Column("lo", "num3", "95% lo"), Column("hi", "num3", "95% hi"), Column("p", "p", "p")], corr_rows,
                 note="One point per system: its mean search calls on the type against its score on the type (T1/T2 "
                      "F_em, T3 F_cite, T4 item recall), each the mean over the system's replicates (replicates are "
                      "not independent points; pooled: the mean over the types too). With at most "
                      f"{rank_tests.EXACT_MAX_N} systems p is the exact permutation p (all n! pairings) and no "
                      "interval is shown; above, scipy's p and a Fisher-z interval. ρ is empty with fewer than four "
                      "systems or a constant side.")
    return [fig, corr]


def _system_means(runs: dict[str, System], effort: Sequence[dict[str, Any]]) -> list[tuple[float, float]]:
    """(mean search calls, mean score) per system over its replicates' rows, in the order systems appear."""
    per: dict[str, list[tuple[float, float]]] = {}
    for r in effort:
        s = runs.get(r["run_id"])
        if s is not None:
            per.setdefault(s.label, []).append((float(r["mean_search_calls"]), float(r["score"])))
    return [(mean(x for x, _ in v), mean(y for _, y in v)) for v in per.values()]


def _correct_sets(outcomes: Sequence[dict[str, Any]]) -> dict[str, dict[str, bool]]:
    """Per run, its T1/T2 tasks with a response: correct or not (a task without one is not in its set)."""
    out: dict[str, dict[str, bool]] = {}
    for o in outcomes:
        if o["type"] in ("T1", "T2") and o.get("has_response", True):
            out.setdefault(o["run_id"], {})[o["task_id"]] = o["verdict"] == "correct"
    return out


def _t12_tasks(outcomes: Sequence[dict[str, Any]]) -> list[str]:
    return sorted({o["task_id"] for o in outcomes if o["type"] in ("T1", "T2")})


def _errors(outcomes: Sequence[dict[str, Any]], run_id: str) -> set[str]:
    return {o["task_id"] for o in outcomes if o["run_id"] == run_id and o.get("status") == "error"}


def answered(systems: Sequence[System], outcomes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per system: the tasks each replicate has a response to, of the release's tasks (its coverage)."""
    by_run: dict[str, int] = {}
    for o in outcomes:
        by_run[o["run_id"]] = by_run.get(o["run_id"], 0) + (1 if o.get("has_response", True) else 0)
    out = []
    for s in systems:
        n_tasks = int(s.runs[0]["n_tasks"])
        counts = [by_run.get(r["run_id"], 0) for r in s.runs]
        out.append({"system": s.label, "counts": counts, "n_tasks": n_tasks, "partial": min(counts) < n_tasks,
                    "coverage": [Coverage(n=c, n_scope=n_tasks, n_missing=n_tasks - c, noun="tasks") for c in counts]})
    return out


def default_pairs(systems: Sequence[System]) -> list[tuple[System, System]]:
    """Neighbours by mean overall score across the whole panel (at most 12 pairs)."""
    ranked = sorted(systems, key=lambda s: (-_mean_of(s, "overall"), s.label))
    return list(zip(ranked, ranked[1:]))[:12]


def paired_tests(pairs: Sequence[tuple[System, System]], outcomes: Sequence[dict[str, Any]],
                 clustering: clusters.Clustering) -> list[Table]:
    """Exact McNemar on the T1/T2 tasks both systems' first replicates have a response to, correct vs not,
    and on the same tasks the mean of A − B with its interval and sign-flip test clustered by `clustering`
    (reports/core/clusters.py, as the shared pages cluster); and the tasks each test leaves out, with why
    (missing on A, on B, on both; an error)."""
    sets = _correct_sets(outcomes)
    scope = _t12_tasks(outcomes)
    rows, left_out = [], []
    for a, b in pairs:
        sa, sb = sets.get(a.first_run, {}), sets.get(b.first_run, {})
        shared = sorted(set(sa) & set(sb))
        test = stats.paired_test([sa[t] for t in shared], [sb[t] for t in shared])
        excl = exclusions(sa, sb, scope, _errors(outcomes, a.first_run), _errors(outcomes, b.first_run))
        cp = clusters.paired({t: float(sa[t]) for t in shared}, {t: float(sb[t]) for t in shared}, clustering)
        rows.append({"system_a": a.label, "system_b": b.label, "run_a": a.first_run, "run_b": b.first_run,
                     "n_tasks": test.n, "n_left_out": len(excl), "a_only": test.a_only, "b_only": test.b_only,
                     "acc_a": (sum(sa[t] for t in shared) / test.n) if test.n else None,
                     "acc_b": (sum(sb[t] for t in shared) / test.n) if test.n else None, "p": test.p,
                     "n_clusters": cp.n_clusters, "diff": cp.diff.mean, "diff_lo": cp.diff.lo, "diff_hi": cp.diff.hi,
                     "p_clusters": cp.sign_flip.p if test.n else None})
        by_reason: dict[str, list[str]] = {}
        for e in excl:
            by_reason.setdefault(e.reason, []).append(e.sample_id)
        left_out += [{"system_a": a.label, "system_b": b.label, "reason": reason, "n_tasks": len(ids),
                      "tasks": ", ".join(ids)} for reason, ids in sorted(by_reason.items())]
    for row, adj, adj_c in zip(rows, multiplicity.adjust([r["p"] for r in rows], "holm"),
                               multiplicity.adjust([r["p_clusters"] for r in rows], "holm")):
        row["p_holm"], row["p_clusters_holm"] = adj, adj_c
    unit = "task" if clustering.by_item else clustering.field
    t = Table("paired_tests", "Beyond the paper", "Paired exact tests on the shared T1/T2 tasks", DOC + "paired-tests",
              [Column("system_a", header="System A"), Column("system_b", header="System B"), Column("run_a"),
               Column("run_b"), Column("n_tasks", "int", "Tasks"), Column("n_left_out", "int", "Left out"),
               Column("acc_a", "rate", "Acc A"),
               Column("acc_b", "rate", "Acc B"), Column("a_only", "int", "A only"),
               Column("b_only", "int", "B only"), Column("p", "p", "p (exact McNemar)"),
               Column("p_holm", "p", "p (Holm)"), Column("n_clusters", "int", "Clusters"),
               Column("diff", "rate", "Δ A − B"), Column("diff_lo", "rate", "Δ lo", tip="lower bound of the 95% interval of Δ"),
               Column("diff_hi", "rate", "Δ hi", tip="upper bound of the 95% interval of Δ"), Column("p_clusters", "p", "p (sign-flip)", tip="the sign-flip test of the per-cluster sums"),
               Column("p_clusters_holm", "p", "p (sign-flip, Holm)")], rows,
              note="Each system's first replicate, on the T1/T2 tasks both have a response to (Tasks: the n of "
                   "each test); a task counts as solved when the judge's verdict is correct. Acc A, Acc B: % of "
                   "the shared tasks solved. Left out: T1/T2 tasks without a response on one side or both (listed "
                   "below with the reason). p (exact McNemar): over the tasks, each its own unit. "
                   f"{_cluster_words(clustering)}: Δ is the mean of A − B over the shared tasks with its "
                   f"cluster-robust 95% t interval (Δ lo, Δ hi) over the Clusters column's G {unit} clusters (G − 1 degrees of "
                   "freedom; none with fewer than two), and p (sign-flip) the sign-flip test of the "
                   "per-cluster sums of A − B (whole clusters flipped: exact up to 16 clusters, else 20,000 seeded "
                   "random sign vectors). " + multiplicity.caption("holm", len(rows), where="in each p column"))
    x = Table("paired_tests_left_out", "Beyond the paper", "Tasks the paired tests leave out", DOC + "paired-tests",
              [Column("system_a", header="System A"), Column("system_b", header="System B"),
               Column("reason", header="Why"), Column("n_tasks", "int", "Tasks"),
               Column("tasks", header="Task ids")], left_out,
              note="Per pair and reason, the T1/T2 tasks left out of its test: missing on A (A's responses file "
                   "has no response to it), missing on B, or missing on both." if left_out else
                   "Every pair has a response to every T1/T2 task on both sides: no task is left out.")
    return [t, x]


def _cluster_words(clustering: clusters.Clustering) -> str:
    if clustering.by_item:
        return "Clustered by task (--cluster item: each task its own cluster)"
    how = "--cluster" if clustering.declared else "the benchmark's default; --cluster FIELD for another"
    return f"Clustered by {clustering.field} ({how})"


def failure_taxonomy(systems: Sequence[System], outcomes: Sequence[dict[str, Any]]) -> Table:
    """The paper's failure modes the data show: premature abandonment and structural non-compliance, over
    the tasks each run has a response to (a task missing from its responses file is no behaviour of it)."""
    by_run: dict[str, list[dict[str, Any]]] = {}
    for o in outcomes:
        if o.get("has_response", True):
            by_run.setdefault(o["run_id"], []).append(o)
    rows = []
    for s in systems:
        abandon, not_att, t4, t4_bad, answered_ = [], [], [], [], []
        for r in s.runs:
            os_ = by_run.get(r["run_id"], [])
            answered_.append(len(os_))
            na = [o for o in os_ if o["status"] == "not_attempted" or o["verdict"] == "not_attempted"]
            not_att.append(len(na))
            abandon.append(sum(1 for o in na if o["n_search_calls"] <= ABANDON_MAX_SEARCHES))
            t4.append(sum(1 for o in os_ if o["type"] == "T4"))
            t4_bad.append(sum(1 for o in os_ if o["type"] == "T4" and not o["t4_format_ok"]))
        n_tasks = s.runs[0]["n_tasks"]
        rows.append({**_base(s), "answered": mean(answered_), "n_tasks": n_tasks,
                     "not_attempted": mean(not_att), "premature_abandonment": mean(abandon),
                     "abandonment_rate": mean(abandon) / mean(answered_) if mean(answered_) else None,
                     "t4_tasks": mean(t4), "format_failures": mean(t4_bad),
                     "format_failure_rate": mean(t4_bad) / mean(t4) if mean(t4) else None})
    t = Table("failure_taxonomy", "Section 5.2", "Failure taxonomy", DOC + "failure-taxonomy",
              [Column("paradigm", header="Paradigm"), Column("model", header="Model"), Column("n_runs", "int"),
               Column("answered", "num1", "Answered"), Column("n_tasks", "int", "of tasks"),
               Column("not_attempted", "num1", "Not attempted"),
               Column("premature_abandonment", "num1", f"Abandoned (≤{ABANDON_MAX_SEARCHES} searches)"),
               Column("abandonment_rate", "rate", "% of answered"), Column("t4_tasks", "num1"),
               Column("format_failures", "num1", "T4 format failures"),
               Column("format_failure_rate", "rate", "% of T4")], rows, group_by="paradigm",
              note="Tasks per run, mean over replicates, over the tasks each run has a response to (Answered, of the "
                   "release's tasks): a task missing from a responses file is not counted as a failure here "
                   "(Table 3 scores it as not attempted, as the paper does). Premature abandonment: a task not "
                   f"attempted after at most {ABANDON_MAX_SEARCHES} search calls (for foundation models, which do "
                   "not search, every not-attempted task). Structural non-compliance: T4 answers without exactly "
                   "the task's columns.")
    _mark_simulated(t, systems)
    return t


def judge_audit(systems: Sequence[System], counts: dict[str, AuditCounts]) -> Table:
    """Per system (summed over its replicates): normalized-match's T1/T2 verdicts that rest on answers its
    rules treat leniently (audit.py)."""
    rows = []
    for s in systems:
        cs = [counts.get(r["run_id"], AuditCounts()) for r in s.runs]
        rows.append({**_base(s), **{k: sum(getattr(c, k) for c in cs)
                                     for k in ("correct", "several_candidates", "not_attempted", "hedged")}})
    t = Table("judge_audit", "Beyond the paper", "Verdicts of normalized-match that rest on lenient rules",
              DOC + "judge-audit",
              [Column("paradigm", header="Paradigm"), Column("model", header="Model"), Column("n_runs", "int", "Runs"),
               Column("correct", "int", "Correct"),
               Column("several_candidates", "int", "with several candidates"),
               Column("not_attempted", "int", "Not attempted (judged)"),
               Column("hedged", "int", "hedged, then answered")], rows, group_by="paradigm",
              note="T1/T2 verdicts of normalized-match, summed over each system's replicates; the verdicts keep "
                   "the documented rules. With several candidates: correct, and the answer gives the ground truth "
                   "exactly beside another candidate (split at commas, semicolons, bars, line breaks and \"or\"). "
                   "Not attempted (judged): the judge's not_attempted on a response whose status was not "
                   "not_attempted (an abstention phrase or an empty answer); hedged, then answered: two or more "
                   "words follow its last abstention phrase (\"I don't know, but it is probably ...\").")
    _mark_simulated(t, systems)
    return t


def judge_agreement(agreement: Sequence[dict[str, Any]], disagreements: Sequence[dict[str, Any]]) -> list[Table]:
    t = Table("judge_agreement", "Beyond the paper", "Agreement between judges (Cohen's kappa)", DOC + "judge-agreement",
              [Column("judge_a", header="Judge A"), Column("judge_b", header="Judge B"), Column("unit", header="Unit"),
               Column("n_units", "int", "Units"), Column("n_agree", "int", "Agree"),
               Column("p_observed", "rate", "Observed %"), Column("p_expected", "rate", "Chance %"),
               Column("kappa", "num3", "κ")], list(agreement))
    d = Table("judge_disagreements", "Beyond the paper", "Units the judges disagree on", DOC + "judge-agreement",
              [Column("run_id", header="Run"), Column("task_id", header="Task"), Column("unit", header="Unit"),
               Column("slot", header="Slot"), Column("ref_index", "int", "Ref"), Column("row_key", header="Row"),
               Column("column_name", header="Column"), Column("judge_a", header="Judge A"),
               Column("verdict_a", header="Verdict A"), Column("judge_b", header="Judge B"),
               Column("verdict_b", header="Verdict B")], list(disagreements),
              note="Listed on the page when they are at most 400; the CSV always has all of them.")
    return [t, d]


def _mark_best(t: Table, cols: Sequence[str]) -> None:
    for c in cols:
        vals = [r[c] for r in t.rows if r[c] is not None]
        if not vals:
            continue
        best = max(vals)
        for i, r in enumerate(t.rows):
            if r[c] == best:
                t.mark(i, c, "best")


def _mark_simulated(t: Table, systems: Sequence[System]) -> None:
    """The model cell of each simulated system's row carries the SIMULATED mark (and so does its view's)."""
    sim = {s.label for s in systems if s.simulated}
    for table in {id(x): x for x in (t, t.shown)}.values():
        for i, r in enumerate(table.rows):
            if r.get("model") in sim:
                table.mark(i, "model", "sim")


def pair_names(systems: Sequence[System]) -> dict[str, System]:
    return {s.label: s for s in systems}


__all__ = ["answered", "table3", "table4", "table6", "table7", "figure3", "paired_tests", "failure_taxonomy", "judge_audit",
           "judge_agreement",
           "default_pairs", "pair_names"]
