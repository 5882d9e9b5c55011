"""The normalized-match judge and the T4 answer parser on hand-worked cases."""

from __future__ import annotations

import pytest

from agenthop.harness.benchmarks.sciexplore.judge import judge_task
from agenthop.harness.benchmarks.sciexplore.normalize import contains_phrase, matches, normalize, normalize_doi
from agenthop.harness.benchmarks.sciexplore.release import CitationGroup, Reference, Task
from agenthop.harness.benchmarks.sciexplore.tables import ParseFailure, Table, format_ok, parse_table


def test_normalize() -> None:
    assert normalize("  The  Ｐｒｏｔｅｉｎ-Kinase, an ENZYME!  ") == "protein kinase enzyme"  # NFKC, articles
    assert normalize("A") == "" and normalize(None) == ""
    assert normalize("theory of a thing") == "theory of thing"  # 'theory' is not the article 'the'
    assert normalize("ﬁnal\u00a0answer") == "final answer"  # ligature and no-break space
    assert contains_phrase("answer is acc 123 here", "acc 123")
    assert not contains_phrase("answer is acc 1234", "acc 123")  # whole words only
    assert not contains_phrase("anything", "")
    assert matches("It is ACC-123.", "acc 123") and not matches("", "x")
    assert normalize_doi("https://doi.org/10.1/AbC") == "10.1/abc" == normalize_doi("doi: 10.1/abc")


T1 = Task(id="t1", type="T1", domain="d", question="q", answer="ACC-123", aliases=("ACC123",), hops=2)


@pytest.mark.parametrize(
    ("status", "answer", "verdict"),
    [
        ("answered", "acc-123", "correct"),
        ("answered", "The identifier is ACC 123.", "correct"),  # whole-phrase containment
        ("answered", "ACC123", "correct"),  # alias
        ("answered", "ACC-1234", "incorrect"),  # not a whole phrase
        ("answered", "I could not find the answer.", "not_attempted"),
        ("answered", "Sorry, I don't know.", "not_attempted"),
        ("answered", "The value cannot be determined from the records.", "not_attempted"),
        ("answered", "Unable to determine; maybe ACC-123", "correct"),  # a matching hedge stays correct
        ("answered", "   ", "not_attempted"),
        ("answered", None, "not_attempted"),
        ("not_attempted", "ACC-123", "not_attempted"),  # the status wins
        ("error", "", "not_attempted"),
        ("error", "ACC-999", "incorrect"),
    ],
)
def test_exact_match(status: str, answer: str | None, verdict: str) -> None:
    [v] = judge_task(T1, status, answer)
    assert (v.unit, v.verdict) == ("answer", verdict)


def _ref(title: str, year: int | None = 2020, doi: str | None = None) -> Reference:
    return Reference(title=title, year=year, authors=(), venue=None, doi=doi)


T3 = Task(id="t3", type="T3", domain="d", question="q", paragraph="x [CITE_1] y [CITE_2]", groups=(
    CitationGroup("CITE_1", (_ref("Deep Nets for Proteins", 2019, "10.1/a"), _ref("The Other Paper", 2021))),
    CitationGroup("CITE_2", (_ref("Third", None),)),
))


def test_citations() -> None:
    answer = {
        "CITE_1": [
            {"title": "deep nets for proteins", "year": 2019},  # title match, year agrees -> correct
            {"title": "Deep Nets for Proteins", "year": 2019},  # same reference again -> incorrect
            {"doi": "https://doi.org/10.1/A"},  # DOI of gt 0, already used -> incorrect
            {"title": "Other Paper", "year": 2020},  # title matches gt 1, year disagrees -> incorrect
            "not an object",
        ],
        "[CITE_2]": [{"title": "Third", "year": 1999}],  # gt has no year: title alone decides -> correct
    }
    vs = judge_task(T3, "answered", answer)
    got = [(v.slot, v.ref_index, v.verdict) for v in vs]
    assert got == [
        ("CITE_1", 0, "correct"), ("CITE_1", 1, "incorrect"), ("CITE_1", 2, "incorrect"),
        ("CITE_1", 3, "incorrect"), ("CITE_1", 4, "incorrect"), ("CITE_2", 0, "correct"),
    ]
    # matched by DOI alone when no year is given
    [v] = judge_task(T3, "answered", {"1": [{"doi": "10.1/a", "title": "wrong title"}]})
    assert (v.slot, v.verdict) == ("CITE_1", "correct")
    assert judge_task(T3, "not_attempted", answer) == []
    assert judge_task(T3, "answered", "prose") == []


T4 = Task(id="t4", type="T4", domain="d", question="q", columns=("Material", "Gap (eV)", "System"),
          primary_key="Material", rows=({"Material": "Ka-lo", "Gap (eV)": "1.20", "System": "cubic"},
                                        {"Material": "Mira", "Gap (eV)": "3.4", "System": "hexagonal"},
                                        {"Material": "Zen", "Gap (eV)": "0.5", "System": "trigonal"}))

MARKDOWN = """Here is the table you asked for:

| material | System | Gap (eV) | Notes |
|:---|---|---:|---|
| KA LO | Cubic (Fm-3m) | 1.2 | extra |
| Mira | hexagonal | 3.4 |
| Mira | cubic | 9 | duplicate key: first row wins |
| Unknown | x | 1 | |

Sources: see above.
"""


def test_markdown_table_with_prose_is_parsed_and_judged() -> None:
    t = parse_table(MARKDOWN)
    assert isinstance(t, Table)
    assert t.columns == ("material", "System", "Gap (eV)", "Notes")
    assert t.rows[1] == {"material": "Mira", "System": "hexagonal", "Gap (eV)": "3.4", "Notes": ""}  # padded
    assert not format_ok(t, T4.columns)  # an extra column
    cells = {(v.row_key, v.column): v.verdict for v in judge_task(T4, "answered", MARKDOWN)}
    assert cells == {
        ("Ka-lo", "Material"): "correct",
        ("Ka-lo", "Gap (eV)"): "incorrect",  # '1 2' vs '1 20' after normalisation
        ("Ka-lo", "System"): "correct",  # 'cubic fm 3m' contains 'cubic'
        ("Mira", "Material"): "correct",
        ("Mira", "Gap (eV)"): "correct",
        ("Mira", "System"): "correct",
    }  # Zen is not matched: no units


def test_object_answer_and_missing_column() -> None:
    obj = {"columns": ["Material", "Gap (eV)"], "rows": [{"Material": "zen", "Gap (eV)": 0.5}]}
    t = parse_table(obj)
    assert isinstance(t, Table) and not format_ok(t, T4.columns)
    cells = {(v.row_key, v.column): (v.verdict, v.rationale) for v in judge_task(T4, "answered", obj)}
    assert cells == {("Zen", "Material"): ("correct", "matches"), ("Zen", "Gap (eV)"): ("correct", "matches"),
                     ("Zen", "System"): ("incorrect", "column missing")}
    ok = {"columns": ["system", "Material", "gap (ev)"], "rows": []}
    assert format_ok(parse_table(ok), T4.columns)  # order free, names normalised


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "empty answer"),
        (None, "empty answer"),
        ("I could not build the table.", "no Markdown table"),
        ("| a | b |\n| c | d |", "no header followed by a separator"),
        ({"rows": []}, "'columns' must be a non-empty list"),
        ({"columns": ["a"], "rows": [["x"]]}, "rows[0] is not an object"),
        ({"columns": ["a", "a"], "rows": []}, "repeats a name"),
        ("| a | a |\n|---|---|\n| 1 | 2 |", "repeats a column name"),
        (["a"], "Markdown text or an object"),
    ],
)
def test_unparsable_answers_record_a_reason(answer, reason: str) -> None:
    t = parse_table(answer)
    assert isinstance(t, ParseFailure) and reason in t.reason, t
    assert not format_ok(t, T4.columns)
    assert judge_task(T4, "answered", answer) == []  # no row matched, no cell correct


def test_t4_answer_of_an_error_or_not_attempted_matches_nothing() -> None:
    assert judge_task(T4, "error", MARKDOWN) == [] and judge_task(T4, "not_attempted", MARKDOWN) == []


def test_table_without_the_primary_key_matches_nothing() -> None:
    assert judge_task(T4, "answered", "| Gap (eV) | System |\n|---|---|\n| 1.20 | cubic |") == []
