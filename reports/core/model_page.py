"""The `model` page: one model across every benchmark it has runs of, each figure beside the panel's median.

Per benchmark the model's run group (its runs under the benchmark's default condition, every epoch or
replicate pooled per item, as the shared leaderboard forms it) gives: the primary score with its 95%
interval and the items it is over out of the items in the runs' scope (the ``run_coverage`` mart), the
repeats pooled, all tokens and cost per trajectory, how the trajectories ended, and its tool behaviour
(calls per trajectory, the share of calls that did not return ok, its most used tools). The panel is
every model of that benchmark's leaderboard (this one included); its median is the median of their
rows' values.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from agenthop.harness.errors import AgentHopError

from ..render import Charts, Provenance
from ..warehouse import Warehouse
from . import leaderboard, marts, queries
from .runs import shared_runs

COVERAGE = "main.run_coverage"
METRIC_DEFS = "main.metric_defs"
TOP_TOOLS = 3

#: The figures of a benchmark's row that get a panel median: (key, label, format, better)
#: format: 'score' (3 decimals), 'num0', 'usd', 'pct'; better: 'high', 'low' or '' (no direction).
MEASURES: tuple[tuple[str, str, str, str], ...] = (
    ("mean", "primary score", "score", "high"),
    ("tokens_per_item", "all tokens per trajectory", "num0", "low"),
    ("usd_per_item", "cost per trajectory (USD)", "usd", "low"),
    ("answer", "ended with an answer", "pct", "high"),
    ("limit", "ended at a limit", "pct", "low"),
    ("error", "ended in an error", "pct", "low"),
    ("calls_per_item", "tool calls per trajectory", "num2", ""),
    ("failed_share", "tool calls not ok", "pct", "low"),
)


def median(values: Sequence[float | None]) -> float | None:
    """The median of the values present (None when there are none)."""
    present = [float(v) for v in values if v is not None]
    return statistics.median(present) if present else None


def rank(value: float | None, values: Sequence[float | None], better: str) -> int | None:
    """1 + how many panel values are strictly better than `value` (None without a value or a direction)."""
    if value is None or not better:
        return None
    present = [v for v in values if v is not None]
    return 1 + sum(1 for v in present if (v > value if better == "high" else v < value))


def tool_behaviour(usage: Sequence[Mapping[str, Any]], run_ids: Sequence[str], n_trajectories: int) -> dict[str, Any]:
    """Calls per trajectory, the share not ok and the most used tools of `run_ids` (rows of
    ``queries.tool_usage``: run_id, tool, n, n_failed)."""
    wanted = set(run_ids)
    mine = [u for u in usage if u["run_id"] in wanted]
    n_calls = sum(int(u["n"]) for u in mine)
    failed = sum(int(u["n_failed"]) for u in mine)
    per_tool: dict[str, int] = {}
    for u in mine:
        per_tool[str(u["tool"])] = per_tool.get(str(u["tool"]), 0) + int(u["n"])
    top = sorted(per_tool.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_TOOLS]
    return {
        "n_calls": n_calls,
        "calls_per_item": n_calls / n_trajectories if n_trajectories else None,
        "failed_share": failed / n_calls if n_calls else None,
        "top_tools": [{"tool": t, "n": n, "share": n / n_calls} for t, n in top],
    }


def _coverage(wh: Warehouse, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    if not marts.has(wh, COVERAGE) or not run_ids:
        return {}
    return {str(r["run_id"]): r for r in wh.rows(
        f"SELECT * FROM {COVERAGE} WHERE run_id IN ({', '.join('?' * len(run_ids))})", list(run_ids))}


def _primary_metric(wh: Warehouse, benchmark: str) -> str | None:
    if not marts.has(wh, METRIC_DEFS):
        return None
    rows = wh.rows(f"SELECT coalesce(label, metric) AS name FROM {METRIC_DEFS} WHERE benchmark = ? AND is_primary",
                   [benchmark])
    return str(rows[0]["name"]) if rows else None


def panel_rows(wh: Warehouse, board: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of a benchmark's board, each a copy with its tool behaviour; read once per board and kept on
    `wh` for the pages of the other models (the board itself is the leaderboard's shared context)."""
    memo = wh.memo.setdefault("model_panel", {})  # id(board) -> (board, its rows): the board is held, its id kept
    if id(board) not in memo:
        usage = queries.tool_usage(wh, [rid for r in board["rows"] for rid in r["group"].run_ids])
        memo[id(board)] = (board, [{**r, **tool_behaviour(usage, r["group"].run_ids, r["n_trajectories"])}
                                   for r in board["rows"]])
    return memo[id(board)][1]


def benchmark_block(wh: Warehouse, model: str, board: Mapping[str, Any]) -> dict[str, Any] | None:
    """The model's figures on one benchmark's board beside the panel's median (None: not on the board)."""
    if not any(r["model"] == model for r in board["rows"]):
        return None
    rows = panel_rows(wh, board)
    mine = next(r for r in rows if r["model"] == model)
    cov = _coverage(wh, mine["group"].run_ids)
    n_scope = max((int(c["n_scope"]) for c in cov.values()), default=None)
    measures = []
    for key, label, fmt, better in MEASURES:
        panel = [r.get(key) for r in rows]
        if mine.get(key) is None and all(v is None for v in panel):
            continue
        measures.append({"key": key, "label": label, "fmt": fmt, "value": mine.get(key), "median": median(panel),
                         "rank": rank(mine.get(key), panel, better), "n_panel": sum(v is not None for v in panel)})
    return {
        "benchmark": board["benchmark"],
        "condition": board["condition"],
        "metric": _primary_metric(wh, board["benchmark"]) or "primary score",
        "row": mine,
        "n_models": len(rows),
        "n_scope": n_scope,
        "n_error": sum(int(c["n_error"]) for c in cov.values()) if cov else None,
        "repeats": board["repeats"],
        "token_label": board["token_label"],
        "cluster_field": board["clustering"].field if "clustering" in board else None,
        "measures": measures,
        "top_tools": mine["top_tools"],
    }


def build(wh: Warehouse, model: str) -> dict[str, Any]:
    """The model page's context: a block per benchmark the model has runs of (default condition)."""
    marts.require_shared(wh)
    runs = shared_runs(wh)
    benches = sorted({str(r.benchmark) for r in runs if r.model == model})
    if not benches:
        known = sorted({r.model for r in runs})
        raise AgentHopError(f"unknown model {model!r}; known models: {', '.join(known[:40])}"
                            + (f", … ({len(known)} in all)" if len(known) > 40 else ""))
    blocks, left_out = [], []
    for bench in benches:
        block = benchmark_block(wh, model, leaderboard.build(wh, bench, None)["boards"][0])
        if block is None:
            left_out.append(bench)
        else:
            blocks.append(block)
    return {
        "title": f"Model {model}",
        "model": model,
        "blocks": blocks,
        "left_out": left_out,
        "simulated": any(r.simulated for r in runs if r.model == model),
        "runs": [r for r in runs if r.model == model],
    }


def page(wh: Warehouse, site: Any, model: str, links: Mapping[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """The model page's HTML (rendered by `site`, a reports.site.Site) and its context; `links` (a site's)
    maps ``index`` to the index page and ``leaderboard`` / ``reruns`` to {benchmark: href}."""
    context = build(wh, model)
    context["links"] = dict(links or {})
    prov = Provenance.build(wh.path, context["runs"])
    return site.render_page("core_model.html.j2", context, Charts(), prov), context
