"""The word index: which units hold which words, so that a search for a literal reads only those units
(docs/search.md#word-index).

A unit's words are the runs of its lowercased text between spaces, tabs, line breaks and the commonest
punctuation (``.,:;"``: :data:`SEPARATORS`); other characters belong to words (``error's``, ``é``,
``{x}``). The index stores, in schema ``search``:

- ``vocab``: every word seen (``token``), the number of units holding it (``n_units``) and whether
  it is ``common``;
- ``postings``: (``token``, ``uid``) for every unit holding a word that is not common.

A word held by more than :data:`COMMON_SHARE` of the units becomes common: its postings are dropped,
since a filter that keeps that many units would save little. The one invariant search relies on:
every unit holding a word that is not common has its posting. A word only ever becomes common, never
back, so the invariant survives incremental updates.

A search for a literal (plain text, or the parts a regular expression requires: :func:`regex_literals`)
cuts it into pieces (:func:`pieces`: runs of printable ASCII characters between separators, three
characters or more). A piece lies
inside one word of every unit that contains it, so the units holding a word that contains the piece
are a superset of the units that match; when no such word is common, search tests its text
criterion on those units only (:func:`candidates`), with exactly the same result as the full scan. A
query with no usable piece, or whose pieces all lie in common words, scans every unit as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import duckdb

#: A word held by more than this share of the units is common (not posted): 1 in 50.
COMMON_SHARE = 1 / 50
#: Below this many units no word is called common (every word is posted).
MIN_UNITS_FOR_COMMON = 2_000
#: One unit in this many is read to guess, before posting a batch, which of its words are common.
SAMPLE_EVERY = 16
#: Pieces shorter than this are not looked up (too many words contain them).
MIN_PIECE = 3
#: The characters between words (replacing a few characters is much cheaper than translating many).
SEPARATORS = " \t\n\r.,:;\""

#: What ends a piece: a separator, or any character that is not printable ASCII (whose case folding
#: could differ between lowercasing and RE2: the pieces are looked up in lowercased words).
_SPLIT = re.compile("[^\x21-\x7e]|[" + re.escape(SEPARATORS) + "]")


def tokens_sql(relation: str) -> str:
    """SELECT (uid, token) of the words of the units in ``relation`` (columns ``uid`` and ``text``)."""
    spaced = "lower(text)"
    for ch in SEPARATORS[1:]:
        spaced = f"replace({spaced}, {_sql_char(ch)}, ' ')"
    return (f"SELECT uid, token FROM (SELECT uid, unnest(string_split({spaced}, ' ')) AS token FROM {relation}) "
            f"WHERE token <> ''")


def _sql_char(ch: str) -> str:
    return f"chr({ord(ch)})" if not ch.isprintable() else "'" + ch.replace("'", "''") + "'"


def pieces(literal: str) -> list[str]:
    """The parts of ``literal`` a word index can look up: its runs of printable ASCII characters between
    separators (any other character ends a run too), :data:`MIN_PIECE` or longer, longest first. Each
    lies inside one word of any text that contains the literal, whatever the case of either."""
    found = [p for p in _SPLIT.split(literal) if len(p) >= MIN_PIECE]
    return sorted(set(found), key=lambda p: (-len(p), p))


def regex_literals(pattern: str) -> list[str]:
    """Strings every match of the RE2 ``pattern`` contains (a conservative answer: possibly none).

    The pattern is read by Python's parser of regular expressions, whose syntax RE2's mostly shares;
    where the two could read a pattern differently (POSIX classes ``[[:alpha:]]``, ``\\Q...\\E``,
    ``\\p{..}``, ``\\C``, ``(?U)``), the pattern either does not parse in Python or is refused here, and
    no literal is claimed. Only literals outside alternatives, optional parts and classes count."""
    if "[:" in pattern or ":]" in pattern:
        return []
    try:
        from re import _parser as sre_parse  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_parse  # type: ignore[no-redef]
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError, TypeError):
        return []
    out: list[str] = []
    _walk(list(parsed), out, sre_parse)
    return [s for s in out if s]


def _walk(items: list[tuple[Any, Any]], out: list[str], sp: Any) -> None:
    c = sp  # opcode constants live in the parser module
    buf: list[str] = []

    def flush() -> None:
        if buf:
            out.append("".join(buf))
            buf.clear()

    for op, av in items:
        if op is c.LITERAL:
            buf.append(chr(av))
            continue
        flush()
        if op is c.SUBPATTERN:
            _walk(list(av[-1]), out, sp)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)) and av[0] >= 1:
            _walk(list(av[2]), out, sp)
        elif op is getattr(c, "ATOMIC_GROUP", None):
            _walk(list(av), out, sp)
        # anything else (classes, alternatives, anchors, optional parts, backreferences) requires no literal
    flush()


def query_pieces(text: str, regex: bool) -> list[str]:
    """The pieces of a search's text criterion to look up (none: scan every unit)."""
    literals = regex_literals(text) if regex else [text]
    return sorted({p for lit in literals for p in pieces(lit)}, key=lambda p: (-len(p), p))


def _word_matches(regex: bool) -> str:
    """SQL: a vocabulary word contains the piece (``?``): case-insensitively by RE2 for a regular
    expression (whose matches RE2's case folding decides), lowercased otherwise (as plain search is)."""
    return "regexp_matches(token, ?)" if regex else "contains(token, lower(?))"


def _piece_param(piece: str, regex: bool) -> str:
    return "(?i)" + re.escape(piece) if regex else piece


def candidates(con: duckdb.DuckDBPyConnection, schema: str, text: str, regex: bool, table: str) -> bool:
    """Create temp table ``table`` (``uid``) of the units that may match the text criterion; False (and
    no table) when the word index cannot narrow it (no usable piece, or a piece inside a common word)."""
    looked = query_pieces(text, regex)
    if not looked:
        return False
    sets = []
    params: list[Any] = []
    for piece in looked:
        rows = con.execute(f"SELECT bool_or(common), list(token) FILTER (WHERE NOT common) FROM {schema}.vocab "
                           f"WHERE {_word_matches(regex)}", [_piece_param(piece, regex)]).fetchall()
        common, words = rows[0]
        if common:
            continue
        sets.append(f"SELECT uid FROM {schema}.postings WHERE token IN (SELECT unnest(?::VARCHAR[]))")
        params.append(list(words or []))
    if not sets:
        return False
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS " + " INTERSECT ".join(sets), params)
    return True


@contextmanager
def join_order_kept(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """DuckDB plans joins as written while the block runs: the right side of each join is its build
    side (the hash table). Its estimates of the rows a split into words gives are far off, and it
    once chose the words of 7,500 units (millions of rows) over the common words (a few thousand) to
    build on, which cost several times the rest of the query. The connection's setting is restored after
    (after an error, where the transaction still allows it)."""
    was = con.execute("SELECT current_setting('disabled_optimizers')").fetchall()[0][0] or ""
    off = [o for o in was.split(",") if o.strip()]
    con.execute(f"SET disabled_optimizers = '{','.join([*off, 'join_order', 'build_side_probe_side'])}'")
    try:
        yield
    except BaseException:
        try:  # a failed statement aborts the transaction, which refuses even a SET: the error raised counts
            con.execute(f"SET disabled_optimizers = '{was}'")
        except duckdb.Error:
            pass
        raise
    con.execute(f"SET disabled_optimizers = '{was}'")


def create(con: duckdb.DuckDBPyConnection, schema: str) -> None:
    con.execute(f"CREATE TABLE IF NOT EXISTS {schema}.vocab (token VARCHAR NOT NULL, n_units BIGINT NOT NULL, "
                f"common BOOLEAN NOT NULL)")
    con.execute(f"CREATE TABLE IF NOT EXISTS {schema}.postings (token VARCHAR NOT NULL, uid BIGINT NOT NULL)")


def forget(con: duckdb.DuckDBPyConnection, schema: str, uids: str) -> None:
    """Drop the postings of the units in ``uids`` (a relation of ``uid``), and their counts."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE __words_gone AS SELECT token, count(*) AS n FROM {schema}.postings "
                f"WHERE uid IN (SELECT uid FROM {uids}) GROUP BY token")
    con.execute(f"UPDATE {schema}.vocab v SET n_units = v.n_units - g.n FROM __words_gone g WHERE v.token = g.token")
    con.execute(f"DELETE FROM {schema}.postings WHERE uid IN (SELECT uid FROM {uids})")
    con.execute("DROP TABLE __words_gone")


def post(con: duckdb.DuckDBPyConnection, schema: str, units: str, n_units: int, total_units: int) -> int:
    """Post the words of the ``n_units`` new units in ``units`` (a relation of ``uid`` and ``text``), the
    index then holding ``total_units``; return the postings written. The same as :func:`guess_common`
    on the units a sample keeps (``uid % SAMPLE_EVERY = 0``), :func:`collect` on all of them (in parts
    or at once) and :func:`finish`: the index builds a large batch so (index.py). Here the units are
    grouped by text once for both, and the guess splits each distinct sampled text once: a word's
    sampled units are the sum, over the distinct texts holding it, of the sampled units holding each
    (every unit holds one text, so each sampled unit counts once per word, as when its own text is
    split)."""
    if n_units == 0:
        return 0
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE __words_texts AS
        SELECT row_number() OVER () AS uid, text, uids, n_sampled FROM (
            SELECT text, list(uid) AS uids, count(*) FILTER (WHERE uid % {SAMPLE_EVERY} = 0) AS n_sampled
            FROM {units} GROUP BY text)""")
    try:
        n_sample = int(con.execute("SELECT coalesce(sum(n_sampled), 0) FROM __words_texts").fetchall()[0][0])
        split = f"SELECT DISTINCT uid, token FROM ({tokens_sql('__words_texts')})"
        if guesses(n_sample, total_units):
            # the sampled texts' words, kept for the collection below (which splits only the other texts)
            sampled = "(SELECT uid, text FROM __words_texts WHERE n_sampled > 0)"
            con.execute(f"CREATE OR REPLACE TEMP TABLE __words_sampled AS SELECT DISTINCT uid, token "
                        f"FROM ({tokens_sql(sampled)})")
            with join_order_kept(con):  # the sampled texts' counts (few rows) are the join's build side
                _mark_common(con, schema, f"""
                    SELECT s.token FROM __words_sampled s
                    JOIN (SELECT uid, n_sampled FROM __words_texts WHERE n_sampled > 0) x ON x.uid = s.uid
                    GROUP BY s.token HAVING sum(x.n_sampled) > {COMMON_SHARE} * {n_sample}""")
            rest = "(SELECT uid, text FROM __words_texts WHERE n_sampled = 0)"
            split = f"SELECT DISTINCT uid, token FROM ({tokens_sql(rest)}) UNION ALL SELECT uid, token FROM __words_sampled"
        start(con)
        _insert_new_words(con, schema, split, distinct=False)
    finally:
        con.execute("DROP TABLE IF EXISTS __words_texts")
        con.execute("DROP TABLE IF EXISTS __words_sampled")
    return finish(con, schema, total_units)


def guesses(n_sample: int, total_units: int) -> bool:
    """Whether :func:`guess_common` guesses from a sample of ``n_sample`` units, the index then holding
    ``total_units`` (a small sample or index guesses nothing)."""
    return n_sample * SAMPLE_EVERY >= MIN_UNITS_FOR_COMMON and total_units >= MIN_UNITS_FOR_COMMON


def guess_common(con: duckdb.DuckDBPyConnection, schema: str, sample: str, n_sample: int, total_units: int) -> None:
    """Before a batch is posted: a guess from ``sample`` (``uid``, ``text``: the ``n_sample`` units of the
    batch whose ``uid % SAMPLE_EVERY = 0``) of its common words: those in more than the common share of
    the sample's units become common (their postings go)."""
    if not guesses(n_sample, total_units):
        return
    _mark_common(con, schema, f"SELECT token FROM (SELECT DISTINCT uid, token FROM ({tokens_sql(sample)})) "
                              f"GROUP BY token HAVING count(*) > {COMMON_SHARE} * {n_sample}")


def _mark_common(con: duckdb.DuckDBPyConnection, schema: str, guessed: str) -> None:
    """Make the words ``guessed`` (a SELECT of ``token``) common: in the vocabulary (added with no
    units if new) and without postings. Only the words not common yet are looked at: a common word
    has no postings, so the postings (which grow with the index: an import streamed in groups guesses
    once per group) are scanned only when a word becomes common."""
    con.execute(f"CREATE OR REPLACE TEMP TABLE __words_common AS {guessed} "
                f"EXCEPT SELECT token FROM {schema}.vocab WHERE common")
    try:
        if con.execute("SELECT count(*) FROM __words_common").fetchall()[0][0]:
            con.execute(f"UPDATE {schema}.vocab SET common = true WHERE NOT common "
                        f"AND token IN (SELECT token FROM __words_common)")
            con.execute(f"INSERT INTO {schema}.vocab SELECT token, 0, true FROM __words_common "
                        f"WHERE token NOT IN (SELECT token FROM {schema}.vocab)")
            con.execute(f"DELETE FROM {schema}.postings WHERE token IN (SELECT token FROM __words_common)")
    finally:
        con.execute("DROP TABLE IF EXISTS __words_common")


def start(con: duckdb.DuckDBPyConnection) -> None:
    """Begin a batch's words (:func:`collect`), after :func:`guess_common`."""
    con.execute("CREATE OR REPLACE TEMP TABLE __words_new (token VARCHAR, uid BIGINT)")


def collect(con: duckdb.DuckDBPyConnection, schema: str, units: str) -> None:
    """Add the words of ``units`` (``uid``, ``text``) that are not common, once per unit, to the batch's
    words (temp table ``__words_new``, posted by :func:`finish`). Units often repeat a text (a system
    prompt, a tool's answer to the same call in every model's run), so each distinct text is split
    into words once and its words are given to every unit holding it; the common words (most of a
    text's words) are dropped by an anti join before the rest is made distinct, which then sorts few rows."""
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE __words_texts AS
        SELECT row_number() OVER () AS uid, text, uids FROM (SELECT text, list(uid) AS uids FROM {units} GROUP BY text)""")
    try:
        _insert_new_words(con, schema, tokens_sql("__words_texts"), distinct=True)
    finally:
        con.execute("DROP TABLE __words_texts")


def _insert_new_words(con: duckdb.DuckDBPyConnection, schema: str, words: str, *, distinct: bool) -> None:
    """Add to ``__words_new`` the words of ``words`` (a SELECT of ``uid``, ``token`` over the distinct texts
    of ``__words_texts``) that are not common, each given to every unit holding its text; ``distinct``:
    ``words`` may repeat a pair, made distinct after the common words are dropped."""
    with join_order_kept(con):  # the common words are the anti join's build side, the texts the join's
        con.execute(f"""
            INSERT INTO __words_new
            SELECT w.token, unnest(x.uids) AS uid FROM (
                SELECT {'DISTINCT ' if distinct else ''}t.token, t.uid FROM ({words}) t
                ANTI JOIN (SELECT token FROM {schema}.vocab WHERE common) c ON c.token = t.token) w
            JOIN __words_texts x ON x.uid = w.uid""")


def finish(con: duckdb.DuckDBPyConnection, schema: str, total_units: int) -> int:
    """Post the batch's words (:func:`collect`), the index then holding ``total_units``: their postings,
    their counts in the vocabulary, and the words now held by more than the common share of all units
    become common (their postings go). Returns the postings written."""
    try:
        written = int(con.execute("SELECT count(*) FROM __words_new").fetchall()[0][0])
        con.execute(f"INSERT INTO {schema}.postings SELECT token, uid FROM __words_new ORDER BY token, uid")
        con.execute("CREATE OR REPLACE TEMP TABLE __words_n AS SELECT token, count(*) AS n FROM __words_new GROUP BY token")
        con.execute(f"UPDATE {schema}.vocab v SET n_units = v.n_units + w.n FROM __words_n w WHERE v.token = w.token")
        con.execute(f"INSERT INTO {schema}.vocab SELECT token, n, false FROM __words_n "
                    f"WHERE token NOT IN (SELECT token FROM {schema}.vocab)")
        # the words now held by more than the common share of all units become common (and their postings go)
        if total_units >= MIN_UNITS_FOR_COMMON:
            _mark_common(con, schema, f"SELECT token FROM {schema}.vocab "
                                      f"WHERE NOT common AND n_units > {COMMON_SHARE} * {total_units}")
    finally:
        con.execute("DROP TABLE IF EXISTS __words_new")
        con.execute("DROP TABLE IF EXISTS __words_n")
    return written
