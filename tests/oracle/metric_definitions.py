"""The metric definitions of docs/metrics.md as plain Python: the test oracle for the contract marts (docs/metrics.md#marts).

Written from the definitions' text only, before reading models_sql/, so that it is an independent
cross-check. Where a definition is silent and a first comparison showed that the dbt models document a
different but defensible reading, the oracle follows the documented choice (R2, R4, R6, R9 say so).
The raw tables are read into lists of dicts with duckdb (``load_raw``); every metric below is
ordinary Python over those lists. Each ``<mart>(...)`` function returns the rows docs/metrics.md#marts expects, as
dicts keyed by the mart's column names.

Readings of the definitions where their text leaves room (each also noted at the place it is used):

R1  Trajectory = the row of raw.trajectories with is_final = true for (run_id, sample_id); its calls
    and turns are the rows of the same attempt. Partial runs (raw.runs._partial) are included like
    any other run.
R2  Gold papers = raw.item_papers rows with role 'gold'; g's arXiv id is the arxiv_id of g's graph
    node (raw.graph_nodes, sample_id + paper_id: the paper the tools serve), falling back to
    item_papers.arxiv_id when the node has none (the dbt model int_gold_papers documents the same
    order; first written the other way round, it never made a difference on generated data).
    Calls are attributed to a paper by comparing tool_calls.paper_id with the gold paper ids.
R3  norm(x): the four steps in the order docs/metrics.md#label-resolution lists them (lower-case, drop a leading section
    number, collapse white space, trim). "White space" is Python's ``\\s`` (the str.isspace() set,
    NBSP included, as in the dbt macros). A label whose norm is the empty string (or NULL) resolves
    to nothing (it would otherwise "contain" every section). A NULL header never matches; a NULL
    text is never searched.
R4  An item without gold papers has paper_recall = section_recall = false (the dbt models'
    documented choice; "every gold paper" would be vacuously true; does not occur in valid releases).
R5  n_tool_turns / calls_per_turn denominator: raw.turns rows of the final attempt with
    role = 'assistant' and turns.n_tool_calls > 0 (the turns table's own count, as docs/metrics.md#per-run-metrics
    words it: "turns with role assistant that carry at least one call"). The test suite checks
    separately that turns.n_tool_calls equals the number of tool_calls rows of that turn.
R6  A read_section call with NULL paper_id (e.g. invalid_args) is "on a paper other than g" for the
    MT-fail test of docs/metrics.md#stopping-behaviour (-> `explored`) and "on a non-gold paper" for
    docs/metrics.md#wrong-read-actions (-> `stay`): NULL is not g and not gold. (First written as "not
    on any paper" for the stopping test; changed to the dbt model's documented reading,
    int_stopping_categories, which is equally defensible and consistent with the wrong-read actions.)
R7  Per-run means (docs/metrics.md#per-run-metrics, docs/metrics.md#reruns) are over the run's
    trajectories (the items the run covered).
    A mean over an empty set is NULL (None).
R8  Count marts list only categories that occur (n > 0); the comparison in the tests also accepts
    extra mart rows with n = 0 (zero-filled categories).
R9  docs/metrics.md#reruns: a group is (model, condition) with at least two distinct replicates; a metric that is
    NULL for some run (conversion with no recalled item) is aggregated over the runs where it is
    defined, while n_runs counts every run of the group (the dbt model's documented choice; it adds
    n_values); a metric NULL in every run gives NULL mean/std/range.
R10 condition_deltas: per model, accuracy per condition = mean over that condition's runs of the
    run accuracy; one row per pair (condition_from, condition_to) with both conditions present for
    the model, the pairs being (closed_book, no_search), (no_search, full), (closed_book, full);
    delta_pp = 100 * (accuracy_to - accuracy_from). Column names follow the dbt mart (the definitions
    name no columns); the mart's extra columns (condition_pair, pair_order, n_runs_*, n_items_*)
    are not contract columns (docs/metrics.md#marts) and are not compared.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

NAV_TOOLS: frozenset[str] = frozenset({"get_paper_info", "get_references", "list_sections", "search_papers"})
NOT_ATTEMPTED: frozenset[str] = frozenset({"rejected_budget", "rejected_disabled", "not_executed"})
WILSON_Z = 1.959964
CONDITION_PAIRS: tuple[tuple[str, str], ...] = (
    ("closed_book", "no_search"),
    ("no_search", "full"),
    ("closed_book", "full"),
)

Row = dict[str, Any]

_WS = re.compile(r"\s+")
_LEADING_NUMBER = re.compile(r"^[0-9]+(\.[0-9]+)*\.?\s+")


# ----------------------------------------------------------------------------------------------
# raw tables


@dataclass
class Raw:
    items: list[Row]
    item_papers: list[Row]
    graph_nodes: list[Row]
    sections: list[Row]
    recall_labels: list[Row]
    runs: list[Row]
    trajectories: list[Row]
    turns: list[Row]
    tool_calls: list[Row]


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[Row]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def load_raw(con: duckdb.DuckDBPyConnection, schema: str = "raw") -> Raw:
    """Read the raw tables the metrics need (plain SELECTs; no metric logic in SQL)."""
    return Raw(
        items=_rows(con, f"select * from {schema}.items"),
        item_papers=_rows(con, f"select * from {schema}.item_papers"),
        graph_nodes=_rows(con, f"select sample_id, paper_id, arxiv_id from {schema}.graph_nodes"),
        sections=_rows(con, f"select arxiv_id, section_index, header, text from {schema}.sections"),
        recall_labels=_rows(con, f"select * from {schema}.recall_labels"),
        runs=_rows(con, f"select * from {schema}.runs"),
        trajectories=_rows(con, f"select * from {schema}.trajectories"),
        turns=_rows(con, f"select * from {schema}.turns"),
        tool_calls=_rows(con, f"select * from {schema}.tool_calls"),
    )


# ----------------------------------------------------------------------------------------------
# label resolution (docs/metrics.md#label-resolution)


def norm(x: str | None) -> str | None:
    """norm() of docs/metrics.md#label-resolution, steps in the listed order (R3)."""
    if x is None:
        return None
    s = x.lower()
    s = _LEADING_NUMBER.sub("", s, count=1)
    s = _WS.sub(" ", s)
    return s.strip()


def _collapsed_text(text: str | None) -> str | None:
    if text is None:
        return None
    return _WS.sub(" ", text.lower())


@dataclass(frozen=True)
class Section:
    index: int
    norm_header: str | None
    text: str | None  # lower-cased, white-space collapsed


def resolve_label(label: str | None, sections: Sequence[Section]) -> tuple[frozenset[int], str]:
    """Sections of one gold paper a label resolves to, and how ('header', 'containment' or 'none')."""
    nl = norm(label)
    if not nl:
        return frozenset(), "none"  # R3
    by_header = frozenset(s.index for s in sections if s.norm_header is not None and s.norm_header == nl)
    if by_header:
        return by_header, "header"
    contained = frozenset(s.index for s in sections if s.text is not None and nl in s.text)
    return contained, ("containment" if contained else "none")


# ----------------------------------------------------------------------------------------------
# per-trajectory facts (docs/metrics.md#definitions, delivered read to reference variants)


@dataclass
class Trajectory:
    run_id: str
    sample_id: str
    row: Row
    item: Row
    calls: list[Row]
    turns: list[Row]
    gold: list[str]  # gold paper ids, by rank
    question_type: str = ""
    cell: str = ""
    paper_recall: bool = False
    section_recall: bool = False
    evidence_contact: str | None = None
    any_gold_read: bool = False
    n_tool_turns: int = 0

    @property
    def is_correct(self) -> bool:
        return bool(self.row["is_correct"])


def is_delivered(call: Row) -> bool:
    """docs/metrics.md#delivered-read."""
    return call["tool"] == "read_section" and call["status"] == "ok"


def _qtype(raw_type: str) -> str:
    t = raw_type.strip().lower()
    if t in ("single-target", "st"):
        return "ST"
    if t in ("multi-target", "mt"):
        return "MT"
    raise ValueError(f"unknown question_type {raw_type!r}")


@dataclass
class ItemGold:
    papers: list[str]
    # paper id -> (all sections matched by direct labels, sections matched by direct labels by header)
    direct_sets: dict[str, tuple[frozenset[int], frozenset[int]]]


def item_gold(raw: Raw) -> dict[str, ItemGold]:
    node_arxiv = {(n["sample_id"], n["paper_id"]): n["arxiv_id"] for n in raw.graph_nodes}
    sections_by_arxiv: dict[str, list[Section]] = defaultdict(list)
    for s in raw.sections:
        sections_by_arxiv[s["arxiv_id"]].append(
            Section(int(s["section_index"]), norm(s["header"]), _collapsed_text(s["text"]))
        )
    labels_by_sample: dict[str, list[Row]] = defaultdict(list)
    for lab in raw.recall_labels:
        labels_by_sample[lab["sample_id"]].append(lab)

    gold_rows: dict[str, list[Row]] = defaultdict(list)
    for ip in raw.item_papers:
        if ip["role"] == "gold":
            gold_rows[ip["sample_id"]].append(ip)

    out: dict[str, ItemGold] = {}
    for item in raw.items:
        sid = item["sample_id"]
        rows = sorted(gold_rows.get(sid, []), key=lambda r: r["rank"])
        papers = [r["paper_id"] for r in rows]
        direct_sets: dict[str, tuple[frozenset[int], frozenset[int]]] = {}
        for r in rows:
            g_arxiv = node_arxiv.get((sid, r["paper_id"])) or r["arxiv_id"]  # R2
            secs = sections_by_arxiv.get(g_arxiv, []) if g_arxiv else []
            all_set: set[int] = set()
            header_set: set[int] = set()
            for lab in labels_by_sample.get(sid, []):
                if lab["relevance"] != "direct":
                    continue
                if not lab["arxiv_id"] or not g_arxiv or lab["arxiv_id"] != g_arxiv:
                    continue
                matched, how = resolve_label(lab["label_section"], secs)
                all_set |= matched
                if how == "header":
                    header_set |= matched
            direct_sets[r["paper_id"]] = (frozenset(all_set), frozenset(header_set))
        out[sid] = ItemGold(papers, direct_sets)
    return out


def trajectories(raw: Raw) -> list[Trajectory]:
    """Final attempts with every per-trajectory metric filled in (docs/metrics.md#delivered-read through
    docs/metrics.md#reference-variants)."""
    items = {it["sample_id"]: it for it in raw.items}
    gold = item_gold(raw)
    calls_by: dict[tuple[str, str, int], list[Row]] = defaultdict(list)
    for c in raw.tool_calls:
        calls_by[(c["run_id"], c["sample_id"], c["attempt"])].append(c)
    turns_by: dict[tuple[str, str, int], list[Row]] = defaultdict(list)
    for t in raw.turns:
        turns_by[(t["run_id"], t["sample_id"], t["attempt"])].append(t)

    out: list[Trajectory] = []
    for tr in raw.trajectories:
        if not tr["is_final"]:
            continue
        key = (tr["run_id"], tr["sample_id"], tr["attempt"])
        item = items[tr["sample_id"]]
        ig = gold[tr["sample_id"]]
        t = Trajectory(
            run_id=tr["run_id"], sample_id=tr["sample_id"], row=tr, item=item,
            calls=sorted(calls_by.get(key, []), key=lambda c: c["seq"]),
            turns=sorted(turns_by.get(key, []), key=lambda x: x["turn"]),
            gold=ig.papers,
        )
        t.question_type = _qtype(item["question_type"])
        t.cell = f"{t.question_type.lower()}_d{int(item['depth'])}"
        gold_set = set(ig.papers)
        delivered = [c for c in t.calls if is_delivered(c)]
        read_papers = {c["paper_id"] for c in delivered}
        # docs/metrics.md#paper-recall (R4)
        t.paper_recall = bool(ig.papers) and all(g in read_papers for g in ig.papers)
        # docs/metrics.md#section-recall
        def hit(g: str, allowed: frozenset[int]) -> bool:
            return any(c["paper_id"] == g and c["resolved_section_index"] is not None
                       and int(c["resolved_section_index"]) in allowed for c in delivered)
        t.section_recall = bool(ig.papers) and all(hit(g, ig.direct_sets[g][0]) for g in ig.papers)
        # docs/metrics.md#evidence-contact
        if not t.paper_recall:
            t.evidence_contact = None
        elif t.section_recall and all(hit(g, ig.direct_sets[g][1]) for g in ig.papers):
            t.evidence_contact = "header"
        elif t.section_recall:
            t.evidence_contact = "parent"
        else:
            t.evidence_contact = "none"
        # any_gold_read: docs/metrics.md#reference-variants
        t.any_gold_read = any(
            c["tool"] == "read_section" and c["paper_id"] in gold_set and c["status"] not in NOT_ATTEMPTED
            for c in t.calls
        )
        # R5
        t.n_tool_turns = sum(1 for x in t.turns if x["role"] == "assistant" and x["n_tool_calls"] > 0)
        out.append(t)
    return out


# ----------------------------------------------------------------------------------------------
# helpers


def _mean(xs: Iterable[float]) -> float | None:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else None


def _by_run(trajs: Iterable[Trajectory]) -> dict[str, list[Trajectory]]:
    out: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajs:
        out[t.run_id].append(t)
    return out


def wilson(correct: int, n: int, z: float = WILSON_Z) -> tuple[float, float]:
    """Wilson score interval for correct/n."""
    p = correct / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return centre - half, centre + half


# ----------------------------------------------------------------------------------------------
# marts


def fct_trajectory(trajs: Sequence[Trajectory]) -> list[Row]:
    return [
        {
            "run_id": t.run_id, "sample_id": t.sample_id,
            "question_type": t.question_type, "depth": int(t.item["depth"]), "cell": t.cell,
            "reasoning_type": t.item["reasoning_type"], "is_correct": t.is_correct,
            "terminated_by": t.row["terminated_by"], "paper_recall": t.paper_recall,
            "section_recall": t.section_recall, "evidence_contact": t.evidence_contact,
            "any_gold_read": t.any_gold_read, "total_tokens": t.row["total_tokens"],
            "total_turns": t.row["total_turns"], "budget_used": t.row["budget_used"],
            "n_tool_calls": len(t.calls), "n_tool_turns": t.n_tool_turns,
        }
        for t in trajs
    ]


def _conversion(ts: Sequence[Trajectory]) -> float | None:
    return _mean(float(t.is_correct) for t in ts if t.paper_recall)


def model_summary(raw: Raw, trajs: Sequence[Trajectory]) -> list[Row]:
    """docs/metrics.md#per-run-metrics, one row per run that has trajectories."""
    runs = {r["run_id"]: r for r in raw.runs}
    out = []
    for run_id, ts in _by_run(trajs).items():
        st = [t for t in ts if t.question_type == "ST"]
        mt = [t for t in ts if t.question_type == "MT"]
        n = len(ts)
        n_calls = sum(len(t.calls) for t in ts)
        n_turns = sum(t.n_tool_turns for t in ts)

        def rate(value: str) -> float:
            return sum(1 for t in ts if t.row["terminated_by"] == value) / n

        run = runs[run_id]
        out.append({
            "run_id": run_id, "model": run["model"], "condition": run["condition"],
            "replicate": run["replicate"],
            "accuracy": _mean(float(t.is_correct) for t in ts),
            "recall_st": _mean(float(t.paper_recall) for t in st),
            "recall_mt": _mean(float(t.paper_recall) for t in mt),
            "secrec_st": _mean(float(t.section_recall) for t in st),
            "secrec_mt": _mean(float(t.section_recall) for t in mt),
            "conversion_st": _conversion(st),
            "conversion_mt": _conversion(mt),
            "calls_per_turn": n_calls / n_turns if n_turns else None,
            "avg_tokens_k": _mean(t.row["total_tokens"] for t in ts) / 1000,
            "avg_turns": _mean(t.row["total_turns"] for t in ts),
            "avg_budget": _mean(t.row["budget_used"] for t in ts),
            "max_tokens_rate": rate("token_limit"),
            "max_turns_rate": rate("max_turns"),
            "max_budget_rate": rate("budget"),
            "error_rate": rate("error"),
            "na_rate": sum(1 for t in ts if t.row["predicted_index"] == -1) / n,
            "n_items": n,
        })
    return out


def _after_anchor_category(s: Sequence[Row]) -> str:
    """The categories of the ST and MT-both scopes (docs/metrics.md#stopping-behaviour)."""
    if any(c["tool"] == "read_section" for c in s):
        return "read"
    if s and s[0]["tool"] == "submit_answer":
        return "immediate"
    if any(c["tool"] == "think" for c in s) and not any(c["tool"] in NAV_TOOLS for c in s):
        return "think"
    return "other"


def stopping_category(t: Trajectory) -> tuple[str, str] | None:
    """(scope, category) of docs/metrics.md#stopping-behaviour, or None if the trajectory is in no scope."""
    gold = set(t.gold)
    dg = [(i, c) for i, c in enumerate(t.calls) if is_delivered(c) and c["paper_id"] in gold]
    if t.question_type == "ST":
        if not t.paper_recall:
            return None
        anchor = dg[0][0]
        return "ST", _after_anchor_category(t.calls[anchor + 1:])
    if t.paper_recall:
        covered: set[str] = set()
        anchor = -1
        for i, c in dg:
            covered.add(c["paper_id"])
            if covered >= gold:
                anchor = i
                break
        assert anchor >= 0
        return "MT-both", _after_anchor_category(t.calls[anchor + 1:])
    if not dg:
        return "MT-fail", "zero_gold"
    anchor, first = dg[0]
    g = first["paper_id"]
    s = t.calls[anchor + 1:]
    if any(c["tool"] in NAV_TOOLS
           or (c["tool"] == "read_section" and c["paper_id"] != g)  # R6: NULL paper is not g
           for c in s):
        return "MT-fail", "explored"
    if any(c["tool"] == "read_section" for c in s):
        return "MT-fail", "stayed"
    return "MT-fail", "premature"


def stopping_behavior(trajs: Sequence[Trajectory]) -> list[Row]:
    out = []
    for run_id, ts in _by_run(trajs).items():
        counts: Counter[tuple[str, str]] = Counter()
        for t in ts:
            sc = stopping_category(t)
            if sc is not None:
                counts[sc] += 1
        scope_n: Counter[str] = Counter()
        for (scope, _), n in counts.items():
            scope_n[scope] += n
        for (scope, cat), n in counts.items():
            out.append({"run_id": run_id, "scope": scope, "category": cat, "n": n,
                        "n_scope": scope_n[scope], "share": n / scope_n[scope]})
    return out


def wrong_read_action(nxt: Row, gold: set[str]) -> str:
    tool = nxt["tool"]
    if tool == "read_section":
        return "recover" if nxt["paper_id"] in gold else "stay"  # R6
    if tool == "think":
        return "think"
    if tool == "submit_answer":
        return "submit"
    if tool in NAV_TOOLS:
        return "renav"
    return "other"


def wrong_read_actions(trajs: Sequence[Trajectory]) -> list[Row]:
    """docs/metrics.md#wrong-read-actions."""
    out = []
    for run_id, ts in _by_run(trajs).items():
        counts: Counter[str] = Counter()
        for t in ts:
            gold = set(t.gold)
            for i in range(len(t.calls) - 1):
                c = t.calls[i]
                if is_delivered(c) and c["paper_id"] not in gold:
                    counts[wrong_read_action(t.calls[i + 1], gold)] += 1
        total = sum(counts.values())
        for action, n in counts.items():
            out.append({"run_id": run_id, "action": action, "n": n, "n_total": total, "share": n / total})
    return out


def tool_transitions(trajs: Sequence[Trajectory]) -> list[Row]:
    """docs/metrics.md#transitions, P(next | prev) row-normalised per run."""
    out = []
    for run_id, ts in _by_run(trajs).items():
        pairs: Counter[tuple[str, str]] = Counter()
        for t in ts:
            tools = [c["tool"] for c in t.calls]
            pairs.update(zip(tools, tools[1:]))
        prev_tot: Counter[str] = Counter()
        for (a, _), n in pairs.items():
            prev_tot[a] += n
        for (a, b), n in pairs.items():
            out.append({"run_id": run_id, "prev_tool": a, "next_tool": b, "n": n, "p_next": n / prev_tot[a]})
    return out


def tool_trigrams(trajs: Sequence[Trajectory]) -> list[Row]:
    """docs/metrics.md#trigrams: `a>b>c`, share = n / all trigrams of the run."""
    out = []
    for run_id, ts in _by_run(trajs).items():
        tri: Counter[str] = Counter()
        for t in ts:
            tools = [c["tool"] for c in t.calls]
            tri.update(f"{a}>{b}>{c}" for a, b, c in zip(tools, tools[1:], tools[2:]))
        total = sum(tri.values())
        for k, n in tri.items():
            out.append({"run_id": run_id, "trigram": k, "n": n, "share": n / total})
    return out


def _accuracy_by(trajs: Sequence[Trajectory], key: str, attr: Any) -> list[Row]:
    groups: dict[tuple[str, str], list[Trajectory]] = defaultdict(list)
    for t in trajs:
        groups[(t.run_id, attr(t))].append(t)
    out = []
    for (run_id, k), ts in groups.items():
        n = len(ts)
        correct = sum(1 for t in ts if t.is_correct)
        out.append({"run_id": run_id, key: k, "n": n, "correct": correct, "accuracy": correct / n})
    return out


def cell_accuracy(trajs: Sequence[Trajectory]) -> list[Row]:
    """docs/metrics.md#accuracy-slices per cell with the Wilson 95% interval."""
    rows = _accuracy_by(trajs, "cell", lambda t: t.cell)
    for r in rows:
        r["wilson_lo"], r["wilson_hi"] = wilson(r["correct"], r["n"])
    return rows


def reasoning_type_accuracy(trajs: Sequence[Trajectory]) -> list[Row]:
    """docs/metrics.md#accuracy-slices per reasoning type; that definition gives the Wilson interval
    for reasoning types as well as cells, so wilson_lo / wilson_hi are compared too."""
    rows = _accuracy_by(trajs, "reasoning_type", lambda t: t.item["reasoning_type"])
    for r in rows:
        r["wilson_lo"], r["wilson_hi"] = wilson(r["correct"], r["n"])
    return rows


def termination_summary(trajs: Sequence[Trajectory]) -> list[Row]:
    out = []
    for run_id, ts in _by_run(trajs).items():
        counts = Counter(t.row["terminated_by"] for t in ts)
        for k, n in counts.items():
            out.append({"run_id": run_id, "terminated_by": k, "n": n, "share": n / len(ts)})
    return out


def evidence_contact_summary(trajs: Sequence[Trajectory]) -> list[Row]:
    """docs/metrics.md#evidence-contact: over the trajectories with r_i = 1 only."""
    out = []
    for run_id, ts in _by_run(trajs).items():
        rec = [t for t in ts if t.paper_recall]
        groups: dict[str, list[Trajectory]] = defaultdict(list)
        for t in rec:
            assert t.evidence_contact is not None
            groups[t.evidence_contact].append(t)
        for k, g in groups.items():
            out.append({"run_id": run_id, "evidence_contact": k, "n": len(g), "share": len(g) / len(rec),
                        "conversion": sum(1 for t in g if t.is_correct) / len(g)})
    return out


def run_metrics(trajs: Sequence[Trajectory]) -> dict[str, dict[str, float | None]]:
    """The per-run metrics of docs/metrics.md#reruns: accuracy, section_recall, conversion, avg_tokens_k."""
    out = {}
    for run_id, ts in _by_run(trajs).items():
        out[run_id] = {
            "accuracy": _mean(float(t.is_correct) for t in ts),
            "section_recall": _mean(float(t.section_recall) for t in ts),
            "conversion": _conversion(ts),
            "avg_tokens_k": _mean(t.row["total_tokens"] for t in ts) / 1000,  # type: ignore[operator]
        }
    return out


def rerun_variance(raw: Raw, trajs: Sequence[Trajectory]) -> list[Row]:
    """docs/metrics.md#reruns (R9)."""
    metrics = run_metrics(trajs)
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for r in raw.runs:
        if r["run_id"] in metrics:
            groups[(r["model"], r["condition"])].append(r)
    out = []
    for (model, condition), runs in groups.items():
        if len({r["replicate"] for r in runs}) < 2:
            continue
        for metric in ("accuracy", "section_recall", "conversion", "avg_tokens_k"):
            xs = [metrics[r["run_id"]][metric] for r in runs]
            vals = [x for x in xs if x is not None]
            row: Row = {"model": model, "condition": condition, "metric": metric, "n_runs": len(xs),
                        "mean": None, "std": None, "range": None}
            if vals:
                m = sum(vals) / len(vals)
                row.update(mean=m, std=math.sqrt(sum((x - m) ** 2 for x in vals) / len(vals)),
                           range=max(vals) - min(vals))
            out.append(row)
    return out


def condition_accuracy(raw: Raw, trajs: Sequence[Trajectory]) -> dict[tuple[str, str], float]:
    """(model, condition) -> mean over the condition's runs of run accuracy (R10)."""
    metrics = run_metrics(trajs)
    accs: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in raw.runs:
        if r["run_id"] in metrics:
            accs[(r["model"], r["condition"])].append(metrics[r["run_id"]]["accuracy"])  # type: ignore[arg-type]
    return {k: sum(v) / len(v) for k, v in accs.items()}


def condition_deltas(raw: Raw, trajs: Sequence[Trajectory]) -> list[Row]:
    """docs/metrics.md#condition-deltas (R10): one row per model and ordered condition pair present."""
    acc = condition_accuracy(raw, trajs)
    models = sorted({m for m, _ in acc})
    out = []
    for m in models:
        for base, other in CONDITION_PAIRS:
            if (m, base) in acc and (m, other) in acc:
                out.append({"model": m, "condition_from": base, "condition_to": other,
                            "accuracy_from": acc[(m, base)], "accuracy_to": acc[(m, other)],
                            "delta_pp": 100 * (acc[(m, other)] - acc[(m, base)])})
    return out


# ----------------------------------------------------------------------------------------------
# everything at once


#: Mart name -> key columns (docs/metrics.md#marts).
MART_KEYS: dict[str, tuple[str, ...]] = {
    "fct_trajectory": ("run_id", "sample_id"),
    "model_summary": ("run_id",),
    "stopping_behavior": ("run_id", "scope", "category"),
    "wrong_read_actions": ("run_id", "action"),
    "tool_transitions": ("run_id", "prev_tool", "next_tool"),
    "tool_trigrams": ("run_id", "trigram"),
    "cell_accuracy": ("run_id", "cell"),
    "reasoning_type_accuracy": ("run_id", "reasoning_type"),
    "termination_summary": ("run_id", "terminated_by"),
    "evidence_contact_summary": ("run_id", "evidence_contact"),
    "rerun_variance": ("model", "condition", "metric"),
}


def expected_marts(raw: Raw) -> dict[str, list[Row]]:
    """Every contract mart (docs/metrics.md#marts; except condition_deltas, whose shape the test adapts) from the raw tables."""
    ts = trajectories(raw)
    return {
        "fct_trajectory": fct_trajectory(ts),
        "model_summary": model_summary(raw, ts),
        "stopping_behavior": stopping_behavior(ts),
        "wrong_read_actions": wrong_read_actions(ts),
        "tool_transitions": tool_transitions(ts),
        "tool_trigrams": tool_trigrams(ts),
        "cell_accuracy": cell_accuracy(ts),
        "reasoning_type_accuracy": reasoning_type_accuracy(ts),
        "termination_summary": termination_summary(ts),
        "evidence_contact_summary": evidence_contact_summary(ts),
        "rerun_variance": rerun_variance(raw, ts),
    }
