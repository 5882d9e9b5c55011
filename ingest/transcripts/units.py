"""Text units: every piece of a transcript that search looks at, one row each (docs/search.md#units).

A unit is a message (``source`` ``message``), a tool call's arguments (``tool_args``) or a tool's
output (``tool_output``: a message of role ``tool``), with its run, item, attempt and turn. Messages
carry no turn of their own: the k-th assistant message of an attempt is the k-th turn of role
``assistant`` (error turns have no message); the messages after it (tool outputs, a user's reply)
belong to that turn, and the system and user messages before the first assistant message to the first
assistant turn. ``pos`` is the message's ``idx`` or the call's ``seq``.

:func:`units_sql` is the one definition: the index (index.py) stores its rows, and search reads the
same SELECT straight from the raw tables when a warehouse has no index yet.
"""

from __future__ import annotations

#: Columns of a unit, in order, with their DuckDB types.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "VARCHAR"),
    ("sample_id", "VARCHAR"),
    ("attempt", "INTEGER"),
    ("turn", "INTEGER"),
    ("source", "VARCHAR"),  # message | tool_args | tool_output
    ("role", "VARCHAR"),  # the message's role; assistant for tool_args, tool for tool_output
    ("tool", "VARCHAR"),  # the call's tool; the tool message's name; null for other messages
    ("pos", "INTEGER"),  # messages.idx, or tool_calls.seq for tool_args
    ("status", "VARCHAR"),  # the call's status (tool_args only)
    ("text", "VARCHAR"),
)

SOURCES: tuple[str, ...] = ("message", "tool_args", "tool_output")

#: Sort rank of a source within a turn: the assistant's message, its calls' arguments, their outputs.
SOURCE_RANK_SQL = "CASE source WHEN 'message' THEN 0 WHEN 'tool_args' THEN 1 ELSE 2 END"


#: Columns of a unit as the index stores it: a unit's columns and its number there (``uid``: unique in
#: the index, the key of the word index's postings, index.py).
STORED_COLUMNS: tuple[tuple[str, str], ...] = COLUMNS + (("uid", "BIGINT"),)


#: The messages other than tool outputs (which the index keeps in a table of their own).
NOT_TOOL = "role <> 'tool'"


def _turns_sql(runs_filter: str, messages: str = "raw.messages", turns: str = "raw.turns", carry: str = "") -> str:
    """Every message's place (run_id, sample_id, attempt, idx), role and turn (module docstring), without
    its text: the window that counts the assistant messages then sorts no text. ``messages`` and
    ``turns`` name the relations read (prepared.py reads a run's tables still in memory); ``carry`` a
    further column of ``messages`` passed through."""
    where = f"WHERE {runs_filter}" if runs_filter else ""
    also = f"AND {runs_filter}" if runs_filter else ""
    extra = f", {carry}" if carry else ""
    carried = f", msg.{carry}" if carry else ""
    return f"""
    WITH msg AS (
        SELECT run_id, sample_id, attempt, idx, role{extra},
               count(*) FILTER (WHERE role = 'assistant') OVER (
                   PARTITION BY run_id, sample_id, attempt ORDER BY idx ROWS UNBOUNDED PRECEDING) AS n_assistant
        FROM {messages} {where}
    ),
    assistant_turns AS (
        SELECT run_id, sample_id, attempt, turn,
               row_number() OVER (PARTITION BY run_id, sample_id, attempt ORDER BY turn) AS k
        FROM {turns} WHERE role = 'assistant' {also}
    )
    SELECT msg.run_id, msg.sample_id, msg.attempt, msg.idx, msg.role{carried},
           coalesce(a.turn, greatest(msg.n_assistant - 1, 0))::INTEGER AS turn
    FROM msg LEFT JOIN assistant_turns a
      ON a.run_id = msg.run_id AND a.sample_id = msg.sample_id AND a.attempt = msg.attempt
     AND a.k = greatest(msg.n_assistant, 1)
    """


def _messages_sql(runs_filter: str, role_filter: str = "") -> str:
    """Every message (of the roles ``role_filter`` keeps: a SQL condition on ``role``) with its turn and
    text; the text is read after the turns are known, of the kept messages only."""
    conds = " AND ".join(c for c in (runs_filter, role_filter) if c)
    where = f"WHERE {conds}" if conds else ""
    return f"""
    SELECT t.run_id, t.sample_id, t.attempt, t.idx, t.role, m.name, m.content, t.turn
    FROM ({_turns_sql(runs_filter)}) t
    JOIN (SELECT run_id, sample_id, attempt, idx, name, content FROM raw.messages {where}) m
      ON m.run_id = t.run_id AND m.sample_id = t.sample_id AND m.attempt = t.attempt AND m.idx = t.idx
    """


def _calls_sql(runs_filter: str) -> str:
    where = f"WHERE {runs_filter}" if runs_filter else ""
    return f"""
    SELECT run_id, sample_id, attempt, turn::INTEGER AS turn, 'tool_args' AS source, 'assistant' AS role, tool,
           seq::INTEGER AS pos, status, coalesce(args_json, '') AS text
    FROM raw.tool_calls {where}
    """


def _as_unit(messages: str) -> str:
    return f"""
    SELECT run_id, sample_id, attempt, turn,
           CASE WHEN role = 'tool' THEN 'tool_output' ELSE 'message' END AS source,
           role, CASE WHEN role = 'tool' THEN name END AS tool, idx::INTEGER AS pos, NULL::VARCHAR AS status,
           coalesce(content, '') AS text
    FROM ({messages})
    """


def units_sql(runs_filter: str = "") -> str:
    """SELECT of every unit of the raw tables (of the runs ``runs_filter`` names: a SQL condition on
    ``run_id``, e.g. ``run_id IN (SELECT run_id FROM x)``)."""
    return f"{_as_unit(_messages_sql(runs_filter))} UNION ALL {_calls_sql(runs_filter)}"


def stored_units_sql(runs_filter: str = "") -> str:
    """The units the index stores with their text: messages other than tool outputs, and calls' arguments."""
    return (f"{_as_unit(_messages_sql(runs_filter, NOT_TOOL))}"
            f" UNION ALL {_calls_sql(runs_filter)}")


def outputs_sql(runs_filter: str = "") -> str:
    """The tool outputs as units, with their text (kept apart from the other units, in the order of the
    messages: index.py)."""
    return _as_unit(_messages_sql(runs_filter, "role = 'tool'"))


def unit_keys_sql(runs_filter: str = "") -> str:
    """The units the index stores (:func:`stored_units_sql`) without their text: every column but
    ``text`` (the index numbers them by these, then reads the text of a few at a time: index.py)."""
    where = f"WHERE {runs_filter}" if runs_filter else ""
    return f"""
    SELECT run_id, sample_id, attempt, turn, 'message' AS source, role, NULL::VARCHAR AS tool,
           idx::INTEGER AS pos, NULL::VARCHAR AS status
    FROM ({_turns_sql(runs_filter)}) WHERE {NOT_TOOL}
    UNION ALL
    SELECT run_id, sample_id, attempt, turn::INTEGER AS turn, 'tool_args' AS source, 'assistant' AS role, tool,
           seq::INTEGER AS pos, status
    FROM raw.tool_calls {where}
    """


def output_keys_sql(runs_filter: str = "") -> str:
    """The tool outputs as units (:func:`outputs_sql`) without their text, nor their tool (the
    message's ``name``, read with the text)."""
    return f"""
    SELECT run_id, sample_id, attempt, turn, 'tool_output' AS source, role, NULL::VARCHAR AS tool,
           idx::INTEGER AS pos, NULL::VARCHAR AS status
    FROM ({_turns_sql(runs_filter)}) WHERE role = 'tool'
    """


def keyed_units_sql(keys: str, where: str, raw_filter: str, sources: tuple[str, ...] = SOURCES) -> str:
    """The units of ``keys`` (rows of :func:`unit_keys_sql` or :func:`output_keys_sql` with their
    ``uid``) of ``sources`` that satisfy ``where``, with their text (and a tool output's tool) read from
    the raw tables' rows that satisfy ``raw_filter``: the same rows as :func:`stored_units_sql` and
    :func:`outputs_sql` give, each with its ``uid``. The raw rows come first in each join: run with the
    join order kept (index.py), they are its probe side and the few keys its build side, so the texts
    are not copied into a hash table."""
    names = ", ".join(f"k.{name}" for name, _ in COLUMNS if name not in ("tool", "text"))
    parts = []
    if set(sources) - {"tool_args"}:
        parts.append(f"""
    SELECT {names}, CASE WHEN k.role = 'tool' THEN m.name END AS tool, coalesce(m.content, '') AS text, k.uid
    FROM (SELECT run_id, sample_id, attempt, idx, name, content FROM raw.messages WHERE {raw_filter}) m
    JOIN (SELECT * FROM {keys} WHERE source <> 'tool_args' AND {where}) k
      ON m.run_id = k.run_id AND m.sample_id = k.sample_id AND m.attempt = k.attempt AND m.idx = k.pos""")
    if "tool_args" in sources:
        parts.append(f"""
    SELECT {names}, k.tool, coalesce(c.args_json, '') AS text, k.uid
    FROM (SELECT run_id, sample_id, attempt, seq, args_json FROM raw.tool_calls WHERE {raw_filter}) c
    JOIN (SELECT * FROM {keys} WHERE source = 'tool_args' AND {where}) k
      ON c.run_id = k.run_id AND c.sample_id = k.sample_id AND c.attempt = k.attempt AND c.seq = k.pos""")
    return " UNION ALL ".join(parts)


def indexed_units_sql(schema: str, condition: str = "", candidates: str = "") -> str:
    """Every unit, read through the index in ``schema``: its two tables of units (tool outputs apart).
    With ``condition`` (SQL with ``{text}`` where the unit's text goes) only the units whose text
    satisfies it, tested in each table's scan; with ``candidates`` (a relation of ``uid``s) only
    those units are read: their ``uid`` is the scans' one filter, so the text of the others is not
    even decompressed (give no condition with it: DuckDB would test that in the scans, on every unit)."""
    names = ", ".join(name for name, _ in COLUMNS)
    where = f" WHERE {condition.format(text='text')}" if condition else ""
    if candidates:
        return " UNION ALL ".join(
            f"SELECT {names} FROM {schema}.{table} SEMI JOIN {candidates} c USING (uid){where}"
            for table in ("units", "outputs"))
    return " UNION ALL ".join(f"SELECT {names} FROM {schema}.{table}{where}" for table in ("units", "outputs"))
