"""`agenthop-report site`: the pair order, the model page's pure parts, imported runs' provenance in
the footer, the output folder rules, and the whole site of the end-to-end warehouse (AgentHop and
SciExplore, as `make demo` holds them) crawled in headless Chromium."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner

from agenthop.reports.cli import main
from agenthop.reports.core.model_page import median, rank, tool_behaviour
from agenthop.reports.core.runs import RunInfo
from agenthop.reports.render import Provenance, run_source
from agenthop.reports.site_build import MARKER, compare_command, ranked_pairs
from site_crawl import crawl, in_chromium, name_tag_problems

REPO = Path(__file__).resolve().parents[1]


# -- pure parts ------------------------------------------------------------------------------------------


def test_pairs_are_neighbours_in_the_ranking_first() -> None:
    assert ranked_pairs(["a", "b", "c", "d"]) == [("a", "b"), ("b", "c"), ("c", "d"), ("a", "c"), ("b", "d"),
                                                  ("a", "d")]
    assert ranked_pairs(["a"]) == [] and len(ranked_pairs(list("abcdef"))) == 15
    assert compare_command("x", "y", "inspect:t") == \
        "agenthop-report compare --models x,y --benchmark inspect:t --out compare.html"


def test_median_and_rank_by_hand() -> None:
    assert median([0.75, 0.625]) == 0.6875
    assert median([3.0, None, 1.0, 2.0]) == 2.0 and median([None]) is None
    assert rank(0.75, [0.75, 0.625, 0.8], "high") == 2  # one value above it
    assert rank(981.25, [981.25, 972.5], "low") == 2  # fewer tokens are better
    assert rank(0.5, [0.5, 0.5], "high") == 1  # ties share the better rank
    assert rank(1.75, [1.75], "") is None and rank(None, [1.0], "high") is None


def test_tool_behaviour_by_hand() -> None:
    usage = [{"run_id": "r1", "tool": "add", "n": 6, "n_failed": 1}, {"run_id": "r1", "tool": "lookup", "n": 1, "n_failed": 1},
             {"run_id": "r2", "tool": "add", "n": 6, "n_failed": 0}, {"run_id": "r3", "tool": "add", "n": 50, "n_failed": 50}]
    b = tool_behaviour(usage, ["r1", "r2"], 8)
    assert b["n_calls"] == 13 and b["calls_per_item"] == 13 / 8 and b["failed_share"] == 2 / 13
    assert b["top_tools"] == [{"tool": "add", "n": 12, "share": 12 / 13}, {"tool": "lookup", "n": 1, "share": 1 / 13}]
    assert tool_behaviour([], ["r1"], 0) == {"n_calls": 0, "calls_per_item": None, "failed_share": None, "top_tools": []}


def _run(run_id: str, **summary: object) -> RunInfo:
    return RunInfo(run_id=run_id, model="m", condition="", replicate=0, benchmark="inspect:t", summary=dict(summary))


def test_footer_provenance_of_imported_runs() -> None:
    imported = dict(source_packages_json=json.dumps({"inspect_ai": "0.3.75", "inspect_evals": "0.1"}),
                    task_version="2", task_args_json=json.dumps({"level": 1}), message_limit=50, max_turns=0,
                    max_total_tokens=3000, time_limit_s=None, working_limit_s=120.0)
    src = run_source(_run("a", **imported))
    assert src == {"benchmark": "inspect:t", "packages": "inspect_ai 0.3.75, inspect_evals 0.1", "task_version": "2",
                   "task_args": "level=1", "limits": "message limit 50, token limit 3,000, working limit 120 s"}
    # the harness's own runs, and runs loaded before the fields were kept (the columns absent), have none
    assert run_source(_run("h", max_turns=20, max_total_tokens=200_000, harness_version="0.1.0")) is None
    assert run_source(_run("old")) is None
    prov = Provenance.build(Path("w.duckdb"), [_run("a", **imported), _run("b", **imported), _run("h", max_turns=20)])
    assert [(s["run_ids"], s["limits"]) for s in prov.sources] == [
        (["a", "b"], "message limit 50, token limit 3,000, working limit 120 s")]


def test_item_data_of_one_item_by_hand() -> None:
    """The viewer's data of an item (reports/item_data.py): texts formatted as the item page prints them, each
    distinct text once in the file's table (the answer is the last message), a run without a trajectory None."""
    import zlib

    from agenthop.reports.item_data import Chunk, from_units, payload
    from agenthop.reports.trajectories import align

    a, b = _run("a"), _run("b")
    traj = [{"run_id": "a", "sample_id": "s1", "attempt": 0, "n_attempts": 1, "predicted_answer": "4", "is_correct": True,
             "score": 1.0, "terminated_by": "answer", "total_turns": 2, "total_tokens": 1200, "wall_time_s": 3.5}]
    calls = [{"run_id": "a", "sample_id": "s1", "turn": 0, "seq": 0, "tool": "calc", "args_json": '{"x":1}',
              "status": "ok", "error_type": None, "output_chars": 1}]
    msgs = [{"idx": i, "role": role, "name": None, "content": text}
            for i, (role, text) in enumerate([("system", "Be brief."), ("user", "2+2?\x1b"), ("assistant", "4")])]
    ctx = {"sample_id": "s1", "group": None, "header": None, "runs": [a, b], "aligned": align("s1", [a, b], traj, calls),
           "scores": [{"scorer": "match", "key": "value", "cells": [{"value_text": "C", "value_num": 1.0}, None]}],
           "messages": {"a": msgs, "b": []}}
    chunk = Chunk()
    item = payload(ctx, chunk)
    assert item == {
        "id": "s1", "group": None, "header": None,
        "sides": [{"ok": True, "meta": "score 1.000 · ended by answer · 2 turns · 1 call · 1,200 tokens · 3.5 s",
                   "answer": 2}, None],
        "scores": [["match", "value", [["C", "1"], None]]],
        "rows": [[1, [[[1, "calc", "ok", None, '{"x": 1}', "1 char"]], []]]],
        "msgs": [[[1, "system", None, 0], [2, "user", None, 1], [3, "assistant", None, 2]], []],
    }
    chunk.items["s1"] = item
    raw = chunk.script()
    assert raw.startswith(b"\xff\xfe")  # UTF-16 LE with its byte order mark
    text = raw.decode("utf-16")
    assert text.startswith('agenthopItemChunk("') and text.endswith(");\n")
    units, n = text[len('agenthopItemChunk("'):-len(");\n")].split('", ')
    data = json.loads(zlib.decompress(from_units(units, int(n))))
    assert data == {"strings": ["Be brief.", "2+2?\u241b", "4"], "items": {"s1": item}}  # ESC shown as ␛
    # an Inspect item's header: its input is the user's message, kept once in the table (index 1)
    ctx["header"] = type("Section", (), {"template": "inspect_item_header.html.j2", "title": "t",
                                         "context": {"input": "2+2?\x1b", "target": "4", "metadata": [("k", "v")]}})()
    assert payload(ctx, chunk)["header"] == {"title": "t", "input": 1, "target": "4", "metadata": [["k", "v"]]}
    assert chunk.strings == ["Be brief.", "2+2?\x1b", "4"]
    ctx["header"] = type("Section", (), {"template": "some_benchmark_header.html.j2", "title": "", "context": {}})()
    assert payload(ctx, Chunk()) is None  # a header the viewer cannot lay out: the page is written whole


def test_chunks_batched_by_hand() -> None:
    """A page's chunks in order, in batches of at most `limit` items; a larger chunk alone, empty ones left out."""
    from agenthop.reports.item_data import chunk_batches

    assert chunk_batches([3, 0, 2, 4, 1], 5) == [[0, 2], [3, 4]]  # 3 + 2, then 4 + 1
    assert chunk_batches([7, 1], 5) == [[0], [1]] and chunk_batches([0, 0], 5) == []
    assert chunk_batches([1, 1, 1], 1) == [[0], [1], [2]]


def test_batch_size_follows_the_text_measured_by_hand() -> None:
    """1,024 items until a batch is measured; then as many as 32 million characters hold at the longest text per
    item seen (at least 1,024, at most 16,384); the batches of a page take the limit as each starts."""
    from agenthop.reports import item_data
    from agenthop.reports.item_data import BatchSizer, sizer_for

    assert (item_data.BATCH_ITEMS, item_data.BATCH_CHARS, item_data.MAX_BATCH_ITEMS) == (1024, 32_000_000, 16_384)
    long = BatchSizer()
    assert long.limit == 1024
    long.saw(1024, 1024 * 2 * 27_000)  # two runs of 27,000-character transcripts: 54,000 an item, 592 would fit
    assert long.limit == 1024
    short = BatchSizer()
    short.saw(1000, 1_000_000)  # 1,000 an item: 32,000 fit, capped
    assert short.limit == 16_384
    short.saw(100, 400_000)  # 4,000 an item now: 8,000
    assert short.limit == 8000
    short.saw(100, 100)  # shorter texts do not raise it again
    assert short.limit == 8000
    fresh = BatchSizer()
    got = []
    for batch in fresh.batches([600, 600, 0, 600]):
        got.append(batch)
        fresh.saw(600 * len(batch), 600 * len(batch) * 1000)
    assert got == [[0], [1, 3]]  # 600 + 600 > 1,024 first; then 16,384 items fit
    memo: dict = {}
    assert sizer_for(memo, "inspect") is sizer_for(memo, "inspect") is not sizer_for(memo, "agenthop")


def test_chunk_writer_writes_each_chunk_packed_in_order() -> None:
    """The data files are packed in a thread of their own but written in the order they were added, each the
    chunk's own file (as Chunk.script makes it); leaving the block on an error writes nothing more."""
    from agenthop.reports.item_data import Chunk, ChunkWriter

    chunks = []
    for k in range(4):
        ch = Chunk()
        ch.items[f"s{k}"] = {"msgs": [[[1, "user", None, ch.text(f"text {k}")]]]}
        chunks.append(ch)
    written: list[tuple[bytes, Path]] = []
    with ChunkWriter(lambda data, path: written.append((data, path))) as out:
        for k, ch in enumerate(chunks):
            out.add(ch, Path(f"{k}.js"))
    assert [p for _, p in written] == [Path(f"{k}.js") for k in range(4)]
    assert [d for d, _ in written] == [ch.script() for ch in chunks]
    written.clear()
    with pytest.raises(RuntimeError, match="stop"):
        with ChunkWriter(lambda data, path: written.append((data, path)), pending=2) as out:
            out.add(chunks[0], Path("0.js"))
            raise RuntimeError("stop")
    assert written == []  # the chunk still waiting is dropped, not written after the error


# -- the output folder ---------------------------------------------------------------------------------


def test_an_item_never_takes_a_viewer_name() -> None:
    from agenthop.reports.site import ItemNames

    names = ItemNames()
    for taken in ("view", "VIEW", "view-2", "view-data", "view-3-data"):
        stem = names.stem(taken)
        assert stem != taken and stem.startswith(taken + "-") and len(stem) == len(taken) + 17
    assert names.stem("viewer") == "viewer" and names.stem("view-x") == "view-x"


def test_site_refuses_a_folder_it_did_not_write(built_warehouse, tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    res = CliRunner().invoke(main, ["site", "--db", str(built_warehouse.db), "--out", str(foreign), "--quiet"])
    assert res.exit_code == 2 and "holds no site written by agenthop-report site" in res.output
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging folder left


# -- the end-to-end warehouse in Chromium --------------------------------------------------------------


@pytest.mark.browser
def test_site_of_the_demo_warehouse_in_chromium(built_warehouse, tmp_path: Path) -> None:
    out = tmp_path / "site"
    runner = CliRunner()
    res = runner.invoke(main, ["site", "--db", str(built_warehouse.db), "--out", str(out), "--max-pairs", "2"])
    assert res.exit_code == 0, res.output
    assert (out / MARKER).exists()
    found = crawl(out / "index.html")
    assert found.broken == [] and found.absolute == []
    rel = {str(p.relative_to(out.resolve())) for p in found.pages}
    for must in ("paper/index.html", "sciexplore/index.html"):
        assert must in rel, sorted(rel)[:40]
    assert any(r.startswith("models/verifier") for r in rel)
    assert any(r.startswith("reruns/") and "verifier" in r and "_files" not in r for r in rel)  # two replicates
    assert len(found.scripts) == 1  # one chart bundle for the whole site

    index = BeautifulSoup((out / "index.html").read_text(encoding="utf-8"), "html.parser")
    commands = [c.get_text() for c in index.select("#compare ~ details code")]
    # agenthop: 4 models under full -> 6 pairs, 2 rendered, 4 listed with the command that renders one
    assert sum("--benchmark agenthop " in c for c in commands) == 4
    assert len([a for a in index.select("#compare ~ ul a") if "compare/agenthop" in a["href"]]) == 2
    runs_table = index.find(id="runs").find_next("table")
    assert len(runs_table.find("tbody").find_all("tr")) >= 7  # every run listed, with its coverage
    # a model is marked simulated when a run of it is, also a run imported without shared trajectories
    # (SciExplore's simulated systems come as responses files)
    con = duckdb.connect(str(built_warehouse.db), read_only=True)
    try:
        simulated = {m for (m,) in con.execute(
            "SELECT model FROM main.run_summary WHERE is_simulated UNION "
            "SELECT model FROM main.imported_run_summary WHERE is_simulated").fetchall()}
    finally:
        con.close()
    badged = {row.find("td").select_one(".name-tag").get_text(" ", strip=True).removesuffix(" SIM")
              for row in index.find(id="models").find_next("table").find("tbody").find_all("tr")
              if row.find("td").select_one(".badge.sim")}
    assert badged == simulated and any(m.endswith("-dr") for m in simulated), (badged, simulated)

    in_chromium(out, found.pages, "demo-site")

    # a second run replaces the site it wrote, whole
    (out / "leaderboard" / "stale.html").write_text("old")
    res = runner.invoke(main, ["site", "--db", str(built_warehouse.db), "--out", str(out), "--max-pairs", "0", "--quiet"])
    assert res.exit_code == 0, res.output
    assert res.output.strip() == str(out / "index.html") and not (out / "leaderboard" / "stale.html").exists()
    assert not list(out.glob("compare/**/*.html"))


@pytest.mark.browser
def test_model_names_and_sim_badges_read_whole_at_800_1024_and_1440(built_warehouse, tmp_path: Path) -> None:
    """The AgentHop leaderboard's model cells and its cost frontier's, and the site index's model and run
    tables: a name never breaks at a hyphen ("early-committer-" over "weak"), keeps one line, and its SIM badge
    stays on its line; a table wider than its box scrolls instead (SciExplore's leaderboard:
    tests/sciexplore/test_report_name_tags.py)."""
    from playwright.sync_api import sync_playwright
    from test_report_browser import _browser_binary

    exe = _browser_binary()
    if exe is None:
        pytest.skip("!!! NO CHROMIUM BINARY FOUND: the name-tag browser test is SKIPPED !!!")
    out = tmp_path / "site"
    res = CliRunner().invoke(main, ["site", "--db", str(built_warehouse.db), "--out", str(out), "--max-pairs", "0"])
    assert res.exit_code == 0, res.output
    problems: list[str] = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        try:
            for rel in ("leaderboard/agenthop.html", "index.html"):
                for width in (800, 1024, 1440):
                    tags, found = name_tag_problems(b, out / rel, width)
                    problems += [f"{rel} {f}" for f in found]
                    assert [t for t in tags if t["sim"] and "-" in t["name"]], (rel, tags)
        finally:
            b.close()
    assert problems == [], problems


def test_a_page_the_warehouse_cannot_give_is_listed_with_its_reason(tmp_path: Path) -> None:
    from agenthop.harness.errors import AgentHopError
    from agenthop.reports.site_build import Entry, SiteBuilder

    builder = SiteBuilder(None, tmp_path / "site")  # type: ignore[arg-type]  # no page here reads it
    builder.root = tmp_path

    def fails(site) -> str:  # type: ignore[no-untyped-def]
        site._write_folder_file("half", site.items_dir / "a.html")  # an item page, then the failure
        raise AgentHopError("model 'x' has no 'full' run")

    entry = Entry("compare", "x vs y", "compare/b/x--y.html", fails, benchmark="b")
    builder._render(entry)
    assert (entry.written, entry.problem) == (False, "model 'x' has no 'full' run")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []  # nor its half-written folder

    ok = Entry("leaderboard", "L", "leaderboard/b.html", lambda site: "<html></html>", benchmark="b")
    builder._render(ok)
    assert ok.written and (tmp_path / "leaderboard" / "b.html").read_text() == "<html></html>"


def test_pages_leave_the_cached_leaderboard_as_it_was(built_warehouse, tmp_path: Path) -> None:
    """The leaderboard's context is kept on the warehouse for the site's plan, its leaderboard page and every
    model page: the leaderboard page (its charts and AgentHop's sections) and the model page (each row's
    tool behaviour) add to copies, never to it."""
    from agenthop.reports.core import leaderboard, model_page, pages
    from agenthop.reports.site import Site
    from agenthop.reports.warehouse import Warehouse

    def snapshot(ctx: dict) -> list:
        return [(dict(bd), [dict(r) for r in bd["rows"]]) for bd in ctx["boards"]]

    with Warehouse(built_warehouse.db) as wh:
        cached = leaderboard.build(wh, "agenthop", None)
        before = snapshot(cached)
        with Site(tmp_path / "leaderboard.html") as site:
            _, shown = pages.leaderboard(wh, site, "agenthop", None)
        assert shown["boards"][0]["sections"] and "frontier_chart" in shown["boards"][0]  # the page's own additions
        model = cached["boards"][0]["rows"][0]["model"]
        with Site(tmp_path / "model.html") as site:
            _, page = model_page.page(wh, site, model)
        assert page["blocks"][0]["row"]["calls_per_item"] is not None  # the model page's own addition
        assert leaderboard.build(wh, "agenthop", None) is cached
        assert snapshot(cached) == before
        assert "sections" not in cached["boards"][0] and "calls_per_item" not in cached["boards"][0]["rows"][0]


def test_pairwise_counts_in_one_query_are_each_pairs(built_warehouse) -> None:
    from agenthop.reports.core import marts, queries
    from agenthop.reports.warehouse import Warehouse

    with Warehouse(built_warehouse.db) as wh:
        ids = [r for (r,) in wh.con.execute("SELECT run_id FROM main.run_summary ORDER BY run_id LIMIT 4").fetchall()]
        pairs = [(a, b) for a in ids for b in ids if a != b] + [("no-such-run", ids[0])]
        got = queries.paired_binary_many(wh, pairs)
        right: dict[str, dict[str, int]] = {}  # by hand: each run's items and whether each was right
        for run_id, sample_id, ok in wh.con.execute(
                f"SELECT run_id, sample_id, coalesce(is_correct, false) FROM {marts.trajectories(wh)}").fetchall():
            right.setdefault(run_id, {})[sample_id] = int(ok)

        def by_hand(a: str, b: str) -> dict[str, int]:
            ra, rb = right.get(a, {}), right.get(b, {})
            shared = ra.keys() & rb.keys()
            return {"n": len(shared), "a_only": sum(ra[s] * (1 - rb[s]) for s in shared),
                    "b_only": sum((1 - ra[s]) * rb[s] for s in shared)}

        assert got == [by_hand(a, b) for a, b in pairs]
        assert queries.paired_binary(wh, ids[0], ids[1]) == got[0]
        assert got[-1] == {"n": 0, "a_only": 0, "b_only": 0} and any(c["a_only"] or c["b_only"] for c in got)
        assert queries.paired_binary_many(wh, []) == []
