"""Hostile sample ids in reports: item page names stay short and unique whatever the ids, and control
characters (NUL, ESC) never reach the HTML raw."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from markupsafe import Markup

from agenthop.reports.cli import main
from agenthop.reports.render import environment, visible_controls
from agenthop.reports.site import MAX_ITEM_NAME, Site

LONG_TAIL = "_" + "y" * 290  # every id becomes about 300 characters, all of them file-name safe


def test_item_page_names_are_bounded_and_unique(tmp_path: Path) -> None:
    site = Site(tmp_path / "compare.html")
    ids = ["st_" + "x" * 300, "st_" + "x" * 299 + "z", "Case_ID", "case_id", "a/b", "a?b", "nul\x00id", "plain_1"]
    names = [site.item_path(s).name for s in ids]
    assert all(len(n) <= MAX_ITEM_NAME + len(".html") for n in names)
    assert len({n.lower() for n in names}) == len(ids)  # unique, even on a case-insensitive file system
    assert names[-1] == "plain_1.html" and names[2] == "Case_ID.html"
    # a safe id spelled like another id's hashed name does not take its page
    hashed = site.item_path("a/b").stem
    assert site.item_path(hashed) != site.item_path("a/b")
    assert all(site.item_path(s) == site.item_path(s) for s in ids)  # stable within a site
    single = Site(tmp_path / "one.html", single_file=True)
    assert single.item_href("Case_ID") != single.item_href("case_id")


def test_control_characters_are_shown_not_written_raw() -> None:
    assert visible_controls("a\x00b\x1b[31m\x7f") == "a\u2400b\u241b[31m\u2421"
    assert visible_controls("tab\tnew\nline") == "tab\tnew\nline"
    assert visible_controls(Markup("<b>\x00</b>")) == Markup("<b>\x00</b>")  # markup is ours, left alone
    html = environment().from_string("<p>{{ v }}</p><p title=\"{{ v }}\"></p>").render(v="id\x00<x>")
    assert "\x00" not in html and "id\u2400&lt;x&gt;" in html


def _append_to_ids(src: Path, dst: Path, tail: str) -> Path:
    """A copy of the warehouse at `src` whose every sample id ends in `tail` (views made tables first)."""
    shutil.copyfile(src, dst)
    con = duckdb.connect(str(dst))
    rels = con.execute("SELECT table_schema, table_name, table_type FROM information_schema.tables "
                       "WHERE table_schema IN ('main', 'raw')").fetchall()
    for schema, name, kind in rels:
        cols = {c[0] for c in con.execute("SELECT column_name FROM information_schema.columns "
                                          "WHERE table_schema = ? AND table_name = ?", [schema, name]).fetchall()}
        if "sample_id" not in cols:
            continue
        if kind == "VIEW":
            con.execute(f'CREATE TABLE {schema}."__t_{name}" AS SELECT * FROM {schema}."{name}"')
            con.execute(f'DROP VIEW {schema}."{name}" CASCADE')
            con.execute(f'ALTER TABLE {schema}."__t_{name}" RENAME TO "{name}"')
        con.execute(f'UPDATE {schema}."{name}" SET sample_id = sample_id || ?', [tail])
    con.close()
    return dst


@pytest.fixture(scope="module")
def long_id_db(built_warehouse, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the built warehouse whose every sample id is about 300 characters long."""
    return _append_to_ids(built_warehouse.db, tmp_path_factory.mktemp("long_ids") / "wh.duckdb", LONG_TAIL)


NUL_TAIL = "\x00x"  # every id ends in a NUL and one more character


def test_a_nul_in_an_id_reaches_no_paper_file_raw(built_warehouse, tmp_path: Path) -> None:
    """The paper's CSV files show a NUL in an id the way its page does (the control picture U+2400),
    in every file that lists ids; no file of the report holds a raw control character."""
    db = _append_to_ids(built_warehouse.db, tmp_path / "nul.duckdb", NUL_TAIL)
    out = tmp_path / "paper"
    res = CliRunner().invoke(main, ["paper", "--db", str(db), "--out", str(out)])
    assert res.exit_code == 0, res.output
    files = [p for p in out.rglob("*") if p.is_file()]
    raw = [p.name for p in files if b"\x00" in p.read_bytes()]
    assert not raw, f"raw NUL in {raw}"
    shown = visible_controls(NUL_TAIL)
    assert shown == "\u2400x"
    with_ids = {}
    for key in ("figure04_difficulty", "reliability_items"):
        rows = list(csv.DictReader(io.StringIO((out / "tables" / f"{key}.csv").read_text(encoding="utf-8"))))
        assert rows and all(r["sample_id"].endswith(shown) for r in rows), key
        with_ids[key] = {r["sample_id"] for r in rows}
    html = (out / "index.html").read_text(encoding="utf-8")
    # the page links the hardest and easiest items under the same spelling the CSV gives them
    linked = [s for s in with_ids["figure04_difficulty"] if s in html]
    assert len(linked) >= 10


def test_compare_with_300_character_ids_writes_every_item_page(long_id_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "compare.html"
    res = CliRunner().invoke(main, ["compare", "--db", str(long_id_db), "--models", "verifier,balanced",
                                    "--out", str(out)])
    assert res.exit_code == 0, res.output
    pages = list((tmp_path / "compare_files" / "items").glob("*.html"))
    assert pages and all(len(p.name) <= MAX_ITEM_NAME + len(".html") for p in pages)
    assert LONG_TAIL in out.read_text()  # the ids are shown whole; only the file names are cut
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left behind
