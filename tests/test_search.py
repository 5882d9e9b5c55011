"""Transcript search (ingest/transcripts/search.py, `agenthop-report search`) on hand-built transcripts
(tests/search_fixtures.py): every expected match below is worked out by reading that file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from agenthop.ingest.core import run_ingest
from agenthop.ingest.transcripts import index, words
from agenthop.ingest.transcripts.units import COLUMNS, outputs_sql, stored_units_sql
from agenthop.ingest.transcripts.search import (
    MATCH_KEYS,
    SUMMARY_KEYS,
    SearchError,
    TranscriptQuery,
    find_matches,
    matching_attempts,
)
from ingest_fixtures import write_release
from search_fixtures import SYSTEM, TRANSCRIPTS, USER, messages_of, shared_warehouse, write_runs


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three hand-built runs, ingested and dbt-built (the metric and item-group filters read marts)."""
    return shared_warehouse(tmp_path_factory, "search")


def search(db: Path, **kw: Any):  # type: ignore[no-untyped-def]
    con = duckdb.connect(str(db), read_only=True)
    try:
        return find_matches(con, TranscriptQuery(**kw))
    finally:
        con.close()


def keys(result: Any) -> list[tuple[Any, ...]]:
    return [(m.run_id, m.sample_id, m.turn, m.source, m.snippet[m.start:m.end]) for m in result.matches]


def summary(result: Any) -> dict[str, tuple[int, int]]:
    return {s.run_id: (s.n_items, s.n_items_matched) for s in result.summary}


def test_plain_text_is_case_insensitive_by_default(wh: Path) -> None:
    r = search(wh, text="timeout")
    assert keys(r) == [
        ("run-a", "st_0001", 0, "message", "Timeout"),
        ("run-a", "st_0002", 0, "message", "timeout"),
        ("run-a", "st_0002", 0, "tool_output", "TIMEOUT"),
        ("run-b", "st_0001", 1, "message", "timeout"),
        ("run-c", "st_0002", 0, "message", "timeout"),  # one match per message: its first occurrence
    ]
    assert r.n_matches == 5 and not r.truncated
    assert summary(r) == {"run-a": (3, 2), "run-b": (3, 1), "run-c": (3, 1)}
    first = r.matches[0]
    # "I will read the Results section of the Timeout paper.": short, so the snippet is the whole text
    assert (first.snippet, first.start, first.end) == (TRANSCRIPTS[("run-a", "st_0001")]["a0"], 39, 46)
    assert (first.role, first.tool, first.model, first.benchmark, first.attempt) == ("assistant", None, "m1", "agenthop", 0)
    assert r.matches[2].tool == "read_section" and r.matches[2].role == "tool"


def test_case_sensitive_and_unicode_offsets(wh: Path) -> None:
    assert keys(search(wh, text="Timeout", case_sensitive=True)) == [("run-a", "st_0001", 0, "message", "Timeout")]
    assert keys(search(wh, text="TimeOut", case_sensitive=True)) == [("run-c", "st_0002", 0, "message", "TimeOut")]
    # "Größe und ÄRGER: ...": offsets count characters (code points), not bytes
    r = search(wh, text="ärger")
    assert [(m.start, m.end, m.snippet[m.start:m.end]) for m in r.matches] == [(10, 15, "ÄRGER")]
    assert keys(search(wh, text="größe")) == [("run-b", "st_0001", 0, "message", "Größe"),
                                             ("run-b", "st_0001", 0, "tool_output", "Größe")]


def test_regex(wh: Path) -> None:
    r = search(wh, text=r"time\s?out\b", regex=True, case_sensitive=True)
    assert keys(r) == [("run-a", "st_0002", 0, "message", "timeout"), ("run-b", "st_0001", 1, "message", "timeout"),
                       ("run-c", "st_0002", 0, "message", "timeout")]
    # case-insensitive regex; the match reported is the regex's first match, not an earlier copy of its text
    r = search(wh, text=r"\bT[a-z]+out", regex=True)
    assert [m.snippet[m.start:m.end] for m in r.matches] == ["Timeout", "timeout", "TIMEOUT", "timeout", "timeout"]
    r = search(wh, text=r"\d+\.", regex=True, run="run-b")
    assert keys(r) == [("run-b", "mt_0001", 0, "tool_output", "42.")]
    with pytest.raises(SearchError, match=r"^text: the regex 'x\(' does not compile"):
        search(wh, text="x(", regex=True)


def test_role_filter(wh: Path) -> None:
    assert keys(search(wh, text="timeout", role="tool")) == [("run-a", "st_0002", 0, "tool_output", "TIMEOUT")]
    assert len(search(wh, text="timeout", role="assistant").matches) == 4
    r = search(wh, text="careful research", role="system")
    assert r.n_matches == 9 and {m.turn for m in r.matches} == {0}  # every attempt's system prompt, turn 0
    assert search(wh, text="careful research", role="user").n_matches == 0


def test_tool_args_and_status(wh: Path) -> None:
    # read_section calls: run-a 1+2+1, run-b 1+3+1, run-c 1+1+1
    r = search(wh, tool="read_section")
    assert r.n_matches == 12 and {m.source for m in r.matches} == {"tool_args"}
    r = search(wh, status="tool_error")
    assert [(m.run_id, m.sample_id, m.pos, m.tool) for m in r.matches] == [("run-a", "st_0002", 0, "read_section")]
    r = search(wh, tool_args='"intro"')  # case-insensitive regex over the arguments' JSON
    assert [(m.run_id, m.sample_id, m.pos) for m in r.matches] == [
        ("run-a", "st_0002", 0), ("run-a", "st_0002", 1), ("run-b", "st_0002", 0), ("run-b", "st_0002", 1),
        ("run-b", "st_0002", 2)]
    assert {m.snippet[m.start:m.end] for m in r.matches} == {'"Intro"'}
    r = search(wh, tool="read_section", status="section_not_found")
    assert [(m.run_id, m.sample_id, m.turn) for m in r.matches] == [("run-a", "mt_0001", 1)]
    # with a text, the call options narrow the units searched: "P4" in arguments of list_sections calls
    assert keys(search(wh, text="P4", tool="list_sections")) == [("run-a", "mt_0001", 0, "tool_args", "P4")]


def test_sequence(wh: Path) -> None:
    r = search(wh, sequence="list_sections>read_section")
    # the default calls (run-a st_0001, run-b st_0001 and mt_0001, run-c x3) and run-a mt_0001's 2nd and 3rd calls
    assert sorted((m.run_id, m.sample_id, m.pos) for m in r.matches) == [
        ("run-a", "mt_0001", 1), ("run-a", "st_0001", 0), ("run-b", "mt_0001", 0), ("run-b", "st_0001", 0),
        ("run-c", "mt_0001", 0), ("run-c", "st_0001", 0), ("run-c", "st_0002", 0)]
    assert r.matches[0].snippet == "list_sections > read_section"
    r = search(wh, sequence="list_sections>list_sections>read_section")
    assert [(m.run_id, m.sample_id, m.pos) for m in r.matches] == [("run-a", "mt_0001", 0)]
    r = search(wh, sequence="read_section>read_section")  # overlapping places each count
    assert [(m.run_id, m.sample_id, m.pos) for m in r.matches] == [
        ("run-a", "st_0002", 0), ("run-b", "st_0002", 0), ("run-b", "st_0002", 1)]


def test_repeat(wh: Path) -> None:
    # run-a st_0002: the same read_section twice (one failed: every call counts); run-b st_0002: three times
    r = search(wh, repeat=2)
    assert [(m.run_id, m.sample_id, m.tool, m.pos) for m in r.matches] == [
        ("run-a", "st_0002", "read_section", 0), ("run-b", "st_0002", "read_section", 0)]
    assert r.matches[1].snippet == 'read_section {"paper_id": "P2", "section": "Intro"} (3 calls)'
    assert [(m.run_id, m.sample_id) for m in search(wh, repeat=3).matches] == [("run-b", "st_0002")]
    assert search(wh, repeat=2, tool="list_sections").n_matches == 0  # P3 and P4 differ
    with pytest.raises(SearchError, match="^repeat: 1 is not 2 or more"):
        search(wh, repeat=1)


def test_criteria_combine_per_attempt(wh: Path) -> None:
    # only run-a st_0002 has both a "timeout" and a repeated call; its matches of both are listed
    r = search(wh, text="timeout", repeat=2)
    assert [(m.sample_id, m.source, m.kind) for m in r.matches] == [
        ("st_0002", "message", "text"), ("st_0002", "tool_args", "repeat"), ("st_0002", "tool_output", "text")]
    assert summary(r) == {"run-a": (3, 1), "run-b": (3, 0), "run-c": (3, 0)}
    con = duckdb.connect(str(wh), read_only=True)
    try:
        hits = matching_attempts(con, TranscriptQuery(text="timeout", repeat=2))
    finally:
        con.close()
    assert [(h.run_id, h.sample_id, h.attempt, h.n_matches, h.turns, h.calls) for h in hits] == [
        ("run-a", "st_0002", 0, 3, (0,), (0,))]


def test_filters(wh: Path) -> None:
    r = search(wh, text="timeout", model="m1")
    assert r.n_matches == 4 and summary(r) == {"run-a": (3, 2), "run-c": (3, 1)}
    assert keys(search(wh, text="timeout", epoch=2)) == [("run-c", "st_0002", 0, "message", "timeout")]
    assert summary(search(wh, text="timeout", run="run-b")) == {"run-b": (3, 1)}
    assert search(wh, text="timeout", benchmark="inspect:other").summary == []
    # terminated by max_turns: run-a mt_0001 (1 read_section call) and run-b st_0002 (3)
    r = search(wh, tool="read_section", terminated_by="max_turns")
    assert r.n_matches == 4 and summary(r) == {"run-a": (1, 1), "run-b": (1, 1)}
    # AgentHop's metric `correct`: right answers are run-a/b/c st_0001 and run-c st_0002
    r = search(wh, text="timeout", metric="correct", value=1)
    assert [(m.run_id, m.sample_id) for m in r.matches] == [("run-a", "st_0001"), ("run-b", "st_0001"),
                                                            ("run-c", "st_0002")]
    assert summary(r) == {"run-a": (1, 1), "run-b": (1, 1), "run-c": (2, 1)}
    assert summary(search(wh, text="timeout", metric="correct", max=0.5)) == {"run-a": (2, 1), "run-b": (2, 0),
                                                                               "run-c": (1, 0)}
    # the item group of AgentHop is the cell: st_0002 is single-target at depth 2
    r = search(wh, text="timeout", item_group="st_d2")
    assert [(m.run_id, m.sample_id) for m in r.matches] == [("run-a", "st_0002"), ("run-a", "st_0002"),
                                                            ("run-c", "st_0002")]
    with pytest.raises(SearchError, match="^metric: 'correct' needs value"):
        search(wh, text="x", metric="correct")


def test_limit_keeps_the_summary_whole(wh: Path) -> None:
    r = search(wh, text="timeout", limit=2)
    assert keys(r) == [("run-a", "st_0001", 0, "message", "Timeout"), ("run-a", "st_0002", 0, "message", "timeout")]
    assert r.n_matches == 5 and r.truncated
    assert summary(r) == {"run-a": (3, 2), "run-b": (3, 1), "run-c": (3, 1)}
    assert [s.share for s in r.summary] == [2 / 3, 1 / 3, 1 / 3]


def _units(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    """The index's units without their numbers (which a rebuild may give in another order)."""
    cols = ", ".join(name for name, _ in COLUMNS)
    return con.execute(f"SELECT {cols} FROM search.units ORDER BY ALL").fetchall() \
        + con.execute(f"SELECT 'output', {cols} FROM search.outputs ORDER BY ALL").fetchall()


def _postings(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    """The word index's postings, each with its unit's place (not its number)."""
    return con.execute("""
        SELECT p.token, u.run_id, u.sample_id, u.attempt, u.source, u.pos FROM search.postings p
        JOIN (SELECT uid, run_id, sample_id, attempt, source, pos FROM search.units UNION ALL
              SELECT uid, run_id, sample_id, attempt, source, pos FROM search.outputs) u USING (uid) ORDER BY ALL
    """).fetchall()


def test_brute_force_equals_search(wh: Path) -> None:
    """Every unit of the fixtures, searched in Python, gives the same matches."""
    units = []
    for (run_id, sid), t in TRANSCRIPTS.items():
        for m in messages_of(run_id, sid, t):
            units.append((run_id, sid, "tool_output" if m["role"] == "tool" else "message", m["idx"], m["content"]))
        for seq, c in enumerate(t["calls"]):
            units.append((run_id, sid, "tool_args", seq, c[2]))
    assert {m[4] for m in units if m[2] == "message"} >= {SYSTEM, USER}
    queries = [("timeout", False, False), ("Results", False, True), ("e", False, False), ("é", False, False),
               (r"\bthe\b", True, False), (r"^S", True, True), (r"[0-9]+\.", True, False), ("&", False, False),
               ('": "', False, False)]
    for text, regex, case in queries:
        expected = []
        for run_id, sid, source, pos, body in units:
            if regex:
                found = re.search(text, body, 0 if case else re.IGNORECASE)
                span = found.span() if found else None
            else:
                at = (body if case else body.lower()).find(text if case else text.lower())
                span = (at, at + len(text)) if at >= 0 else None
            if span:
                expected.append((run_id, sid, source, pos, body[span[0]:span[1]]))
        got = search(wh, text=text, regex=regex, case_sensitive=case, limit=None)
        assert sorted((m.run_id, m.sample_id, m.source, m.pos, m.snippet[m.start:m.end]) for m in got.matches) \
            == sorted(expected), text


#: Queries for the word index's check: (text, regex, case_sensitive), regular expressions with and without
#: a literal of three characters or more, case-insensitive ones, anchors, alternatives, non-ASCII text.
WORD_INDEX_QUERIES = [
    ("timeout", False, False), ("TIMEOUT", False, True), ("Results section", False, False), ("größe", False, False),
    ("ÄRGER", False, True), ("& more", False, False), ('": "Results"', False, False), ("no such words", False, False),
    ("ime", False, False), ("e", False, False),
    (r"time\s*out", True, False), (r"^Sections: (Intro|Method)$", True, True), (r"^Intro", True, False),
    (r"rises by [0-9]+ points\.$", True, False), (r"(?i)answer is [AB]", True, True), (r"Answer[: ]+B", True, True),
    (r"[0-9]+\.", True, False), (r"\bthe\b", True, False), (r"(Timeout|retry)", True, False), (r"x*", True, False),
    (r"Gr(ö|oe)ße", True, False), (r"TimeOut\.$", True, True), (r"zzz+", True, False), (r"section.{1,3}Results", True, False),
]


def _word_index_agrees(db: Path) -> int:
    """Every query of WORD_INDEX_QUERIES gives the same result with the word index as with a scan of every
    unit; returns how many of them the word index narrowed."""
    con = duckdb.connect(str(db), read_only=True)
    narrowed = 0
    try:
        for text, regex, case in WORD_INDEX_QUERIES:
            for role in ("any", "tool", "assistant"):
                q = TranscriptQuery(text=text, regex=regex, case_sensitive=case, role=role, limit=None)
                assert find_matches(con, q) == find_matches(con, q, use_word_index=False), (text, role)
            if index.text_candidates(con, text, regex, "__check"):
                narrowed += 1
                con.execute("DROP TABLE __check")
    finally:
        con.close()
    return narrowed


def test_regex_literals_and_pieces() -> None:
    """What a regular expression requires, as pieces the word index looks up (nothing when unsure)."""
    assert words.regex_literals(r"error\s+40[0-9]") == ["error", "40"]
    assert words.query_pieces(r"error\s+40[0-9]", True) == ["error"]
    assert words.query_pieces(r"^abc(def|ghi)jkl$", True) == ["abc", "jkl"]
    assert words.query_pieces(r"(foo)+bar?baz", True) == ["baz", "foo"]  # 'r?' is optional: 'ba' and 'baz'
    assert words.query_pieces(r"[[:alpha:]]abc", True) == []  # a POSIX class Python's parser would misread
    assert words.query_pieces(r"(a|b)c*", True) == [] and words.query_pieces("x(", True) == []
    assert words.query_pieces("Größe und ÄRGER: the", False) == ["RGER", "the", "und"]  # ASCII runs only
    assert words.query_pieces("not found", False) == ["found", "not"]
    assert words.query_pieces('{"paper_id": "p12"}', False) == ["paper_id", "p12"]  # "{" and "}" are too short


def test_word_index_gives_the_same_matches_as_a_full_scan(wh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Search with the word index finds exactly what a scan of every unit finds; so it does once words are
    common (their postings dropped), after a rebuild that makes a third of the words common."""
    assert _word_index_agrees(wh) >= 12
    db = tmp_path / "common.duckdb"
    shutil.copyfile(wh, db)
    monkeypatch.setattr(words, "MIN_UNITS_FOR_COMMON", 1)
    monkeypatch.setattr(words, "COMMON_SHARE", 0.05)
    monkeypatch.setattr(words, "SAMPLE_EVERY", 1)
    con = duckdb.connect(str(db))
    try:
        con.execute("BEGIN TRANSACTION")
        index.rebuild_index(con)
        con.execute("COMMIT")
        n_common, n_words = con.execute("SELECT count(*) FILTER (WHERE common), count(*) FROM search.vocab").fetchall()[0]
        assert 0 < n_common < n_words
        assert con.execute("SELECT count(*) FROM search.postings JOIN search.vocab USING (token) WHERE common"
                           ).fetchall() == [(0,)]
    finally:
        con.close()
    assert _word_index_agrees(db) >= 4


def test_json_csv_and_table(wh: Path) -> None:
    from agenthop.reports.cli import main

    runner = CliRunner()
    res = runner.invoke(main, ["search", "timeout", "--limit", "1", "--format", "json", "--db", str(wh)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert list(data) == ["matches", "summary", "n_matches", "truncated"]
    assert [list(m) for m in data["matches"]] == [list(MATCH_KEYS)]
    assert all(list(s) == list(SUMMARY_KEYS) for s in data["summary"])
    assert data["n_matches"] == 5 and data["truncated"] is True
    assert data["matches"][0] == {"run_id": "run-a", "model": "m1", "benchmark": "agenthop", "sample_id": "st_0001",
                                  "attempt": 0, "turn": 0, "source": "message", "role": "assistant", "tool": None,
                                  "snippet": TRANSCRIPTS[("run-a", "st_0001")]["a0"], "start": 39, "end": 46}
    res = runner.invoke(main, ["search", "--sequence", "read_section>read_section", "--format", "csv", "--db", str(wh)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0] == ",".join(MATCH_KEYS) and len(lines) == 4
    res = runner.invoke(main, ["search", "TIMEOUT", "--case-sensitive", "--db", str(wh)])
    assert res.exit_code == 0, res.output
    assert "[TIMEOUT] while reading" in res.output and "1 match" in res.output
    res = runner.invoke(main, ["search", "x(", "--regex", "--db", str(wh)])
    assert res.exit_code == 2 and "text: the regex 'x(' does not compile" in res.output


@pytest.mark.parametrize("collect_bytes", [10**9, 2_000])
def test_index_built_in_chunks_is_the_index_of_whole_batches(wh: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             collect_bytes: int) -> None:
    """The index numbers a batch's units by their columns alone, then reads their text, stores them and
    collects their words a chunk at a time (index.CHUNK_UNITS): the same rows, numbers, stored order,
    postings and vocabulary as numbering, storing and posting the whole batch in one statement each
    (here with chunks of a few units, spanning runs, and with words made common by the guess; the words
    collected for the whole batch at once, or for groups of a few chunks)."""
    db = tmp_path / "chunks.duckdb"
    shutil.copyfile(wh, db)
    monkeypatch.setattr(words, "MIN_UNITS_FOR_COMMON", 1)
    monkeypatch.setattr(words, "COMMON_SHARE", 0.2)
    monkeypatch.setattr(words, "SAMPLE_EVERY", 2)
    monkeypatch.setattr(index, "CHUNK_UNITS", 5)
    monkeypatch.setattr(index, "COLLECT_BYTES", collect_bytes)
    groups: list[str] = []
    collect = words.collect
    monkeypatch.setattr(words, "collect", lambda con, schema, units: groups.append(units) or collect(con, schema, units))
    chunks: list[Any] = []
    cut = index._chunks
    monkeypatch.setattr(index, "_chunks", lambda con: chunks.extend(cut(con)) or chunks)
    names = ", ".join(name for name, _ in COLUMNS)
    con = duckdb.connect(str(db))
    try:
        con.execute("BEGIN TRANSACTION")
        index.rebuild_index(con)
        con.execute("COMMIT")
        assert len(chunks) > 8 and any(len(runs) > 1 for _, _, _, runs, _ in chunks)
        assert (len(groups) == 1) == (collect_bytes > 10**6), groups
        assert con.execute("SELECT current_setting('disabled_optimizers')").fetchall() == [("",)]  # restored
        con.execute("CREATE SCHEMA ref")
        con.execute(f"CREATE TABLE ref.units AS SELECT {names}, row_number() OVER (ORDER BY {index.CLUSTER_ORDER}) "
                    f"AS uid FROM ({stored_units_sql()}) ORDER BY uid")
        n = con.execute("SELECT count(*) FROM ref.units").fetchall()[0][0]
        con.execute(f"CREATE TABLE ref.outputs AS SELECT {names}, {n} + row_number() OVER (ORDER BY {index.OUTPUT_ORDER}) "
                    f"AS uid FROM ({outputs_sql()}) ORDER BY uid")
        total = n + con.execute("SELECT count(*) FROM ref.outputs").fetchall()[0][0]
        words.create(con, "ref")
        words.post(con, "ref", "(SELECT uid, text FROM ref.units UNION ALL SELECT uid, text FROM ref.outputs)", total, total)
        for table in ("units", "outputs"):  # in the order stored
            assert con.execute(f"SELECT {names}, uid FROM search.{table}").fetchall() == \
                con.execute(f"SELECT {names}, uid FROM ref.{table}").fetchall()
        for table in ("postings", "vocab"):
            assert con.execute(f"SELECT * FROM search.{table} ORDER BY ALL").fetchall() == \
                con.execute(f"SELECT * FROM ref.{table} ORDER BY ALL").fetchall()
        assert con.execute("SELECT count(*) FILTER (WHERE common) FROM search.vocab").fetchall()[0][0] > 0
    finally:
        con.close()


def test_index_is_incremental(wh: Path, tmp_path: Path) -> None:
    """A second ingest adds the new run's units and replaces a changed run's; --reindex rebuilds the same rows."""
    db = tmp_path / "w.duckdb"
    shutil.copyfile(wh, db)
    con = duckdb.connect(str(db), read_only=True)
    assert index.is_current(con)
    before = _units(con)
    con.close()
    sha = write_release(tmp_path / "bench")
    changed = {k: v for k, v in TRANSCRIPTS.items() if k[0] == "run-c"}
    changed[("run-c", "st_0002")] = dict(changed[("run-c", "st_0002")], a0="No more of that word.")
    write_runs(tmp_path / "runs", sha, ("run-c",), changed)
    new = {("run-d", sid): dict(t, a0="A fresh timeout appears.") for (rid, sid), t in TRANSCRIPTS.items()
           if rid == "run-a"}
    write_runs(tmp_path / "runs", sha, ("run-d",), new)
    run_ingest(db, runs=[tmp_path / "runs"], accept_dq=True)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert index.is_current(con)
        versions = dict(con.execute("SELECT run_id, version FROM search.indexed_runs").fetchall())
        assert versions == {"run-a": 1, "run-b": 1, "run-c": 2, "run-d": 2}  # the loads that wrote them
        after = _units(con)
        assert [u for u in after if u[0] in ("run-a", "run-b")] == [u for u in before if u[0] in ("run-a", "run-b")]
        # per item: four messages (system, user, two assistant) and three calls; the three tool outputs are
        # in search.outputs
        assert len([u for u in after if u[0] == "run-d"]) == 3 * 7
        assert con.execute("SELECT count(*) FROM search.outputs WHERE run_id = 'run-d'").fetchall() == [(9,)]
        r = find_matches(con, TranscriptQuery(text="timeout"))
        assert summary(r) == {"run-a": (3, 2), "run-b": (3, 1), "run-c": (3, 0), "run-d": (3, 3)}
        # the word index follows: the new run's words are posted, the replaced run's old words are gone
        assert index.text_candidates(con, "fresh", False, "__c")
        assert summary(find_matches(con, TranscriptQuery(text="fresh")))["run-d"] == (3, 3)
        assert index.text_candidates(con, "more of that", False, "__c")
        assert summary(find_matches(con, TranscriptQuery(text="more of that")))["run-c"] == (3, 1)
        postings = _postings(con)
    finally:
        con.close()
    assert _word_index_agrees(db) >= 12
    from agenthop.ingest.cli import main as ingest_main

    res = CliRunner().invoke(ingest_main, ["--db", str(db), "--reindex"])
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert index.is_current(con) and _units(con) == after
        assert _postings(con) == postings  # the incremental word index is the one a rebuild makes
    finally:
        con.close()
    res = CliRunner().invoke(ingest_main, ["--db", str(db), "--delete-run", "run-d"])
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert index.is_current(con)
        assert con.execute("SELECT count(*) FROM search.units WHERE run_id = 'run-d'").fetchall() == [(0,)]
        assert _postings(con) == [p for p in postings if p[1] != "run-d"]
        assert con.execute("SELECT n_units FROM search.vocab WHERE token = 'fresh'").fetchall() == [(0,)]
    finally:
        con.close()


def test_search_without_index_reads_the_raw_tables(wh: Path, tmp_path: Path) -> None:
    """A warehouse of an earlier version (no index) searches the raw tables, with the same answers."""
    db = tmp_path / "old.duckdb"
    shutil.copyfile(wh, db)
    con = duckdb.connect(str(db))
    index.drop_index(con)
    con.close()
    for kw in ({"text": "timeout"}, {"sequence": "list_sections>read_section"}, {"repeat": 2},
               {"tool": "read_section", "terminated_by": "max_turns"}):
        assert search(db, **kw) == search(wh, **kw)


@pytest.mark.browser
def test_html_page_in_chromium(wh: Path, tmp_path: Path) -> None:
    """The HTML form: summary and matches, the match marked, hostile text shown as text, each match linking to
    an item page that shows the matched text; offline, no sideways scroll at 1,024 px."""
    from agenthop.reports.cli import main
    from tests.test_report_browser import ARTIFACTS, _browser_binary

    out = tmp_path / "search.html"
    res = CliRunner().invoke(main, ["search", "<script>|timeout", "--regex", "--format", "html", "--out", str(out),
                                    "--db", str(wh)])
    assert res.exit_code == 0, res.output
    exe = _browser_binary()
    if exe is None:
        pytest.skip("!!! NO CHROMIUM BINARY FOUND: the search page's browser test is SKIPPED !!!")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1024, "height": 900})
        errors: list[str] = []
        blocked: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: errors.append("dialog: " + d.message))
        page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                   else (blocked.append(r.request.url), r.abort()))
        page.goto(out.resolve().as_uri())
        rows = page.evaluate("""() => Array.from(document.querySelectorAll('table.matches tbody tr')).map(tr => ({
            item: tr.cells[0].innerText, href: tr.cells[0].querySelector('a').getAttribute('href'),
            mark: tr.querySelector('mark').textContent, turn: tr.cells[3].innerText}))""")
        summary = page.evaluate("""() => Array.from(document.querySelectorAll('table.summary tbody tr')).map(tr =>
            Array.from(tr.cells).map(c => c.innerText))""")
        scroll = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "search-1024.png"), full_page=True)
        page.goto((out.parent / rows[0]["href"].split("#")[0]).resolve().as_uri())
        item_text = page.inner_text("body")
        page.screenshot(path=str(ARTIFACTS / "search-item-1024.png"), full_page=False)
        browser.close()
    assert not errors and not blocked, (errors, blocked)
    assert scroll[0] <= scroll[1], scroll
    # the five "timeout" units and run-b st_0001's tool output with the script tag, in run, item, turn order
    assert [(r["item"], r["mark"], r["turn"]) for r in rows] == [
        ("st_0001", "Timeout", "1"), ("st_0002", "timeout", "1"), ("st_0002", "TIMEOUT", "1"),
        ("st_0001", "<script>", "1"), ("st_0001", "timeout", "2"), ("st_0002", "timeout", "1")]
    assert all((out.parent / r["href"].split("#")[0]).exists() for r in rows)
    assert summary == [["run-a", "m1", "3", "2", "66.7%"], ["run-c", "m1", "3", "1", "33.3%"],
                       ["run-b", "m2", "3", "1", "33.3%"]]
    assert "Timeout paper" in item_text  # the item page shows the matched message


def test_a_warehouse_search_cannot_read_is_one_line_error() -> None:
    con = duckdb.connect()
    con.execute("CREATE SCHEMA raw")
    for table in ("trajectories", "turns", "tool_calls", "messages", "ingest_log"):
        con.execute(f"CREATE TABLE raw.{table} (x INTEGER)")
    with pytest.raises(SearchError, match=r"^the search could not run on this warehouse .*Binder Error") as err:
        find_matches(con, TranscriptQuery(text="x"))
    assert "\n" not in str(err.value)
    empty = duckdb.connect()
    with pytest.raises(SearchError, match="no transcripts loaded"):
        find_matches(empty, TranscriptQuery(text="x"))


def test_the_docs_examples_run_on_the_demo(messages_warehouse, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Every example at the top of docs/search.md runs on the end-to-end warehouse with recorded messages."""
    import shlex

    from agenthop.reports.cli import main
    from conftest import REPO

    text = (REPO / "docs" / "search.md").read_text(encoding="utf-8")
    block = text.split("```\n", 2)[1]
    lines = [ln.split("  #")[0].strip() for ln in block.splitlines() if ln.startswith("agenthop-report search")]
    assert len(lines) == 6
    runner = CliRunner()
    found = 0
    for line in lines:
        args = shlex.split(line)[2:]
        if "--out" in args:
            k = args.index("--out") + 1
            args[k] = str(tmp_path / args[k])
        res = runner.invoke(main, ["search", *args, "--db", str(messages_warehouse.db)])
        assert res.exit_code == 0, (line, res.output)
        if "--format" in args and args[args.index("--format") + 1] == "json":
            data = json.loads((tmp_path / "repeats.json").read_text())
            assert list(data) == ["matches", "summary", "n_matches", "truncated"]
            found += data["n_matches"] > 0
        elif "--format" not in args:
            found += not res.output.startswith("0 matches")
    assert (tmp_path / "search.html").exists() and (tmp_path / "search_files").is_dir()
    assert found >= 3  # the demo's transcripts have such calls and texts


def test_units_sharing_a_text_each_get_its_words() -> None:
    """words.post splits each distinct text once and gives its words to every unit holding it: three
    units, two with the same text, posted by hand (no word is common below MIN_UNITS_FOR_COMMON units)."""
    con = duckdb.connect()
    con.execute("CREATE SCHEMA s")
    words.create(con, "s")
    con.execute("CREATE TABLE u AS SELECT * FROM (VALUES (1, 'Error 404: not found'), (2, 'error 500'), "
                "(3, 'Error 404: not found')) t(uid, text)")
    assert words.post(con, "s", "u", 3, 3) == 10  # units 1 and 3: error, 404, not, found; unit 2: error, 500
    assert con.execute("SELECT token, list(uid ORDER BY uid) FROM s.postings GROUP BY token ORDER BY token").fetchall() == [
        ("404", [1, 3]), ("500", [2]), ("error", [1, 2, 3]), ("found", [1, 3]), ("not", [1, 3])]
    assert con.execute("SELECT token, n_units, common FROM s.vocab ORDER BY token").fetchall() == [
        ("404", 2, False), ("500", 1, False), ("error", 3, False), ("found", 2, False), ("not", 2, False)]


def test_post_guesses_common_words_by_units_not_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    """words.post splits each distinct sampled text once for its guess of the common words, but counts
    the sampled units holding a word: 'alpha' is in one text held by two of six sampled units (2 > 0.3 x 6,
    common; one text would not be). The vocabulary and postings are those of guess_common on the sampled
    units, collect and finish."""
    monkeypatch.setattr(words, "MIN_UNITS_FOR_COMMON", 1)
    monkeypatch.setattr(words, "COMMON_SHARE", 0.3)
    monkeypatch.setattr(words, "SAMPLE_EVERY", 2)
    texts = {1: "alpha one", 2: "alpha one", 3: "beta", 4: "alpha one", 5: "gamma two", 6: "beta two",
             7: "delta", 8: "gamma", 9: "alpha one", 10: "delta two", 11: "beta", 12: "epsilon"}
    con = duckdb.connect()
    con.execute("CREATE TABLE u (uid BIGINT, text VARCHAR)")
    con.executemany("INSERT INTO u VALUES (?, ?)", list(texts.items()))
    tables = {}
    for schema in ("s", "ref"):
        con.execute(f"CREATE SCHEMA {schema}")
        words.create(con, schema)
    posted = words.post(con, "s", "u", 12, 12)
    words.guess_common(con, "ref", "(SELECT * FROM u WHERE uid % 2 = 0)", 6, 12)
    words.start(con)
    words.collect(con, "ref", "u")
    assert words.finish(con, "ref", 12) == posted
    for schema in ("s", "ref"):
        tables[schema] = [con.execute(f"SELECT * FROM {schema}.{t} ORDER BY ALL").fetchall() for t in ("vocab", "postings")]
    assert tables["s"] == tables["ref"]
    assert ("alpha", 0, True) in tables["s"][0] and not any(t == "alpha" for t, _ in tables["s"][1])


def test_join_order_kept_restores_the_setting_and_keeps_the_error() -> None:
    """words.join_order_kept plans joins as written inside the block only; after a failed statement (the
    transaction aborted, so even SET is refused) the statement's own error is the one raised."""
    con = duckdb.connect()
    con.execute("SET disabled_optimizers = 'top_n'")
    with words.join_order_kept(con):
        inside = con.execute("SELECT current_setting('disabled_optimizers')").fetchall()[0][0]
    assert {"join_order", "build_side_probe_side", "top_n"} <= set(inside.split(","))
    assert con.execute("SELECT current_setting('disabled_optimizers')").fetchall() == [("top_n",)]
    con.execute("CREATE TABLE t (a INTEGER PRIMARY KEY)")
    con.execute("BEGIN TRANSACTION")
    with pytest.raises(duckdb.ConstraintException):
        with words.join_order_kept(con):
            con.execute("INSERT INTO t VALUES (1), (1)")
    con.execute("ROLLBACK")
