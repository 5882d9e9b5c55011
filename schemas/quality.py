"""Data-quality rules of the trajectory tables, declared next to their schemas (trajectory.py).

Ingest checks every rule before it writes anything (ingest/quality.py runs them in DuckDB over
all rows at once); a violation refuses the whole ingest, naming the file, the row and the column.
``agenthop-ingest --accept-dq`` loads the rows anyway and records every violation in
``raw.dq_issues`` (schema :data:`DQ_ISSUES`), which the dq marts and ``dbt build`` report.

Three kinds of rule, all derived from these declarations:

* ranges: every integer and floating column of the trajectory tables is ``>= 0`` unless
  :data:`RANGE_OVERRIDES` says otherwise (``predicted_index`` is -1..3);
* finite floats: every floating column holds no NaN or infinity;
* allowed values: :data:`ALLOWED_VALUES` (the vocabularies of trajectory.py);
* consistency: :data:`CONSISTENCY`, each a DuckDB query over the tables being loaded that
  returns the violating rows (``_g`` is the row's position in its table, ``value`` what it holds).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow as pa

from . import agenthop
from . import trajectory as t

#: AgentHop's tools (schemas/agenthop.py), kept under this name for older imports.
TOOL_NAMES: tuple[str, ...] = agenthop.TOOL_NAMES

#: Default lower bound of every numeric column (counts, tokens, costs, budgets, attempts, times).
MIN_DEFAULT = 0

#: (table, column) -> (min, max); max None means unbounded.
RANGE_OVERRIDES: dict[tuple[str, str], tuple[int, int | None]] = {
    ("trajectories", "predicted_index"): (-1, 3),
}

def _conditions() -> tuple[str, ...]:
    """``runs.condition``: AgentHop's ablation conditions, every registered benchmark's conditions, and
    the empty condition of imported runs that have none."""
    from agenthop.harness import benchmarks

    out = [*t.CONDITIONS, t.NO_CONDITION]
    for bench in benchmarks.available():
        out += [c for c in bench.conditions if c not in out]
    return tuple(out)


#: table -> column -> allowed values.
ALLOWED_VALUES: dict[str, dict[str, tuple[str, ...]]] = {
    "runs": {"condition": _conditions(), "backend": t.BACKENDS},
    "trajectories": {"terminated_by": t.TERMINATIONS},
    "turns": {"role": t.TURN_ROLES},
    "tool_calls": {"status": t.TOOL_CALL_STATUSES},
}


@dataclass(frozen=True, slots=True)
class Rule:
    """One check: ``sql`` returns ``_g`` (row position in ``table``) and ``value`` per violation.

    ``message`` describes the violation; ``{value}`` in it stands for the row's value.
    """

    name: str
    table: str
    column: str
    message: str
    sql: str
    #: for a rule on single rows: the condition a violating row of ``table`` meets (lets ingest
    #: test every such rule of a table in one scan and query the details only of those that fail)
    where: str = ""


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _sql_list(values: tuple[str, ...]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def _numeric(field: pa.Field) -> bool:
    return pa.types.is_integer(field.type) or pa.types.is_floating(field.type)


def range_of(table: str, column: str) -> tuple[int, int | None]:
    return RANGE_OVERRIDES.get((table, column), (MIN_DEFAULT, None))


def _range_rules() -> list[Rule]:
    rules = []
    for table, schema in t.TABLES.items():
        for f in schema:
            if not _numeric(f):
                continue
            lo, hi = range_of(table, f.name)
            col = _q(f.name)
            cond = f"{col} < {lo}" + (f" OR {col} > {hi}" if hi is not None else "")
            bounds = f"between {lo} and {hi}" if hi is not None else f">= {lo}"
            rules.append(Rule("out_of_range", table, f.name, f"is {{value}}, must be {bounds}",
                              f"SELECT _g, {col}::VARCHAR AS value FROM {table} WHERE {cond}", cond))
            if pa.types.is_floating(f.type):
                cond = f"NOT isfinite({col})"
                rules.append(Rule("not_finite", table, f.name, "is {value}, must be a finite number",
                                  f"SELECT _g, {col}::VARCHAR AS value FROM {table} WHERE {cond}", cond))
    return rules


def _allowed_rules() -> list[Rule]:
    rules = []
    for table, cols in ALLOWED_VALUES.items():
        for column, values in cols.items():
            cond = f"{_q(column)} NOT IN ({_sql_list(values)})"
            rules.append(Rule(
                "unknown_value", table, column, f"has unknown value {{value}} (allowed: {', '.join(values)})",
                f"SELECT _g, concat('''', {_q(column)}, '''') AS value FROM {table} WHERE {cond}", cond,
            ))
    return rules


_ATTEMPT = "run_id, sample_id, attempt"

#: Rules relating rows and tables to each other (the identities of the trajectory store).
CONSISTENCY: tuple[Rule, ...] = (
    Rule(
        "total_tokens_vs_components", "trajectories", "total_tokens",
        "is {value}; it must equal total_prompt_tokens + total_completion_tokens + cache_creation_tokens",
        "SELECT _g, total_tokens::VARCHAR || ' (parts sum to ' || "
        "(total_prompt_tokens + total_completion_tokens + cache_creation_tokens)::VARCHAR || ')' AS value "
        "FROM trajectories "
        "WHERE total_tokens <> total_prompt_tokens + total_completion_tokens + cache_creation_tokens",
    ),
    Rule(
        "budget_used_vs_call_costs", "trajectories", "budget_used",
        "is {value}; it must equal the sum of the attempt's tool-call costs",
        f"SELECT tr._g, tr.budget_used::VARCHAR || ' (calls cost ' || coalesce(c.cost, 0)::VARCHAR || ')' AS value "
        f"FROM trajectories AS tr LEFT JOIN (SELECT {_ATTEMPT}, sum(cost) AS cost FROM tool_calls "
        f"GROUP BY {_ATTEMPT}) AS c USING ({_ATTEMPT}) WHERE tr.budget_used <> coalesce(c.cost, 0)",
    ),
    Rule(
        "final_attempt_count", "trajectories", "is_final",
        "{value}; each sample of a finished run needs exactly one final attempt (reported on the "
        "second final attempt, or on the last attempt when none is final)",
        "SELECT _g, n_final::VARCHAR || ' final attempt(s) for sample ' || sample_id AS value FROM ("
        "  SELECT tr._g, tr.sample_id, tr.attempt, tr.is_final,"
        "    count_if(tr.is_final) OVER (PARTITION BY tr.run_id, tr.sample_id) AS n_final,"
        "    max(tr.attempt) OVER (PARTITION BY tr.run_id, tr.sample_id) AS last_attempt,"
        "    row_number() OVER (PARTITION BY tr.run_id, tr.sample_id, tr.is_final ORDER BY tr.attempt) AS k"
        "  FROM trajectories AS tr JOIN runs AS r ON r.run_id = tr.run_id AND NOT r._partial"
        ") WHERE (n_final = 0 AND attempt = last_attempt) OR (n_final > 1 AND is_final AND k = 2)",
    ),
    Rule(
        "turn_without_trajectory", "turns", "attempt",
        "{value}: no trajectory row has this run_id, sample_id and attempt",
        f"SELECT x._g, 'sample ' || x.sample_id || ' attempt ' || x.attempt::VARCHAR AS value FROM turns AS x "
        f"ANTI JOIN trajectories AS tr USING ({_ATTEMPT})",
    ),
    Rule(
        "call_without_trajectory", "tool_calls", "attempt",
        "{value}: no trajectory row has this run_id, sample_id and attempt",
        f"SELECT x._g, 'sample ' || x.sample_id || ' attempt ' || x.attempt::VARCHAR AS value FROM tool_calls AS x "
        f"ANTI JOIN trajectories AS tr USING ({_ATTEMPT})",
    ),
)


def unknown_tool_rule(known_tools: Mapping[str, tuple[str, ...]]) -> Rule:
    """A call of a tool its benchmark does not have must say so (status unknown_tool or not_executed).

    ``known_tools``: benchmark name -> its tools; runs of a benchmark not listed are not checked.
    """
    cases = " OR ".join(
        f"(r.benchmark = '{b}' AND x.tool NOT IN ({_sql_list(tools)}))" for b, tools in sorted(known_tools.items())
    ) or "false"
    return Rule(
        "unknown_tool_status", "tool_calls", "status",
        "is {value}; a call of an unknown tool must have status unknown_tool (or not_executed)",
        f"SELECT x._g, concat('''', x.status, ''' for tool ''', x.tool, '''') AS value FROM tool_calls AS x "
        f"JOIN runs AS r ON r.run_id = x.run_id "
        f"WHERE ({cases}) AND x.status NOT IN ('unknown_tool', 'not_executed')",
    )


def rules(known_tools: Mapping[str, tuple[str, ...]]) -> tuple[Rule, ...]:
    """Every rule ingest checks, in the order their violations are reported."""
    return (*_allowed_rules(), *_range_rules(), *CONSISTENCY, unknown_tool_rule(known_tools))


#: The rules with AgentHop's tools (what docs/formats.md lists; ingest asks the benchmark registry).
RULES: tuple[Rule, ...] = rules({t.DEFAULT_BENCHMARK: agenthop.TOOL_NAMES})

#: ``raw.dq_issues``: one row per violation loaded with ``--accept-dq``.
DQ_ISSUES = pa.schema(
    [
        pa.field("load_id", pa.int64(), nullable=False),
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("table_name", pa.string(), nullable=False),
        pa.field("file", pa.string(), nullable=False),
        # 0-based row of a Parquet part file, or the place in a reference JSON file
        pa.field("row", pa.string(), nullable=False),
        pa.field("column_name", pa.string(), nullable=False),
        pa.field("rule", pa.string(), nullable=False),
        pa.field("severity", pa.string(), nullable=False),
        pa.field("value", pa.string()),
        pa.field("message", pa.string(), nullable=False),
    ]
)
