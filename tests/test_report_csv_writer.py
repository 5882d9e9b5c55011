"""The reports' one CSV writer (values.csv_document) shows control characters as control pictures in
every text cell, whichever caller built the row: the paper's tables (any value type, not only text
values) and ``agenthop-report sql --format csv``."""

from __future__ import annotations

import csv
import io

from agenthop.reports.paper.export import to_csv
from agenthop.reports.paper.table import Column, Table
from agenthop.reports.values import csv_document


class _Id:
    """A value that is not a str but prints with a NUL (as an id object from a driver might)."""

    def __str__(self) -> str:
        return "st_1\x00x"


def test_the_writer_pictures_every_text_cell() -> None:
    assert csv_document([["a\x00b", "x\x1by", 3, None], ["=c\x7f", "tab\tand\nline", 1.5, ""]]) == \
        "a\u2400b,x\u241by,3,\n=c\u2421,\"tab\tand\nline\",1.5,\n"


def test_a_paper_table_cell_of_any_type_reaches_the_file_pictured() -> None:
    table = Table("t", "Table T", "t", "paper-t", [Column("sample_id", "text", "Item"), Column("n", "int", "n")],
                  [{"sample_id": _Id(), "n": 2}, {"sample_id": "st_2\x00", "n": 3}])
    text = to_csv(table)
    assert "\x00" not in text
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["sample_id"] for r in rows] == ["st_1\u2400x", "st_2\u2400"] and [r["n"] for r in rows] == ["2", "3"]
