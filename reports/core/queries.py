"""The SQL of the report core, over the shared marts and the shared intermediate/staging models only.

Every function takes run ids (and item ids) and returns plain rows; aggregation happens in DuckDB.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..warehouse import Warehouse
from . import marts as m


def _in(n: int) -> str:
    return "(" + ", ".join("?" * n) + ")"


def _ok(col: str) -> str:
    return f"coalesce({col}, false)::integer"


# -- per-run aggregates of many pages in one query --------------------------------------------------------


class RunBatch:
    """The runs of many pages (a site's), whose per-run aggregates (:func:`outcomes`, :func:`score_profile`) are
    read for all of them in one query the first time a page asks for some, then answered from memory.

    A page built for a metric reads the trajectories through a view that joins every run's values of that metric
    (reports/core/metrics.py), so each query on it costs about as much whatever runs it filters on: a site of fifty
    models paid that fifty times over per aggregate. A run's aggregate does not depend on the other runs read with
    it, so the answer is the one the page's own query gives. Kept per relation and metric (the page's
    trajectories); while a metric is shown, only the runs of its benchmark are read; a page asking for a run the
    batch does not hold gets its own query."""

    def __init__(self, runs: Mapping[str, str]) -> None:
        self.runs = dict(runs)  # run_id -> its benchmark
        self._memo: dict[tuple[Any, ...], dict[str, Any]] = {}

    def lookup(self, wh: Warehouse, name: str, run_ids: Sequence[str],
               read: Callable[[Warehouse, Sequence[str]], dict[str, Any]]) -> dict[str, Any] | None:
        """`read`'s answer per run for `run_ids` (runs without a row left out), or None when the batch does not
        hold them all."""
        metric = getattr(wh, "_metric", None)
        scope = (metric.benchmark, metric.name) if metric is not None else None
        held = [r for r, b in self.runs.items() if scope is None or b == scope[0]]
        if not run_ids or not set(run_ids) <= set(held):
            return None
        key = (name, m.trajectories(wh), scope)
        got = self._memo.get(key)
        if got is None:
            got = self._memo[key] = read(wh, held)
        return {r: got[r] for r in dict.fromkeys(run_ids) if r in got}


@contextmanager
def batched(wh: Warehouse, runs: Mapping[str, str]) -> Iterator[RunBatch]:
    """Within the block the per-run aggregates of `runs` (run_id -> benchmark) come from :class:`RunBatch`."""
    previous = getattr(wh, "_run_batch", None)
    batch = wh._run_batch = RunBatch(runs)  # type: ignore[attr-defined]
    try:
        yield batch
    finally:
        wh._run_batch = previous  # type: ignore[attr-defined]


def _batch_lookup(wh: Warehouse, name: str, run_ids: Sequence[str],
                  read: Callable[[Warehouse, Sequence[str]], dict[str, Any]]) -> dict[str, Any]:
    batch: RunBatch | None = getattr(wh, "_run_batch", None)
    got = batch.lookup(wh, name, run_ids, read) if batch is not None else None
    return read(wh, run_ids) if got is None else got


# -- outcomes --------------------------------------------------------------------------------------------


def _score_profiles(wh: Warehouse, run_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    rows = wh.con.execute(
        f"""SELECT run_id, count(score), count(*) FILTER (WHERE score IS NOT NULL AND score NOT IN (0, 1))
            FROM {m.trajectories(wh)} WHERE run_id IN {_in(len(run_ids))} GROUP BY run_id""", list(run_ids)).fetchall()
    return {r: (int(a or 0), int(b or 0)) for r, a, b in rows}


def score_profile(wh: Warehouse, run_ids: Sequence[str]) -> dict[str, int]:
    """How many final trajectories of the runs carry a score, and how many of those are not 0 or 1."""
    per_run = _batch_lookup(wh, "score_profile", run_ids, _score_profiles).values()
    return {"n_scored": sum(a for a, _ in per_run), "n_graded": sum(b for _, b in per_run)}


def _outcomes(wh: Warehouse, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    rows = wh.rows(
        f"""SELECT run_id, count(*) AS n, sum({_ok('is_correct')}) AS correct, count(score) AS n_scored,
                   avg(score) AS mean_score, list(score ORDER BY sample_id) FILTER (WHERE score IS NOT NULL) AS scores,
                   count_if(terminated_by = 'answer') AS n_answer
            FROM {m.trajectories(wh)} WHERE run_id IN {_in(len(run_ids))} GROUP BY run_id""", list(run_ids))
    return {r["run_id"]: r for r in rows}


def outcomes(wh: Warehouse, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per run: n, correct, the scores (for intervals), answered (terminated_by = answer)."""
    return _batch_lookup(wh, "outcomes", run_ids, _outcomes)


def paired_binary(wh: Warehouse, run_a: str, run_b: str) -> dict[str, int]:
    """n shared items and the discordant counts of is_correct (A right only, B right only)."""
    return paired_binary_many(wh, [(run_a, run_b)])[0]


def paired_binary_many(wh: Warehouse, pairs: Sequence[tuple[str, str]]) -> list[dict[str, int]]:
    """Per pair of run ids (A, B), in one query: n shared items and the discordant counts of is_correct
    (A right only, B right only); a missing run shares no item."""
    if not pairs:
        return []
    ids = list(dict.fromkeys(r for pair in pairs for r in pair))
    rows = wh.con.execute(
        f"""WITH t AS (SELECT run_id, sample_id, {_ok('is_correct')} AS c FROM {m.trajectories(wh)}
                       WHERE run_id IN {_in(len(ids))}),
                 p(i, ra, rb) AS (VALUES {', '.join('(?, ?, ?)' for _ in pairs)})
            SELECT p.i, count(*), coalesce(sum(a.c * (1 - b.c)), 0), coalesce(sum((1 - a.c) * b.c), 0)
            FROM p JOIN t a ON a.run_id = p.ra JOIN t b ON b.run_id = p.rb AND b.sample_id = a.sample_id
            GROUP BY p.i""", [*ids, *(x for i, (a, b) in enumerate(pairs) for x in (i, a, b))]).fetchall()
    got = {int(i): (int(n or 0), int(a or 0), int(b or 0)) for i, n, a, b in rows}
    return [dict(zip(("n", "a_only", "b_only"), got.get(i, (0, 0, 0)))) for i in range(len(pairs))]


def paired_scores(wh: Warehouse, run_a: str, run_b: str) -> tuple[int, list[tuple[float, float]]]:
    """Shared items, and the (A, B) scores of those both runs scored, in item order."""
    rows = wh.con.execute(
        f"""SELECT a.score, b.score FROM {m.trajectories(wh)} a JOIN {m.trajectories(wh)} b USING (sample_id)
            WHERE a.run_id = ? AND b.run_id = ? ORDER BY sample_id""", [run_a, run_b]).fetchall()
    return len(rows), [(float(x), float(y)) for x, y in rows if x is not None and y is not None]


def differing_items(wh: Warehouse, run_a: str, run_b: str, graded: bool) -> list[dict[str, Any]]:
    """Shared items on which the two runs differ: correctness (binary) or score (graded), largest first."""
    differs = "a.score IS DISTINCT FROM b.score" if graded else f"{_ok('a.is_correct')} <> {_ok('b.is_correct')}"
    group = (f"LEFT JOIN {m.ITEM_GROUPS} g ON g.benchmark = a.benchmark AND g.sample_id = a.sample_id"
             if m.has(wh, m.ITEM_GROUPS) else "")
    return wh.rows(
        f"""SELECT a.sample_id, {'g.item_group' if group else 'NULL'} AS item_group,
                   {_ok('a.is_correct')} AS a_correct, {_ok('b.is_correct')} AS b_correct,
                   a.score AS a_score, b.score AS b_score,
                   a.terminated_by AS a_terminated_by, b.terminated_by AS b_terminated_by,
                   a.total_tokens AS a_tokens, b.total_tokens AS b_tokens, a.total_turns AS a_turns,
                   b.total_turns AS b_turns
            FROM {m.trajectories(wh)} a JOIN {m.trajectories(wh)} b USING (sample_id) {group}
            WHERE a.run_id = ? AND b.run_id = ? AND {differs}
            ORDER BY {'abs(coalesce(a.score, 0) - coalesce(b.score, 0)) DESC,' if graded else 'a_correct DESC,'}
                     a.sample_id""", [run_a, run_b])


def group_outcomes(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Per run and item group (as the benchmark defines it): n, correct, mean score; none without groups."""
    if not m.has(wh, m.ITEM_GROUPS):
        return []
    return wh.rows(
        f"""SELECT t.run_id, g.item_group, count(*) AS n, sum({_ok('t.is_correct')}) AS correct,
                   avg(t.score) AS mean_score, count(t.score) AS n_scored
            FROM {m.trajectories(wh)} t JOIN {m.ITEM_GROUPS} g ON g.benchmark = t.benchmark AND g.sample_id = t.sample_id
            WHERE t.run_id IN {_in(len(run_ids))} GROUP BY ALL ORDER BY g.item_group, t.run_id""", list(run_ids))


def scorers(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Every scorer's values per run (raw.scores; a dict score one row per key): n, numeric n, mean."""
    return wh.rows(
        f"""SELECT run_id, scorer, score_key, count(*) AS n, count(value_num) AS n_num, avg(value_num) AS mean
            FROM {m.SCORES} WHERE run_id IN {_in(len(run_ids))} GROUP BY ALL ORDER BY scorer, score_key, run_id""",
        list(run_ids))


# -- behaviour -------------------------------------------------------------------------------------------


def terminations(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return wh.rows(
        f"SELECT * FROM {m.TERMINATIONS} WHERE run_id IN {_in(len(run_ids))} ORDER BY termination_order, run_id",
        list(run_ids))


def tool_usage(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Per run and tool: calls, their share of the run's calls, calls that did not return ok."""
    return wh.rows(
        f"""SELECT run_id, tool, count(*) AS n, count(*) / sum(count(*)) OVER (PARTITION BY run_id) AS share,
                   count_if(status <> 'ok') AS n_failed
            FROM {m.CALLS} WHERE run_id IN {_in(len(run_ids))} GROUP BY run_id, tool ORDER BY run_id, n DESC, tool""",
        list(run_ids))


def statuses(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Per run and call status (the shared vocabulary): n and share of the run's calls."""
    return wh.rows(
        f"""SELECT run_id, status, count(*) AS n, count(*) / sum(count(*)) OVER (PARTITION BY run_id) AS share
            FROM {m.CALLS} WHERE run_id IN {_in(len(run_ids))} GROUP BY run_id, status ORDER BY status, run_id""",
        list(run_ids))


def transitions(wh: Warehouse, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    return wh.rows(
        f"SELECT run_id, prev_tool, next_tool, n, p_next FROM {m.TRANSITIONS} WHERE run_id IN {_in(len(run_ids))} "
        "ORDER BY run_id, prev_tool, next_tool", list(run_ids))


def transition_differences(wh: Warehouse, runs_a: Sequence[str], runs_b: Sequence[str], top: int = 12
                           ) -> list[dict[str, Any]]:
    """Transitions whose P(next | prev) differs most between two sets of runs (each set's counts pooled)."""
    pooled = f"""SELECT prev_tool, next_tool, sum(n) AS n, sum(n) / sum(sum(n)) OVER (PARTITION BY prev_tool) AS p_next
                 FROM {m.TRANSITIONS} WHERE run_id IN {{}} GROUP BY prev_tool, next_tool"""
    return wh.rows(
        f"""WITH a AS ({pooled.format(_in(len(runs_a)))}), b AS ({pooled.format(_in(len(runs_b)))})
            SELECT coalesce(a.prev_tool, b.prev_tool) AS prev_tool, coalesce(a.next_tool, b.next_tool) AS next_tool,
                   coalesce(a.n, 0) AS n_a, coalesce(b.n, 0) AS n_b, coalesce(a.p_next, 0) AS p_a,
                   coalesce(b.p_next, 0) AS p_b, coalesce(a.p_next, 0) - coalesce(b.p_next, 0) AS diff
            FROM a FULL OUTER JOIN b ON a.prev_tool = b.prev_tool AND a.next_tool = b.next_tool
            ORDER BY abs(diff) DESC, prev_tool, next_tool LIMIT {int(top)}""", [*runs_a, *runs_b])


def trigrams(wh: Warehouse, run_id: str, top: int = 8) -> list[dict[str, Any]]:
    return wh.rows(
        f"SELECT trigram, n, share FROM {m.TRIGRAMS} WHERE run_id = ? ORDER BY n DESC, trigram LIMIT {int(top)}",
        [run_id])


# -- resources ---------------------------------------------------------------------------------------------


def resources(wh: Warehouse, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per run: tokens by kind (all attempts, model_cost), cost, and the final trajectories' tokens, turns,
    wall time (mean, p50, p90)."""
    rows = wh.rows(
        f"""WITH t AS (
                SELECT run_id, avg(total_tokens) AS avg_tokens,
                       quantile_cont(total_tokens, 0.5) AS tokens_p50, quantile_cont(total_tokens, 0.9) AS tokens_p90,
                       avg(total_turns) AS avg_turns, quantile_cont(total_turns, 0.5) AS turns_p50,
                       quantile_cont(total_turns, 0.9) AS turns_p90, avg(wall_time_s) AS avg_wall_s,
                       quantile_cont(wall_time_s, 0.9) AS wall_p90, sum(n_attempts) - count(*) AS extra_attempts
                FROM {m.trajectories(wh)} WHERE run_id IN {_in(len(run_ids))} GROUP BY run_id),
                 calls AS (SELECT run_id, count(*) AS n_calls FROM {m.CALLS} WHERE run_id IN {_in(len(run_ids))}
                           GROUP BY run_id)
            SELECT t.*, coalesce(calls.n_calls, 0) AS n_calls, c.pricing_found, c.prompt_tokens, c.completion_tokens,
                   c.cache_read_tokens, c.cache_creation_tokens, c.total_usd, c.usd_per_item
            FROM t LEFT JOIN calls USING (run_id) LEFT JOIN {m.COST} c USING (run_id)""",
        [*run_ids, *run_ids])
    return {r["run_id"]: r for r in rows}


#: trajectory column -> (axis title, unit divisor) of the compare histograms
HIST_COLUMNS: dict[str, tuple[str, float]] = {"total_tokens": ("tokens (K)", 1000.0), "total_turns": ("turns", 1.0)}


def _nice_width(span: float, bins: int) -> float:
    if span <= 0:
        return 1.0
    raw = span / bins
    exp = math.floor(math.log10(raw))
    for mult in (1, 2, 5, 10):
        if mult * 10**exp >= raw:
            return float(mult * 10**exp)
    return float(10 ** (exp + 1))


def histogram(wh: Warehouse, run_ids: Sequence[str], column: str, bins: int = 20) -> list[dict[str, Any]]:
    """Per run, counts and shares of the final trajectories' `column` in equal-width bins."""
    if column not in HIST_COLUMNS:
        raise ValueError(f"histogram: unsupported column {column!r}")
    _, div = HIST_COLUMNS[column]
    (mx,) = wh.con.execute(f"SELECT max({column}) / {div} FROM {m.trajectories(wh)} WHERE run_id IN {_in(len(run_ids))}",
                           list(run_ids)).fetchone()  # type: ignore[misc]
    width = 1.0 if column != "total_tokens" and (mx or 0) <= 40 else _nice_width(float(mx or 0), bins)
    return wh.rows(
        f"""WITH b AS (SELECT run_id, floor(({column} / {div}) / {width}) * {width} AS bin_start
                       FROM {m.trajectories(wh)} WHERE run_id IN {_in(len(run_ids))} AND {column} IS NOT NULL)
            SELECT run_id, bin_start, bin_start + {width} AS bin_end, count(*) AS n,
                   count(*) / sum(count(*)) OVER (PARTITION BY run_id) AS share
            FROM b GROUP BY run_id, bin_start ORDER BY run_id, bin_start""", list(run_ids))


# -- reruns ------------------------------------------------------------------------------------------------


def flips(wh: Warehouse, benchmark: str, model: str, condition: str) -> list[dict[str, Any]]:
    """rerun_item_flips of one rerun group: per item, n_runs, n_correct, flipped, mean and spread of the score.
    While a page shows a metric (reports/core/metrics.py) the same columns of that metric's values."""
    traj = m.trajectories(wh)
    if traj != m.TRAJECTORIES:
        group = (f"LEFT JOIN {m.ITEM_GROUPS} g ON g.benchmark = t.benchmark AND g.sample_id = t.sample_id"
                 if m.has(wh, m.ITEM_GROUPS) else "")
        return wh.rows(
            f"""SELECT t.benchmark, t.model, t.condition, t.sample_id, {'any_value(g.item_group)' if group else 'NULL'} AS cell,
                       count(*) AS n_runs, count(*) FILTER (WHERE t.is_correct) AS n_correct,
                       n_correct::double / count(*) AS share_correct,
                       n_correct > 0 AND n_correct < count(*) AS flipped,
                       avg(t.score) AS mean_score, max(t.score) - min(t.score) AS score_spread
                FROM {traj} t {group} WHERE t.benchmark = ? AND t.model = ? AND t.condition = ?
                GROUP BY t.benchmark, t.model, t.condition, t.sample_id ORDER BY t.sample_id""",
            [benchmark, model, condition])
    return wh.rows(
        f"SELECT * FROM {m.FLIPS} WHERE benchmark = ? AND model = ? AND condition = ? ORDER BY sample_id",
        [benchmark, model, condition])


def item_patterns(wh: Warehouse, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per item: each run's correctness and score in the order of `run_ids` (None where it has no trajectory)."""
    order = " ".join(f"WHEN ? THEN {i}" for i in range(len(run_ids)))
    rows = wh.rows(
        f"""SELECT sample_id, list({_ok('is_correct')} ORDER BY pos) AS correct, list(score ORDER BY pos) AS scores,
                   list(pos ORDER BY pos) AS pos
            FROM (SELECT *, CASE run_id {order} END AS pos FROM {m.trajectories(wh)} WHERE run_id IN {_in(len(run_ids))})
            GROUP BY sample_id ORDER BY sample_id""", [*run_ids, *run_ids])
    out = {}
    for r in rows:
        correct: list[int | None] = [None] * len(run_ids)
        scores: list[float | None] = [None] * len(run_ids)
        for p, c, s in zip(r["pos"], r["correct"], r["scores"]):
            correct[p], scores[p] = c, s
        out[r["sample_id"]] = {"correct": correct, "scores": scores}
    return out


# -- item pages --------------------------------------------------------------------------------------------


def _each_run(sql: str, run_ids: Sequence[str], sample_ids: Sequence[str], order: str) -> tuple[str, list[Any]]:
    """`sql`, a SELECT whose two parameters are a run id and the list of item ids (``run_id = ? AND sample_id =
    ANY(?)``), once per run joined by UNION ALL and sorted by `order` (output column names), with its parameters.
    An equality on the run lets DuckDB skip the other runs' rows as it scans; an ``IN`` list of many parameters
    only hints the scan, which then reads every row's text (a transcript's messages) before filtering."""
    runs = list(dict.fromkeys(run_ids))
    return (" UNION ALL ".join(f"({sql})" for _ in runs) + f" ORDER BY {order}",
            [p for r in runs for p in (r, list(sample_ids))])


def _item_rows(wh: Warehouse, sql: str, run_ids: Sequence[str], sample_ids: Sequence[str], order: str
               ) -> list[dict[str, Any]]:
    if not run_ids or not sample_ids:
        return []
    return wh.rows(*_each_run(sql, run_ids, sample_ids, order))


def item_trajectories(wh: Warehouse, run_ids: Sequence[str], sample_ids: Sequence[str]) -> list[dict[str, Any]]:
    return _item_rows(
        wh, f"""SELECT run_id, sample_id, attempt, n_attempts, predicted_answer, is_correct, score, terminated_by,
                       total_turns, total_tokens, wall_time_s
                FROM {m.trajectories(wh)} WHERE run_id = ? AND sample_id = ANY(?)""",
        run_ids, sample_ids, "sample_id, run_id")


def item_calls(wh: Warehouse, run_ids: Sequence[str], sample_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The final attempt's calls with their arguments, status, error type and result size, in order (the final
    attempt read from the trajectories themselves: a page's metric (:func:`m.trajectories`) changes their score,
    not which attempt is final, and joining its view would read every run's metric values)."""
    return _item_rows(
        wh, f"""SELECT c.run_id, c.sample_id, c.turn, c.seq, c.tool, c.args_json, c.status, c.error_type, c.output_chars
                FROM {m.CALL_DETAILS} c JOIN {m.TRAJECTORIES} t
                  ON t.run_id = c.run_id AND t.sample_id = c.sample_id AND t.attempt = c.attempt
                WHERE c.run_id = ? AND c.sample_id = ANY(?)""",
        run_ids, sample_ids, "sample_id, run_id, seq")


def item_messages(wh: Warehouse, run_ids: Sequence[str], sample_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The final attempt's transcript (messages table), in order (the final attempt as :func:`item_calls` reads it)."""
    return _item_rows(
        wh, f"""SELECT msg.run_id, msg.sample_id, msg.idx, msg.role, msg.name, msg.tool_call_id, msg.content
                FROM {m.MESSAGES} msg JOIN {m.TRAJECTORIES} t
                  ON t.run_id = msg.run_id AND t.sample_id = msg.sample_id AND t.attempt = msg.attempt
                WHERE msg.run_id = ? AND msg.sample_id = ANY(?)""",
        run_ids, sample_ids, "sample_id, run_id, idx")


def item_scores(wh: Warehouse, run_ids: Sequence[str], sample_ids: Sequence[str]) -> list[dict[str, Any]]:
    return _item_rows(
        wh, f"""SELECT run_id, sample_id, scorer, score_key, value_text, value_num FROM {m.SCORES}
                WHERE run_id = ? AND sample_id = ANY(?)""",
        run_ids, sample_ids, "sample_id, scorer, score_key, run_id")


def item_group_of(wh: Warehouse, benchmark: str, sample_ids: Sequence[str]) -> dict[str, str]:
    if not m.has(wh, m.ITEM_GROUPS) or not sample_ids:
        return {}
    rows = wh.con.execute(
        f"SELECT sample_id, item_group FROM {m.ITEM_GROUPS} WHERE benchmark = ? AND sample_id = ANY(?)",
        [benchmark, list(sample_ids)]).fetchall()
    return {s: g for s, g in rows if g is not None}


def runs_with_item(wh: Warehouse, sample_id: str, run_ids: Sequence[str]) -> list[str]:
    return [r for (r,) in wh.con.execute(
        f"SELECT run_id FROM {m.trajectories(wh)} WHERE sample_id = ? AND run_id IN {_in(len(run_ids))}",
        [sample_id, *run_ids]).fetchall()]


def some_items(wh: Warehouse, run_id: str, limit: int = 5) -> list[str]:
    return [s for (s,) in wh.con.execute(
        f"SELECT DISTINCT sample_id FROM {m.trajectories(wh)} WHERE run_id = ? ORDER BY sample_id LIMIT {int(limit)}",
        [run_id]).fetchall()]
