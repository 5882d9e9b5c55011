"""Hostile sample ids in reports: item page names stay short and unique whatever the ids, and control
characters (NUL, ESC) never reach the HTML raw."""

from __future__ import annotations

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


@pytest.fixture(scope="module")
def long_id_db(built_warehouse, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the built warehouse whose every sample id is about 300 characters long."""
    dst = tmp_path_factory.mktemp("long_ids") / "wh.duckdb"
    shutil.copyfile(built_warehouse.db, dst)
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
        con.execute(f'UPDATE {schema}."{name}" SET sample_id = sample_id || ?', [LONG_TAIL])
    con.close()
    return dst


def test_compare_with_300_character_ids_writes_every_item_page(long_id_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "compare.html"
    res = CliRunner().invoke(main, ["compare", "--db", str(long_id_db), "--models", "verifier,balanced",
                                    "--out", str(out)])
    assert res.exit_code == 0, res.output
    pages = list((tmp_path / "compare_files" / "items").glob("*.html"))
    assert pages and all(len(p.name) <= MAX_ITEM_NAME + len(".html") for p in pages)
    assert LONG_TAIL in out.read_text()  # the ids are shown whole; only the file names are cut
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left behind
