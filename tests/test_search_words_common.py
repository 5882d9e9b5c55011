"""The word index's common words (ingest/transcripts/words.py): a guess or a count that makes no word
common leaves the postings unread (an import streamed in groups guesses once per group, and the
postings grow with the index), and one that does drops that word's postings as before."""

from __future__ import annotations

from typing import Any

import duckdb

from agenthop.ingest.transcripts import words


class Recorded:
    """A connection that records the statements run on it."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con, self.sql = con, []

    def execute(self, sql: str, *args: Any) -> duckdb.DuckDBPyConnection:
        self.sql.append(" ".join(sql.split()))
        return self.con.execute(sql, *args)


def _index(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE SCHEMA s")
    words.create(con, "s")
    con.execute("INSERT INTO s.vocab VALUES ('the', 0, true), ('rare', 1, false), ('often', 1, false)")
    con.execute("INSERT INTO s.postings VALUES ('rare', 1), ('often', 1)")
    # 2,000 sampled units: every one holds 'the' (common already), one in ten holds 'often'
    con.execute("CREATE TABLE sample AS SELECT i AS uid, CASE WHEN i % 10 = 0 THEN 'the often' ELSE 'the' END AS text "
                "FROM range(2000) t(i)")


def _deletes(rec: Recorded) -> list[str]:
    return [s for s in rec.sql if s.startswith("DELETE FROM s.postings")]


def test_a_guess_of_no_new_common_word_does_not_touch_the_postings() -> None:
    con = duckdb.connect()
    _index(con)
    con.execute("DELETE FROM sample WHERE text <> 'the'")  # only the common word left
    rec = Recorded(con)
    words.guess_common(rec, "s", "sample", 1800, 100_000)  # type: ignore[arg-type]
    assert _deletes(rec) == []
    assert con.execute("SELECT token, common FROM s.vocab ORDER BY token").fetchall() == [
        ("often", False), ("rare", False), ("the", True)]
    assert con.execute("SELECT count(*) FROM s.postings").fetchall() == [(2,)]


def test_a_guess_of_a_new_common_word_drops_its_postings() -> None:
    con = duckdb.connect()
    _index(con)
    rec = Recorded(con)
    words.guess_common(rec, "s", "sample", 2000, 100_000)  # type: ignore[arg-type]
    assert len(_deletes(rec)) == 1
    assert con.execute("SELECT token, common FROM s.vocab ORDER BY token").fetchall() == [
        ("often", True), ("rare", False), ("the", True)]
    assert con.execute("SELECT token FROM s.postings").fetchall() == [("rare",)]


def test_a_batch_that_makes_no_word_common_does_not_touch_the_postings() -> None:
    con = duckdb.connect()
    _index(con)
    words.start(con)
    con.execute("INSERT INTO __words_new VALUES ('rare', 2)")
    rec = Recorded(con)
    assert words.finish(rec, "s", 2_000) == 1  # type: ignore[arg-type]
    assert _deletes(rec) == []
    assert con.execute("SELECT token, uid FROM s.postings ORDER BY ALL").fetchall() == [
        ("often", 1), ("rare", 1), ("rare", 2)]
    words.start(con)
    con.execute("INSERT INTO __words_new SELECT 'rare', 3 + i FROM range(40) t(i)")  # 42 of 2,000 units: common
    rec = Recorded(con)
    words.finish(rec, "s", 2_000)  # type: ignore[arg-type]
    assert len(_deletes(rec)) == 1
    assert con.execute("SELECT token FROM s.postings").fetchall() == [("often",)]
