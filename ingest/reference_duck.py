"""Reference-harness JSON -> run tables inside DuckDB: the fast path of the reference import.

DuckDB reads every file (``read_text``, on all cores), parses it once (``from_json``; fields whose
JSON type matters are kept as JSON values), flattens turns, tool calls and messages with UNNEST and
derives every column in SQL, so no Python runs per row. Before any row is trusted one validation
query checks, per file, what ingest/reference_parse.py would check (types, ranges, required fields,
attempt files against retry_count, ...). A folder failing any check, or any DuckDB error, is
handed back: ingest/reference_json.py then reads those folders with the record-by-record parser,
which defines the rules and words every error. Both paths give the same rows
(tests/test_reference_duck.py compares them).

Only local paths come here (no network: DuckDB's httpfs is never asked for).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from .reference_bulk import _aliases
from .reference_parse import ALIAS_COLUMN, FAILED_DIR, Sample, task_schema

#: Characters that DuckDB would read as a glob pattern in a file name (such folders are handed back).
_GLOB = frozenset("*?[]{}")

_J = "JSON"
_TURN = {
    "role": _J, "content": _J, "tool_calls": [{"name": _J, "args": _J}],
    "tool_results": [{"output": _J, "cost": _J}], "budget_before": _J, "budget_after": _J,
    "timestamp": _J, "prompt_tokens": _J, "completion_tokens": _J,
}
_MESSAGE = {
    **{k: _J for k in ("role", "type", "name", "tool_call_id", "call_id")},
    # big text: read as text; a value that may have been something else is checked apart (_SUSPECT)
    **{k: "VARCHAR" for k in ("content", "output", "parts", "arguments")},
}
_TOP = (
    "sample_id", "model", "predicted_answer", "predicted_index", "is_correct", "reasoning", "budget_total",
    "budget_used", "total_prompt_tokens", "total_completion_tokens", "cache_read_tokens",
    "cache_creation_tokens", "wall_time_s", "api_error_count", "transient_retry_count", "terminated_by",
    "retry_count",
)


def _schema_text() -> str:
    import json

    return json.dumps({**{k: _J for k in _TOP}, "turns": [_TURN], "messages": [_MESSAGE]})


# ---- SQL helpers: each takes a JSON-typed expression


def _is_int(x: str, wide: bool = False) -> str:
    limit = 2**63 - 1 if wide else 2**31 - 1
    return (f"(json_type({x}) IN ('BIGINT', 'UBIGINT') AND TRY_CAST({x} AS HUGEINT) "
            f"BETWEEN -{limit} AND {limit})")


def _int_or_null(x: str, wide: bool = False) -> str:
    return f"({x} IS NULL OR {_is_int(x, wide)})"


def _int(x: str, default: int | None = None) -> str:
    v = f"TRY_CAST({x} AS BIGINT)"
    return v if default is None else f"coalesce({v}, {default})"


def _is_str(x: str) -> str:
    return f"(json_type({x}) = 'VARCHAR')"


def _str(x: str) -> str:
    return f"({x} ->> '$')"


def _is_num_or_null(x: str) -> str:
    return (f"({x} IS NULL OR (json_type({x}) IN ('BIGINT', 'UBIGINT', 'DOUBLE') "
            f"AND NOT isinf(TRY_CAST({x} AS DOUBLE))))")


def _text_or_null(x: str) -> str:
    """Whether ``x`` is a string or null (the message fields read as JSON)."""
    return f"({x} IS NULL OR {_is_str(x)})"


#: a message text that might not have been a JSON string (an array, object or non-integer number
#: read as text): its folder is handed back
_SUSPECT = r"^\s*[\[{]|^-?[0-9]+(\.[0-9]*)?[eE.]"

#: a scalar argument value whose JSON text is what json.dumps(ensure_ascii=False) writes
#: a JSON token (a string, or a run of other characters) and the separator after it, if any
_TOKEN = r'("(?:[^"\\]|\\.)*"|[^",:]+)([,:]?)'


def _args_sql(a: str) -> tuple[str, str]:
    """(validity, args_json) of a call's ``args``: DuckDB's compact JSON text with a space after
    every separator outside strings, as json.dumps writes it (``{}`` when absent or null). Text
    that json.dumps might write differently (a \\u escape, a number with a fraction or exponent)
    is handed back."""
    ok = f"({a} IS NULL OR NOT regexp_matches({a}, '\\\\u|[:,\\[]-?[0-9]+[.eE]|\"(paper_id|section|query|answer)\":[\\[{{]'))"
    spaced = f"regexp_replace({a}, '{_TOKEN}', '\\1\\2' || chr(1), 'g')"
    text = (f"CASE WHEN {a} IS NULL THEN '{{}}' ELSE replace(replace(replace({spaced}, ',' || chr(1), ', '), "
            f"':' || chr(1), ': '), chr(1), '') END")
    return ok, text


def _arg(a: str, key: str) -> str:
    """_scalar_text(args.get(key)) of reference_parse (args that are not an object have none)."""
    return f"json_extract_string({a}, '$.{key}')"


_STATUS = """CASE
    WHEN NOT executed THEN 'not_executed'
    WHEN starts_with(output, 'REJECTED: Insufficient budget') THEN 'rejected_budget'
    WHEN starts_with(output, 'REJECTED: Tool') AND contains(first_line, 'disabled') THEN 'rejected_disabled'
    WHEN starts_with(output, 'Unknown tool') THEN 'unknown_tool'
    WHEN starts_with(output, 'Error calling') THEN 'invalid_args'
    WHEN starts_with(output, 'Paper ''') AND contains(first_line, 'not found') THEN 'unknown_paper'
    WHEN starts_with(output, 'Full text not available') OR starts_with(output, 'No sections found for paper')
        THEN 'no_full_text'
    WHEN starts_with(output, 'Empty query.') THEN 'invalid_args'
    WHEN starts_with(output, 'Section ''') AND contains(first_line, ''' not found in paper') THEN 'section_not_found'
    ELSE 'ok' END"""


def _plan_table(folders: Sequence[tuple[str, list[Sample]]]) -> pa.Table | None:
    """One row per file: its folder, sample ordinal, attempt file number and role."""
    cols: dict[str, list] = {k: [] for k in ("path", "folder", "run_id", "sord", "k", "is_final", "n_fails", "stem")}
    sord = 0
    for i, (run_id, samples) in enumerate(folders):
        for path, fails in samples:
            stem = os.path.basename(path)[:-5]
            for k, p in enumerate([*fails, path]):
                final = k == len(fails)
                cols["path"].append(p)
                cols["folder"].append(i)
                cols["run_id"].append(run_id)
                cols["sord"].append(sord)
                cols["k"].append(k)
                cols["is_final"].append(final)
                cols["n_fails"].append(len(fails))
                cols["stem"].append(stem)
            sord += 1
    if not cols["path"]:
        return None
    return pa.table(cols, schema=pa.schema([
        ("path", pa.string()), ("folder", pa.int32()), ("run_id", pa.string()), ("sord", pa.int64()),
        ("k", pa.int32()), ("is_final", pa.bool_()), ("n_fails", pa.int32()), ("stem", pa.string()),
    ]))


def _usable(samples: list[Sample]) -> bool:
    return all(not (_GLOB & set(p)) for path, fails in samples for p in (path, *fails))


def parse_folders(folders: Sequence[tuple[str, list[Sample]]], threads: int | None = None) -> list[dict[str, Any] | None]:
    """Each folder ``(run_id, samples)`` as one parse_samples-like result, or None where the folder
    must be read record by record (any check failed, or DuckDB could not read it)."""
    out: list[dict[str, Any] | None] = [None] * len(folders)
    usable = [i for i, (_, s) in enumerate(folders) if s and _usable(s)]
    if not usable:
        return out
    plan = _plan_table([folders[i] for i in usable])
    if plan is None:
        return out
    con = duckdb.connect(config={"threads": threads or os.cpu_count() or 1, "autoinstall_known_extensions": False,
                                 "autoload_known_extensions": False,
                                 "preserve_insertion_order": False})
    try:
        results = _run(con, plan, len(usable))
    except duckdb.Error:
        return out  # the careful path reads every folder and names the problem
    finally:
        con.close()
    for j, r in enumerate(results):
        out[usable[j]] = r
    return out


def _run(con: duckdb.DuckDBPyConnection, plan: pa.Table, n_folders: int) -> list[dict[str, Any] | None]:
    con.register("plan_arrow", plan)
    con.execute("CREATE TEMP TABLE plan AS SELECT * FROM plan_arrow")
    con.unregister("plan_arrow")
    paths = plan.column("path").to_pylist()
    schema = _schema_text()
    con.execute(
        f"""CREATE TEMP TABLE files AS
        SELECT p.*, from_json(t.content, '{schema}') AS r
        FROM read_text(?) AS t JOIN plan AS p ON p.path = t.filename""",
        [paths],
    )
    # ---- per file: scalars and their checks
    r = "r"
    ok_top = " AND ".join([
        f"{_is_str('r.sample_id')}", f"{_str('r.sample_id')} = stem",
        f"{_is_str('r.terminated_by')}", _is_int("r.budget_total"), _is_int("r.budget_used"),
        _is_int("r.predicted_index"), "json_type(r.is_correct) = 'BOOLEAN'",
        f"(r.predicted_answer IS NULL OR {_is_str('r.predicted_answer')})",
        f"(r.reasoning IS NULL OR {_is_str('r.reasoning')})",
        _is_num_or_null("r.wall_time_s"),
        _is_int("r.total_prompt_tokens", True), _is_int("r.total_completion_tokens", True),
        _int_or_null("r.cache_read_tokens", True), _int_or_null("r.cache_creation_tokens", True),
        _int_or_null("r.api_error_count"), _int_or_null("r.transient_retry_count"),
        _int_or_null("r.retry_count"), "(n_fails = 0 OR r.retry_count IS NOT NULL)",
        "r.turns IS NOT NULL",
    ])
    con.execute(f"""CREATE TEMP TABLE att AS
        SELECT path, folder, run_id, sord, k, is_final, n_fails, stem,
            {ok_top} AS ok,
            CASE WHEN json_type(r.model) = 'VARCHAR' THEN {_str('r.model')} END AS model,
            {_int('r.retry_count', 0)} AS rc,
            {_str('r.terminated_by')} AS terminated_by,
            {_int('r.budget_total')} AS budget_total,
            {_int('r.budget_used')} AS budget_used,
            {_int('r.predicted_index')} AS predicted_index,
            TRY_CAST(r.is_correct AS BOOLEAN) AS is_correct,
            nullif({_str('r.predicted_answer')}, '') AS predicted_answer,
            nullif({_str('r.reasoning')}, '') AS reasoning,
            coalesce(TRY_CAST(r.wall_time_s AS DOUBLE), 0.0) AS wall_time_s,
            {_int('r.total_prompt_tokens', 0)} AS total_prompt_tokens,
            {_int('r.total_completion_tokens', 0)} AS total_completion_tokens,
            {_int('r.cache_read_tokens', 0)} AS cache_read_tokens,
            {_int('r.cache_creation_tokens', 0)} AS cache_creation_tokens,
            {_int('r.api_error_count', 0)} AS api_error_count,
            {_int('r.transient_retry_count', 0)} AS transient_retry_count,
            coalesce(len(r.turns), 0) AS total_turns,
            coalesce(len(r.messages), 0) AS n_messages,
            -- a null list may have been null, absent or something else: checked apart (_unsure)
            r.messages IS NULL OR coalesce(list_bool_or(list_transform(r.turns,
                lambda t: t.tool_calls IS NULL OR t.tool_results IS NULL)), false) AS unsure
        FROM files""")
    # which files are attempts (a failed file past retry_count only holds totals to subtract)
    con.execute("""CREATE TEMP TABLE att2 AS
        SELECT a.*, fin.rc AS final_rc, fin.terminated_by AS final_terminated_by,
            CASE WHEN a.is_final THEN fin.rc ELSE a.k END AS attempt,
            (a.is_final OR a.k < fin.rc) AS is_row
        FROM att AS a JOIN (SELECT sord, rc, terminated_by FROM att WHERE is_final) AS fin USING (sord)""")
    # ---- turns
    turn_ok = " AND ".join([
        "t IS NOT NULL", _is_str("t.role"),
        "coalesce(len(t.tool_results), 0) <= coalesce(len(t.tool_calls), 0)",
        _int_or_null("t.prompt_tokens", True), _int_or_null("t.completion_tokens", True),
        f"(coalesce(len(t.tool_results), 0) = 0 OR ({_is_int('t.budget_before')} AND {_is_int('t.budget_after')}))",
        _is_num_or_null("t.timestamp"),
    ])
    con.execute(f"""CREATE TEMP TABLE turns0 AS
        SELECT f.sord, f.k, pos, t.tool_calls AS calls, t.tool_results AS results,
            {turn_ok} AS ok,
            {_str('t.role')} AS role,
            coalesce(len(t.tool_calls), 0) AS n_calls,
            coalesce(len(t.tool_results), 0) AS n_results,
            {_int('t.prompt_tokens', 0)} AS prompt_tokens,
            {_int('t.completion_tokens', 0)} AS completion_tokens,
            {_int('t.budget_before')} AS bb, {_int('t.budget_after')} AS ba,
            CASE WHEN json_type(t.content) = 'VARCHAR' THEN length({_str('t.content')}) ELSE 0 END AS content_chars,
            coalesce(TRY_CAST(t.timestamp AS DOUBLE), 0.0) AS t_offset_s
        FROM (SELECT sord, k, unnest(r.turns) AS t, unnest(range(len(r.turns))) AS pos FROM files) AS f""")
    # the running values need the turns in order: computed over their small columns only
    con.execute("""CREATE TEMP TABLE turns1 AS
        SELECT sord, k, pos, t.ok, role, n_calls, n_results, prompt_tokens, completion_tokens, bb, ba,
            content_chars, t_offset_s, a.budget_total,
            sum(prompt_tokens + completion_tokens) OVER w AS cumulative_tokens,
            coalesce(last_value(CASE WHEN n_results > 0 THEN ba END IGNORE NULLS)
                     OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), a.budget_total) AS carried,
            coalesce(sum(n_calls) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS calls_before
        FROM turns0 AS t JOIN att AS a USING (sord, k)
        WINDOW w AS (PARTITION BY sord, k ORDER BY pos)""")
    # ---- tool calls
    args_ok, args_json = _args_sql("args")
    cost = "coalesce(TRY_CAST(x.cost AS BIGINT), 0)"
    con.execute(f"""CREATE TEMP TABLE calls0 AS
        SELECT sord, k, pos, ci, calls_before + ci AS seq, args, executed,
            c_ok AND (NOT executed OR (res IS NOT NULL AND {_is_str('res.output')}
                AND {_int_or_null('res.cost')})) AND {args_ok} AS ok,
            tool,
            {args_json} AS args_json,
            CASE WHEN executed THEN {_str('res.output')} END AS output,
            CASE WHEN executed THEN {_int('res.cost', 0)} ELSE 0 END AS cost,
            before - coalesce(list_sum(list_transform(list_slice(results, 1, ci + 1), lambda x: {cost})), 0) AS running
        FROM (
            SELECT u.*, t.calls_before, CASE WHEN t.n_results > 0 THEN t.bb ELSE t.carried END AS before,
                c.args AS args, c IS NOT NULL AND {_is_str('c.name')} AS c_ok, {_str('c.name')} AS tool,
                ci < t.n_results AS executed, CASE WHEN ci < t.n_results THEN results[ci + 1] END AS res
            FROM (
                SELECT sord, k, pos, results, unnest(calls) AS c, unnest(range(n_calls)) AS ci
                FROM turns0 WHERE n_calls > 0
            ) AS u JOIN turns1 AS t USING (sord, k, pos)
        )""")
    con.execute(f"""CREATE TEMP TABLE calls1 AS
        SELECT *,
            CASE WHEN tool = 'read_section' AND status = 'ok' AND regexp_matches(first_line, '^=== (.*) ===$')
                 THEN regexp_extract(first_line, '^=== (.*) ===$', 1) END AS resolved_header
        FROM (
            SELECT *, {_STATUS} AS status,
                executed AND (starts_with(output, 'Unknown tool') OR starts_with(output, 'Error calling')
                              OR starts_with(output, 'Tool ''')) AS tool_error,
                {_arg('args', 'paper_id')} AS paper_id,
                CASE WHEN tool = 'read_section' THEN {_arg('args', 'section')} END AS section_query,
                CASE WHEN tool = 'search_papers' THEN {_arg('args', 'query')} END AS search_query,
                CASE WHEN tool = 'submit_answer' THEN {_arg('args', 'answer')} END AS answer
            FROM (SELECT *, split_part(output, chr(10), 1) AS first_line FROM calls0)
        )""")
    # ---- messages
    msg_ok = " AND ".join([
        "m IS NOT NULL", *(_text_or_null(f"m.{k}") for k in ("role", "type", "name", "tool_call_id", "call_id")),
        f"NOT coalesce(regexp_matches(coalesce(m.content, m.output, m.parts, m.arguments), '{_SUSPECT}'), false)",
    ])
    con.execute(f"""CREATE TEMP TABLE msgs0 AS
        SELECT sord, k, idx, {msg_ok} AS ok,
            coalesce(nullif({_str('m.role')}, ''), nullif({_str('m.type')}, ''), 'unknown') AS role,
            {_str('m.name')} AS name,
            coalesce(nullif({_str('m.tool_call_id')}, ''), {_str('m.call_id')}) AS tool_call_id,
            coalesce(m.content, m.output, m.parts, m.arguments) AS content
        FROM (SELECT sord, k, unnest(r.messages) AS m, unnest(range(len(r.messages))) AS idx FROM files)""")
    con.execute("DROP TABLE files")

    # ---- validation: every check of every file of a folder
    bad = {row[0] for row in con.execute("""
        WITH per_file AS (
            SELECT a.folder, a.sord, a.k, a.ok AND a.is_row IS NOT NULL
                AND (NOT a.is_final OR a.n_fails = a.rc OR (a.n_fails = a.rc + 1 AND a.terminated_by = 'error'))
                AS ok FROM att2 AS a
        ), sub AS (
            SELECT sord, sum(total_prompt_tokens)::BIGINT AS p, sum(total_completion_tokens)::BIGINT AS c,
                sum(cache_read_tokens)::BIGINT AS cr, sum(cache_creation_tokens)::BIGINT AS cc,
                sum(api_error_count)::BIGINT AS ae, sum(transient_retry_count)::BIGINT AS tr
            FROM att WHERE NOT is_final GROUP BY sord
        ), merged AS (
            SELECT a.folder, (a.total_prompt_tokens >= s.p AND a.total_completion_tokens >= s.c
                AND a.cache_read_tokens >= s.cr AND a.cache_creation_tokens >= s.cc
                AND a.api_error_count >= s.ae AND a.transient_retry_count >= s.tr) AS ok
            FROM att AS a JOIN sub AS s USING (sord) WHERE a.is_final
        ), turn_bad AS (
            SELECT DISTINCT sord FROM turns1
            WHERE NOT coalesce(ok, false) OR abs(carried) > 2147483647
        ), call_bad AS (
            SELECT DISTINCT sord FROM calls1 WHERE NOT coalesce(ok, false) OR abs(running) > 2147483647 OR NOT coalesce(abs(cost) <= 2147483647, false)
        ), msg_bad AS (
            SELECT DISTINCT sord FROM msgs0 WHERE NOT coalesce(ok, false)
        )
        SELECT folder FROM per_file WHERE NOT coalesce(ok, false)
        UNION SELECT folder FROM merged WHERE NOT coalesce(ok, false)
        UNION SELECT a.folder FROM att AS a JOIN (SELECT sord FROM turn_bad UNION SELECT sord FROM call_bad
                                                  UNION SELECT sord FROM msg_bad) USING (sord)
        UNION SELECT a.folder FROM att AS a WHERE a.total_prompt_tokens + a.total_completion_tokens
                                                  + a.cache_creation_tokens > 9007199254740992
    """).fetchall()}
    bad |= _unsure(con)
    good = [i for i in range(n_folders) if i not in bad]
    if not good:
        return [None] * n_folders
    con.register("good_arrow", pa.table({"folder": pa.array(good, pa.int32())}))
    con.execute("CREATE TEMP TABLE good AS SELECT * FROM good_arrow")
    con.unregister("good_arrow")
    return _tables(con, n_folders, set(good))


def _unsure(con: duckdb.DuckDBPyConnection) -> set[int]:
    """Folders of files whose null lists were not null or absent (read again, only those files):
    ``messages``, ``tool_calls`` and ``tool_results`` must be lists when present."""
    rows = con.execute("SELECT path, folder FROM att WHERE unsure").fetchall()
    if not rows:
        return set()
    folder_of = dict(rows)
    types = con.execute(
        """SELECT filename, json_type(content, '$.messages'),
               json_type(content, '$.turns[*].tool_calls'), json_type(content, '$.turns[*].tool_results')
           FROM read_text(?)""",
        [list(folder_of)],
    ).fetchall()
    lists = ("ARRAY", "NULL")
    return {folder_of[path] for path, messages, calls, results in types
            if messages not in (None, *lists) or any(t not in lists for t in (*(calls or ()), *(results or ())))}


def _tables(con: duckdb.DuckDBPyConnection, n_folders: int, good: set[int]) -> list[dict[str, Any] | None]:
    """The rows of the good folders as Arrow tables, split per folder, with their segments."""
    traj = con.sql("""
        SELECT *, total_prompt_tokens + total_completion_tokens + cache_creation_tokens AS total_tokens FROM (
        SELECT a.sord, a.folder, a.path, a.model, a.budget_total AS file_budget_total,
            c.n_calls AS n_call_rows,
            a.run_id, a.stem AS sample_id, a.attempt, a.is_final, a.predicted_answer, a.predicted_index,
            a.is_correct, a.terminated_by, a.total_turns, a.budget_used,
            a.total_prompt_tokens - CASE WHEN a.is_final THEN coalesce(s.p, 0) ELSE 0 END AS total_prompt_tokens,
            a.total_completion_tokens - CASE WHEN a.is_final THEN coalesce(s.c, 0) ELSE 0 END AS total_completion_tokens,
            a.cache_read_tokens - CASE WHEN a.is_final THEN coalesce(s.cr, 0) ELSE 0 END AS cache_read_tokens,
            a.cache_creation_tokens - CASE WHEN a.is_final THEN coalesce(s.cc, 0) ELSE 0 END AS cache_creation_tokens,
            coalesce(c.tool_errors, 0) AS tool_errors,
            a.api_error_count - CASE WHEN a.is_final THEN coalesce(s.ae, 0) ELSE 0 END AS api_error_count,
            a.transient_retry_count - CASE WHEN a.is_final THEN coalesce(s.tr, 0) ELSE 0 END AS transient_retry_count,
            a.wall_time_s, a.reasoning, a.n_messages
        FROM att2 AS a JOIN good USING (folder)
        LEFT JOIN (
            SELECT sord, sum(total_prompt_tokens)::BIGINT AS p, sum(total_completion_tokens)::BIGINT AS c,
                sum(cache_read_tokens)::BIGINT AS cr, sum(cache_creation_tokens)::BIGINT AS cc,
                sum(api_error_count)::BIGINT AS ae, sum(transient_retry_count)::BIGINT AS tr
            FROM att WHERE NOT is_final GROUP BY sord
        ) AS s USING (sord)
        LEFT JOIN (SELECT sord, k, count(*)::BIGINT AS n_calls, count(*) FILTER (WHERE tool_error) AS tool_errors
                   FROM calls1 GROUP BY sord, k) AS c USING (sord, k)
        WHERE a.is_row
        ) ORDER BY sord, attempt
    """).to_arrow_table()
    # the key columns of every row table, from the attempt rows (joined by sord and attempt file k)
    keys = "a.run_id, a.stem AS sample_id, a.attempt"
    turns = con.sql(f"""
        SELECT a.folder, {keys}, t.pos AS turn, t.role, t.n_calls AS n_tool_calls, t.prompt_tokens,
            t.completion_tokens, 0 AS cache_read_tokens, 0 AS cache_creation_tokens, t.cumulative_tokens,
            CASE WHEN t.n_results > 0 THEN t.bb ELSE t.carried END AS budget_before,
            CASE WHEN t.n_results > 0 THEN t.ba ELSE t.carried END AS budget_after,
            t.content_chars, t.t_offset_s
        FROM turns1 AS t JOIN att2 AS a USING (sord, k) JOIN good USING (folder)
        WHERE a.is_row ORDER BY a.sord, a.attempt, t.pos
    """).to_arrow_table()
    calls = con.sql(f"""
        SELECT a.folder, {keys}, c.pos AS turn, c.ci AS call_index, c.seq, c.tool, c.args_json, c.paper_id,
            c.section_query, c.resolved_header, NULL::INTEGER AS resolved_section_index, c.search_query, c.answer,
            c.cost, c.status, coalesce(length(c.output), 0) AS output_chars, c.running AS budget_after
        FROM calls1 AS c JOIN att2 AS a USING (sord, k) JOIN good USING (folder)
        WHERE a.is_row ORDER BY a.sord, a.attempt, c.pos, c.ci
    """).to_arrow_table()
    msgs = con.sql(f"""
        SELECT a.folder, {keys}, m.idx, m.role, m.name, m.tool_call_id, m.content
        FROM msgs0 AS m JOIN att2 AS a USING (sord, k) JOIN good USING (folder)
        WHERE a.is_row ORDER BY a.sord, a.attempt, m.idx
    """).to_arrow_table()
    calls = calls.append_column(ALIAS_COLUMN, _aliases(calls.column("section_query").combine_chunks(),
                                                       pa.compute.is_valid(calls.column("resolved_header")).combine_chunks()))
    out: list[dict[str, Any] | None] = [None] * n_folders
    split = {name: _split(t, n_folders) for name, t in
             (("trajectories", traj), ("turns", turns), ("tool_calls", calls), ("messages", msgs))}
    for i in sorted(good):
        tr = split["trajectories"][i]
        where = tr.column("path").to_pylist()
        finals = tr.filter(tr.column("is_final").combine_chunks())
        models = {m for m in finals.column("model").to_pylist() if m is not None}
        per_attempt = {
            "trajectories": [1] * tr.num_rows, "turns": tr.column("total_turns").to_pylist(),
            "tool_calls": [n or 0 for n in tr.column("n_call_rows").to_pylist()],
            "messages": tr.column("n_messages").to_pylist(),
        }
        out[i] = {
            "error": None,
            "sample_ids": finals.column("sample_id").to_pylist(),
            "models": models,
            "budget_total": finals.column("file_budget_total")[0].as_py() if finals.num_rows else None,
            "tables": {name: _conform(name, split[name][i]) for name in split},
            "segments": {name: [(w, int(n)) for w, n in zip(where, counts) if n]
                         for name, counts in per_attempt.items()},
        }
    return out


def _split(table: pa.Table, n: int) -> list[pa.Table]:
    """Rows per folder (the table is ordered by folder, as its sample ordinals are)."""
    folder = table.column("folder").to_numpy()
    import numpy as np

    ends = np.searchsorted(folder, np.arange(n), side="right")
    starts = np.concatenate([[0], ends[:-1]])
    return [table.slice(int(s), int(e - s)) for s, e in zip(starts, ends)]


def _conform(name: str, table: pa.Table) -> pa.Table:
    schema = task_schema(name)
    n = table.num_rows
    return pa.Table.from_arrays(
        [table.column(f.name).cast(f.type) if f.name in table.column_names else pa.nulls(n, f.type) for f in schema],
        schema=schema,
    )


__all__ = ["parse_folders", "FAILED_DIR", "Path"]
