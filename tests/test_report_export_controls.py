"""Control characters in exported text: every text export shows them as the control pictures the pages
show (``values.control_pictures``), never raw. The paper's CSV and LaTeX tables, and ``agenthop-report
sql --format csv|table``; LaTeX spells the pictures in ASCII and stays a fragment pdflatex can typeset
(its special characters escaped, line breaks as spaces)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from agenthop.reports.cli import format_rows, main
from agenthop.reports.paper.export import latex_escape, to_csv, to_latex
from agenthop.reports.paper.table import Column, Table
from agenthop.reports.values import control_pictures

#: what a hostile answer or label may hold: NUL, ESC (a terminal colour sequence), BEL, DEL, a C1 control
HOSTILE = "ans\x00wer \x1b[31mred\x1b[0m \x07\x7f\x85"
#: a character no export may hold raw: C0 controls but tab, newline and CR, DEL, C1 controls
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _table() -> Table:
    cols = [Column("model", "text", "Model\x1b"), Column("answer", "text", "Answer"), Column("v", "rate", "v")]
    rows = [{"model": "m\x00one", "answer": HOSTILE, "v": 0.5},
            {"model": "[bracketed] first\ncell\r\n\nsecond paragraph", "answer": "-\x1bformula", "v": None}]
    return Table("hostile", "Table H", "Hostile \x00 title\nwith a line break", "paper-h", cols, rows)


def test_latex_spells_every_control_picture_in_ascii() -> None:
    """Each control character becomes its control picture (the one function), spelled in ASCII."""
    for code in [*range(0x20), 0x7F, 0x85, 0x9F]:
        ch = chr(code)
        out = latex_escape(ch)
        if ch in "\t":
            assert out == ch
        elif ch in "\r\n":
            assert out == " "
        else:
            assert control_pictures(ch) != ch
            assert out.isascii() and out.startswith(r"\texttt{[") and out.endswith("]}"), (code, out)
    assert latex_escape("\x00") == r"\texttt{[NUL]}" == latex_escape("\u2400")
    assert latex_escape("\x1b") == r"\texttt{[ESC]}"
    assert latex_escape("\x7f") == r"\texttt{[DEL]}"
    assert latex_escape("\x85") == r"\texttt{[?]}"


def test_tex_export_holds_no_raw_control_and_parses() -> None:
    walker = pytest.importorskip("pylatexenc.latexwalker")
    tex = to_latex(_table())
    assert not RAW_CONTROL.search(tex)
    assert tex.isascii()
    walker.LatexWalker(tex, tolerant_parsing=False).get_latex_nodes()
    assert r"m\texttt{[NUL]}one" in tex
    assert r"ans\texttt{[NUL]}wer \texttt{[ESC]}{[}31mred\texttt{[ESC]}{[}0m \texttt{[BEL]}\texttt{[DEL]}\texttt{[?]}" in tex
    assert r"Model\texttt{[ESC]}" in tex
    # the title's line break stays inside the comment line; a cell's blank line is no paragraph break
    comment = tex.splitlines()[0]
    assert comment.startswith("% ") and "with a line break" in comment
    assert r"{[}bracketed{]} first cell second paragraph" in tex
    assert "\n\n" not in tex
    # a row never starts with "[" (it would be the optional argument of the previous row's \\)
    assert not [ln for ln in tex.splitlines() if ln.lstrip().startswith("[")]


def test_latex_specials_are_still_escaped() -> None:
    assert latex_escape(r"a_b & c% $d #e {f} \g ~h ^i <j> [k]") == (
        r"a\_b \& c\% \$d \#e \{f\} \textbackslash{}g \textasciitilde{}h \textasciicircum{}i "
        r"\textless{}j\textgreater{} {[}k{]}")


def test_csv_export_shows_the_same_pictures() -> None:
    text = to_csv(_table())
    assert not RAW_CONTROL.search(text)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == ["model", "answer", "v"]
    assert rows[0]["answer"] == control_pictures(HOSTILE) == "ans\u2400wer \u241b[31mred\u241b[0m \u2407\u2421\ufffd"
    assert rows[1]["answer"] == "'-\u241bformula"  # still spreadsheet-safe


def test_sql_formats_show_control_pictures() -> None:
    names, rows = ["answer\x1b", "n"], [(HOSTILE, 1), (None, 2.5)]
    out = format_rows(names, rows, "csv")
    assert not RAW_CONTROL.search(out)
    parsed = list(csv.reader(io.StringIO(out)))
    assert parsed == [["answer\u241b", "n"], [control_pictures(HOSTILE), "1"], ["", "2.5"]]
    table = format_rows(names, rows, "table")
    assert not RAW_CONTROL.search(table)
    assert control_pictures(HOSTILE) in table and "answer\u241b" in table
    # JSON keeps the exact text: its control characters are escaped, never raw
    js = format_rows(names, rows, "json")
    assert not RAW_CONTROL.search(js)
    assert json.loads(js)[0]["answer\x1b"] == HOSTILE


def test_sql_command_csv_with_a_nul_and_esc_in_an_answer(tmp_path: Path) -> None:
    db = tmp_path / "wh.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE answers (sample_id VARCHAR, answer VARCHAR)")
    con.execute("INSERT INTO answers VALUES (?, ?), ('s2', 'plain')", ["s\x001", HOSTILE])
    con.close()
    for fmt in ("csv", "table"):
        res = CliRunner().invoke(main, ["sql", "--db", str(db), "--format", fmt,
                                        "SELECT sample_id, answer FROM answers ORDER BY sample_id DESC"])
        assert res.exit_code == 0, res.output
        assert not RAW_CONTROL.search(res.stdout), fmt
        assert control_pictures(HOSTILE) in res.stdout and "s\u24001" in res.stdout
    res = CliRunner().invoke(main, ["sql", "--db", str(db), "--format", "csv", "SELECT answer FROM answers"])
    assert list(csv.reader(io.StringIO(res.stdout)))[1] == [control_pictures(HOSTILE)]


def test_sql_csv_neutralises_cells_that_start_a_formula(tmp_path: Path) -> None:
    """CSV injection: a text cell beginning with = + - @ (tab, CR) would run as a formula in a spreadsheet, so
    `sql --format csv` writes it with a leading apostrophe, as the paper's CSV tables do; numbers, negative
    ones included (as numbers or as a text that is just a number), are written as they are, and the table
    and JSON formats keep the text unchanged."""
    db = tmp_path / "wh.duckdb"
    texts = ["=HYPERLINK(\"http://x\",\"y\")", "+1+2", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain", "a=b", "-3"]
    # "-3" as text (a number formatted in SQL) is just a number to a spreadsheet: left alone
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t (i INTEGER, s VARCHAR, x DOUBLE, d DECIMAL(5, 2), b BOOLEAN)")
    con.executemany("INSERT INTO t VALUES (?, ?, -0.25, -1.5, false)", [[i, s] for i, s in enumerate(texts)])
    con.close()
    query = "SELECT s, -i AS n, x, d, b, s AS \"=cmd\" FROM t ORDER BY i"
    res = CliRunner().invoke(main, ["sql", "--db", str(db), "--format", "csv", query])
    assert res.exit_code == 0, res.output
    rows = list(csv.reader(io.StringIO(res.stdout)))
    assert rows[0] == ["s", "n", "x", "d", "b", "'=cmd"]
    assert [r[0] for r in rows[1:]] == ["'=HYPERLINK(\"http://x\",\"y\")", "'+1+2", "'-2+3", "'@SUM(A1)", "'\tx",
                                        "'\rx", "plain", "a=b", "-3"]
    assert [r[1] for r in rows[1:]] == [str(-i) for i in range(len(texts))]  # numbers stay numbers, minus and all
    assert {(r[2], r[3], r[4]) for r in rows[1:]} == {("-0.25", "-1.5", "false")}
    assert [r[5] for r in rows[1:]] == [r[0] for r in rows[1:]]
    for fmt in ("table", "json"):
        out = CliRunner().invoke(main, ["sql", "--db", str(db), "--format", fmt, query]).stdout
        assert "'=HYPERLINK" not in out and "'-2+3" not in out and "-2+3" in out, fmt
    assert json.loads(CliRunner().invoke(main, ["sql", "--db", str(db), "--format", "json", query]).stdout)[0]["s"] == texts[0]


def _nested_result() -> tuple[list[str], list[tuple]]:
    con = duckdb.connect()
    cur = con.execute("""SELECT ['a', 'b'] AS l, {'k': 'v', 'n': 1.50::DECIMAL(4, 2)} AS s, MAP {'a': 1} AS m,
        INTERVAL '1 day 02:03:04.5' AS i, -INTERVAL 1 SECOND AS neg, DATE '2024-01-02' AS d,
        TIMESTAMP '2024-01-02 03:04:05' AS ts, TIME '03:04:05' AS t, [INTERVAL 3 HOUR] AS li,
        ['x', 'y']::VARCHAR[2] AS arr, from_hex('5c41aa') AS b, ['nan'::DOUBLE, 0.5] AS nan_list""")
    names, rows = [d[0] for d in cur.description], cur.fetchall()
    con.close()
    return names, rows


NESTED_TEXT = {"l": '["a", "b"]', "s": '{"k": "v", "n": 1.5}', "m": '{"a": 1}', "i": "P1DT2H3M4.5S", "neg": "-PT1S",
               "d": "2024-01-02", "ts": "2024-01-02T03:04:05", "t": "03:04:05", "li": '["PT3H"]', "arr": '["x", "y"]',
               "b": "\\x5CA\\xAA", "nan_list": "[null, 0.5]"}


def test_sql_prints_nested_values_as_json_and_intervals_in_iso_8601() -> None:
    """Lists, structs and maps print as the JSON text a user pastes into a tool (once Python reprs: ['a'],
    {'k': 'v'}), intervals as ISO 8601 durations (once "1 day, 2:03:04.500000"), dates and times ISO 8601,
    in the table and in CSV; JSON keeps them as JSON values and stays valid JSON (NaN is null)."""
    names, rows = _nested_result()
    parsed = list(csv.reader(io.StringIO(format_rows(names, rows, "csv"))))
    assert parsed[0] == names
    # CSV's formula guard applies after the conversion: a negative interval would start a formula
    assert dict(zip(names, parsed[1])) == {**NESTED_TEXT, "neg": "'-PT1S"}
    table = format_rows(names, rows, "table").splitlines()
    assert [c.strip() for c in table[2].split(" | ")] == [NESTED_TEXT[n] for n in names]
    for text in (table[2], *parsed[1]):
        assert "'a'" not in text and "timedelta" not in text and "day," not in text and "Decimal" not in text
    js = json.loads(format_rows(names, rows, "json"))[0]
    assert js == {"l": ["a", "b"], "s": {"k": "v", "n": 1.5}, "m": {"a": 1}, "i": "P1DT2H3M4.5S", "neg": "-PT1S",
                  "d": "2024-01-02", "ts": "2024-01-02T03:04:05", "t": "03:04:05", "li": ["PT3H"], "arr": ["x", "y"],
                  "b": "\\x5CA\\xAA", "nan_list": [None, 0.5]}


def test_sql_csv_guards_json_text_and_keeps_control_pictures(tmp_path: Path) -> None:
    db = tmp_path / "wh.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t (tags VARCHAR[], meta STRUCT(note VARCHAR))")
    con.execute("INSERT INTO t VALUES (['=cmd', ?], {'note': ?})", ["a\x1bb", "-1+1"])
    con.close()
    res = CliRunner().invoke(main, ["sql", "--db", str(db), "--format", "csv", "SELECT tags, meta, tags[1] AS first FROM t"])
    assert res.exit_code == 0, res.output
    row = list(csv.reader(io.StringIO(res.stdout)))[1]
    assert not RAW_CONTROL.search(res.stdout)
    # JSON text starts with [ or {: no formula; the element itself does, as a top-level cell
    assert row == ['["=cmd", "a\\u001bb"]', '{"note": "-1+1"}', "'=cmd"]
    assert json.loads(row[0]) == ["=cmd", "a\x1bb"]


def test_sql_prints_booleans_as_nested_values_do() -> None:
    """A top-level boolean once printed True/False in the table and CSV while the same value inside a list
    or struct printed true/false (JSON text): both are true/false now, as in DuckDB's own CLI; NULL stays
    NULL (table) and an empty cell (CSV); JSON keeps JSON booleans."""
    con = duckdb.connect()
    cur = con.execute("SELECT true AS t, false AS f, NULL::BOOLEAN AS n, [true, false] AS l, {'ok': true} AS s, "
                      "MAP {true: 1} AS m")
    names, rows = [d[0] for d in cur.description], cur.fetchall()
    con.close()
    expected = {"t": "true", "f": "false", "l": "[true, false]", "s": '{"ok": true}', "m": '{"true": 1}'}
    table = format_rows(names, rows, "table").splitlines()
    assert dict(zip(names, (c.strip() for c in table[2].split(" | ")))) == {**expected, "n": "NULL"}
    parsed = list(csv.reader(io.StringIO(format_rows(names, rows, "csv"))))
    assert dict(zip(names, parsed[1])) == {**expected, "n": ""}
    for text in (table[2], *parsed[1]):
        assert "True" not in text and "False" not in text
    assert json.loads(format_rows(names, rows, "json")) == [
        {"t": True, "f": False, "n": None, "l": [True, False], "s": {"ok": True}, "m": {"true": 1}}]
