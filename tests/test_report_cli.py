"""agenthop-report against a warehouse built by the real pipeline (tests/conftest.py::built_warehouse)."""

from __future__ import annotations

import html as html_lib
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from agenthop.reports import charts, stats
from agenthop.reports.freshness import BENCHMARK_DQ_MARTS

from report_fixtures import emptied_copy, inject_hostile, run

HOSTILE = "<script>alert(1)</script>"
HOSTILE_ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


@pytest.fixture(scope="module")
def db(built_warehouse) -> Path:
    return built_warehouse.db


@pytest.fixture(scope="module")
def panel(db: Path) -> dict[str, list[tuple[str, str, int]]]:
    """model -> [(run_id, condition, replicate)], read directly from the mart."""
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT model, run_id, condition, replicate FROM model_summary ORDER BY ALL").fetchall()
    con.close()
    out: dict[str, list[tuple[str, str, int]]] = {}
    for model, rid, cond, rep in rows:
        out.setdefault(model, []).append((rid, cond, rep))
    return out


def full_run(panel: dict, model: str) -> str:
    return min((rep, rid) for rid, cond, rep in panel[model] if cond == "full")[1]


# ----------------------------------------------------------------------------------------------
# user errors: exit code 2 and one line
# ----------------------------------------------------------------------------------------------


def test_unknown_model_lists_known_models(db: Path, panel: dict) -> None:
    code, out, err = run("compare", "--models", "verifier,no-such-model", "--db", str(db))
    assert code == 2
    assert "unknown model 'no-such-model'" in err
    for model in panel:
        assert model in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_unknown_run_and_bad_arity(db: Path) -> None:
    code, _, err = run("compare", "--runs", "nope1,nope2", "--db", str(db))
    assert code == 2 and "unknown run id 'nope1'" in err
    code, _, err = run("compare", "--models", "verifier", "--db", str(db))
    assert code == 2 and "exactly two" in err
    code, _, err = run("reruns", "--model", "ghost", "--db", str(db))
    assert code == 2 and "known models" in err


@pytest.mark.parametrize(
    "args",
    [["compare", "--models", "a,b"], ["leaderboard"], ["reruns", "--model", "a"], ["item", "x", "--runs", "r"]],
)
def test_missing_marts_say_run_dbt_build(tmp_path: Path, args: list[str]) -> None:
    bare = tmp_path / "bare.duckdb"
    duckdb.connect(str(bare)).close()
    code, _, err = run(*args, "--db", str(bare))
    assert code == 2
    assert "run dbt build first" in err


def test_empty_warehouse(tmp_path: Path, db: Path) -> None:
    empty = emptied_copy(db, tmp_path / "empty.duckdb")
    for args in (["compare", "--models", "a,b"], ["leaderboard"], ["reruns", "--model", "a"]):
        code, _, err = run(*args, "--db", str(empty))
        assert code == 2, args
        assert "is empty" in err and "agenthop-ingest" in err


def test_mart_without_a_needed_column(tmp_path: Path, db: Path) -> None:
    copy = tmp_path / "old.duckdb"
    copy.write_bytes(db.read_bytes())
    con = duckdb.connect(str(copy))
    con.execute("ALTER TABLE main.tool_transitions DROP COLUMN p_next")
    con.close()
    code, _, err = run("compare", "--models", "verifier,balanced", "--db", str(copy))
    assert code == 2
    assert "mart tool_transitions" in err and "p_next" in err and "run dbt build first" in err


def test_missing_warehouse_file(tmp_path: Path) -> None:
    code, _, err = run("leaderboard", "--db", str(tmp_path / "nope.duckdb"))
    assert code == 2 and "does not exist" in err


def test_locked_warehouse_is_a_user_error(tmp_path: Path, db: Path) -> None:
    copy = tmp_path / "locked.duckdb"
    copy.write_bytes(db.read_bytes())
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, sys, time
            con = duckdb.connect({str(copy)!r})
            print("ready", flush=True)
            sys.stdin.readline()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        code, _, err = run("sql", "SELECT 1", "--db", str(copy))
        assert code == 2
        assert "is in use" in err and str(copy) in err
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=20)


# ----------------------------------------------------------------------------------------------
# sql
# ----------------------------------------------------------------------------------------------


def test_sql_formats(db: Path) -> None:
    q = "SELECT 1 AS a, 'x,y' AS b, NULL AS c, 2.5 AS d"
    code, out, _ = run("sql", q, "--db", str(db))
    assert code == 0
    assert out.splitlines() == ["a | b   | c    | d  ", "--+-----+------+----", "1 | x,y | NULL | 2.5", "(1 row)"]
    code, out, _ = run("sql", q, "--format", "csv", "--db", str(db))
    assert out == 'a,b,c,d\n1,"x,y",,2.5\n'
    code, out, _ = run("sql", q, "--format", "json", "--db", str(db))
    assert json.loads(out) == [{"a": 1, "b": "x,y", "c": None, "d": 2.5}]


def test_sql_reads_marts(db: Path, panel: dict) -> None:
    code, out, _ = run("sql", "SELECT count(*) AS n FROM model_summary", "--format", "json", "--db", str(db))
    assert code == 0
    assert json.loads(out) == [{"n": sum(len(v) for v in panel.values())}]


def test_sql_is_read_only_and_errors_are_one_line(db: Path) -> None:
    code, _, err = run("sql", "DELETE FROM model_summary", "--db", str(db))
    assert code == 2 and "read-only" in err.lower()
    code, _, err = run("sql", "SELEC nonsense", "--db", str(db))
    assert code == 2 and len(err.strip().splitlines()) == 1
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM model_summary").fetchone()[0] > 0
    con.close()


def test_sql_cannot_write_files(db: Path, tmp_path: Path) -> None:
    target = tmp_path / "leak.csv"
    code, _, err = run("sql", f"COPY (SELECT * FROM model_summary) TO '{target}'", "--db", str(db))
    assert code == 2 and "file system operations are disabled" in err and not target.exists()


def test_sql_empty_query_is_a_user_error(db: Path) -> None:
    for query in ("", "   ", "/* nothing */"):
        code, _, err = run("sql", query, "--db", str(db))
        assert code == 2 and err.strip() == (
            'error: sql: the query is empty; give a statement, e.g. "SELECT * FROM model_summary"'
        ), (query, err)


def test_same_run_twice_is_a_user_error(tmp_path: Path, db: Path, panel: dict) -> None:
    rid = full_run(panel, "verifier")
    code, _, err = run("compare", "--models", "verifier,verifier", "--db", str(db), "--out", str(tmp_path / "c.html"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"model 'verifier' is given twice (both pick run '{rid}')" in err and "reruns --model verifier" in err
    code, _, err = run("compare", "--runs", f"{rid},{rid}", "--db", str(db), "--out", str(tmp_path / "c.html"))
    assert code == 2 and err.strip() == f"error: run '{rid}' is given twice; name different runs"
    code, _, err = run("item", "ST-0001", "--runs", f"{rid},{rid}", "--db", str(db), "--out", str(tmp_path / "i.html"))
    assert code == 2 and "given twice" in err
    assert not list(tmp_path.iterdir())


def test_unwritable_out_is_a_user_error(tmp_path: Path, db: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    code, _, err = run("leaderboard", "--db", str(db), "--out", str(blocker / "lb.html"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith(f"error: --out {blocker / 'lb.html'}: cannot write the report")
    nested = tmp_path / "new" / "dir" / "lb.html"  # missing folders are created
    code, out, _ = run("leaderboard", "--db", str(db), "--out", str(nested))
    assert code == 0 and nested.is_file()


def test_label_runs_with_a_repeated_run() -> None:
    from agenthop.reports.agenthop.queries import RunInfo, label_runs

    runs = [RunInfo("v__full__r0", "v", "full", 0), RunInfo("v__full__r0", "v", "full", 0)]
    label_runs(runs)  # used to raise KeyError once the first label had been rewritten
    assert [r.label for r in runs] == ["v · full #0 (v__full__r0)"] * 2


def test_every_command_has_help() -> None:
    for cmd in ("compare", "leaderboard", "reruns", "item", "sql"):
        code, out, _ = run(cmd, "--help")
        assert code == 0 and "Usage:" in out


# ----------------------------------------------------------------------------------------------
# report content
# ----------------------------------------------------------------------------------------------


def _text(html: str) -> str:
    """Visible-ish text: tags dropped, whitespace collapsed."""
    return html_lib.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def test_compare_numbers_match_the_marts(tmp_path: Path, db: Path, panel: dict) -> None:
    a, b = full_run(panel, "verifier"), full_run(panel, "metadata-looper")
    out = tmp_path / "cmp.html"
    code, stdout, _ = run("compare", "--models", "verifier,metadata-looper", "--db", str(db), "--out", str(out))
    assert code == 0 and stdout.strip() == str(out)
    html = out.read_text()
    con = duckdb.connect(str(db), read_only=True)
    ca = dict(con.execute("SELECT sample_id, is_correct FROM fct_trajectory WHERE run_id = ?", [a]).fetchall())
    cb = dict(con.execute("SELECT sample_id, is_correct FROM fct_trajectory WHERE run_id = ?", [b]).fetchall())
    con.close()
    shared = sorted(set(ca) & set(cb))
    b_only = sum(1 for s in shared if ca[s] and not cb[s])
    c_only = sum(1 for s in shared if cb[s] and not ca[s])
    text = _text(html)
    # accuracy cells in the paper's format
    assert stats.format_acc_pm(sum(ca.values()), len(ca)) in text
    assert stats.format_acc_pm(sum(cb.values()), len(cb)) in text
    # McNemar row: n, b, c, p as printed
    p = stats.format_p(stats.mcnemar_exact(b_only, c_only))
    assert re.search(rf"accuracy all shared items {len(shared)} {b_only} {c_only} \S+ {re.escape(p)}", text), text[:3000]
    # the grid of paired tests carries Holm's adjusted p, named in the caption with the number of tests
    assert "<th>p (Holm)</th>" in html and re.search(r"Adjusted p: Holm \(family-wise error\) over the \d+ tests", text)
    # the MDE's "–" is explained in the caption and in the cell's tooltip (never a bare dash)
    assert "MDE\xa0“–”: fewer than six items differ (b + c ≤ 5), so even if all of them went one way" in text
    assert '<td class="num">–</td>' not in html
    # every win/loss item is listed and links to its item page in cmp_files/items/
    for s in shared:
        if ca[s] != cb[s]:
            assert f'<a href="cmp_files/items/{s}.html">{s}</a>' in html
            assert (tmp_path / "cmp_files" / "items" / f"{s}.html").is_file()
    for anchor_id in re.findall(r'href="#([^"]+)"', html):
        assert f'id="{anchor_id}"' in html
    # provenance footer and simulated badges
    assert a in html and b in html and "benchmark sha256" in html and "SIMULATED" in html
    # the chart bundle is one shared file in the folder, not inlined; no trajectory is inlined
    bundles = list((tmp_path / "cmp_files").glob("vega-*.js"))
    assert len(bundles) == 1 and f'<script src="cmp_files/{bundles[0].name}"></script>' in html
    assert 'class="call' not in html and len(html) < 300_000  # 0.9 MB of bundle is not in the page


def test_compare_names_the_actions_after_a_wrong_read_as_the_paper_report_does(tmp_path: Path, db: Path) -> None:
    """The compare page's "After reading a wrong paper" rows, chart categories and note use the display names
    of reports/agenthop/sections.py (Recover, Re-nav, ...), the source of the paper report's Table 3 columns too, not
    the mart's ids (recover, renav)."""
    from agenthop.reports.agenthop import sections
    from agenthop.reports.paper import layouts

    assert [name for _, name, _ in layouts.T3_ACTIONS] == [sections.WRONG_READ_LABELS[k] for k in
                                                            sections.WRONG_READ_ORDER if k != "other"]
    out = tmp_path / "cmp.html"
    code, _, _ = run("compare", "--models", "verifier,metadata-looper", "--db", str(db), "--out", str(out))
    assert code == 0
    html = out.read_text()
    section = html.split('id="wrong-reads"', 1)[1].split("<h2", 1)[0]
    rows = re.findall(r'<tr><td class="l">([^<]*)</td>', section)
    assert rows == [sections.WRONG_READ_LABELS[k] for k in sections.WRONG_READ_ORDER], rows
    assert "Re-nav: calls a navigation tool" in _text(section) and "renav" not in _text(section)
    chart = json.loads(re.search(r"var specs = (\{.*?\});\n", html).group(1))
    titles = [s for s in chart.values() if s.get("title") == "Next action after a wrong-paper read"]
    assert len(titles) == 1
    assert {v["action"] for v in titles[0]["data"]["values"]} <= set(sections.WRONG_READ_LABELS.values())


def test_default_output_path(db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("compare", "--models", "verifier,balanced", "--db", str(db))
    assert code == 0
    assert out.strip() == "reports_out/compare-verifier-vs-balanced.html"
    assert (tmp_path / out.strip()).stat().st_size > 20_000
    assert list((tmp_path / "reports_out" / "compare-verifier-vs-balanced_files" / "items").glob("*.html"))


def test_chart_data_stays_small(db: Path) -> None:
    from agenthop.reports.agenthop import compare, leaderboard
    from agenthop.reports.agenthop.queries import label_runs, resolve_runs
    from agenthop.reports.warehouse import Warehouse

    with Warehouse(db) as wh:
        runs = resolve_runs(wh, models=["verifier", "balanced"])
        label_runs(runs)
        _, box = compare.build(wh, runs)
        _, box2, _ = leaderboard.build(wh)
    specs = list(box.specs.values()) + list(box2.specs.values())
    assert len(specs) >= 10
    def inline_rows(node) -> int:  # rows of every inline dataset, at any level of the spec
        if isinstance(node, dict):
            own = sum(len(v) for v in node.get("datasets", {}).values())
            data = node.get("data")
            own += len(data.get("values", [])) if isinstance(data, dict) else 0
            return own + sum(inline_rows(v) for k, v in node.items() if k not in ("datasets", "data"))
        if isinstance(node, list):
            return sum(inline_rows(v) for v in node)
        return 0

    for spec in specs:
        assert 0 < inline_rows(spec) <= charts.MAX_ROWS


def test_reruns_report(tmp_path: Path, db: Path, panel: dict) -> None:
    out = tmp_path / "rr.html"
    code, _, err = run("reruns", "--model", "verifier", "--db", str(db), "--out", str(out))
    assert code == 0
    text = _text(out.read_text())
    assert "Condition full: 2 replicates" in text and "Noise floor" in text
    # the pairwise table says what MDE and its "–" mean here, not "as in compare"
    assert "MDE\xa0“–”: fewer than six items differ (b + c ≤ 5)" in text and "as in compare" not in text
    assert "Adjusted p: Holm (family-wise error) over the 1 pair shown." in text  # two replicates: one pair
    assert '<td class="num">–</td>' not in out.read_text()
    code, _, err = run("reruns", "--model", "early-committer", "--db", str(db), "--out", str(tmp_path / "r2.html"))
    assert code == 0 and "no condition with two or more replicates" in err


def test_leaderboard_groups_by_tier(tmp_path: Path, db: Path) -> None:
    out = tmp_path / "lb.html"
    code, _, _ = run("leaderboard", "--db", str(db), "--out", str(out))
    assert code == 0
    text = _text(out.read_text())
    assert "Closed Frontier" in text and "Compute-Efficient" in text  # the tiers' names, not their ids
    assert "closed_frontier" not in text and "compute_efficient" not in text
    assert "closed_book->full" in text or "closed_book → full" in text  # balanced has three conditions
    assert "Cronbach" in text


# ----------------------------------------------------------------------------------------------
# escaping: trajectory-derived strings never reach the page unescaped
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory, db: Path) -> Path:
    return inject_hostile(db, tmp_path_factory.mktemp("hostile") / "hostile.duckdb", HOSTILE, model="verifier")


def test_hostile_strings_are_escaped_in_every_report(tmp_path: Path, hostile_db: Path, panel: dict) -> None:
    con = duckdb.connect(str(hostile_db), read_only=True)
    runs = [r[0] for r in con.execute("SELECT run_id FROM model_summary WHERE model = ? ORDER BY replicate",
                                      [HOSTILE]).fetchall()]
    sample = con.execute("SELECT min(sample_id) FROM fct_trajectory WHERE run_id = ?", [runs[0]]).fetchone()[0]
    con.close()
    reports = {
        "compare": ["compare", "--models", f"{HOSTILE},balanced"],
        "leaderboard": ["leaderboard"],
        "reruns": ["reruns", "--model", HOSTILE],
        "item": ["item", sample, "--runs", f"{runs[0]},{runs[1]}"],
    }
    for kind, args in reports.items():
        out = tmp_path / f"{kind}.html"
        code, _, err = run(*args, "--db", str(hostile_db), "--out", str(out))
        assert code == 0, (kind, err)
        html = out.read_text()
        assert HOSTILE not in html, kind
        assert "<script>alert" not in html, kind
        assert HOSTILE_ESCAPED in html, kind  # the name is shown, escaped
        # chart data and JSON never contain a raw '</' sequence from data
        for block in re.findall(r"<script>(.*?)</script>", html, flags=re.S)[1:]:
            assert "alert(1)</" not in block
        folder = out.with_name(out.stem + "_files")
        for page in folder.rglob("*.html"):  # item pages of the report's folder
            assert HOSTILE not in page.read_text(), (kind, page.name)
    item_html = (tmp_path / "item.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in item_html  # args_json shown escaped
    assert "=== Output ===\n\n&lt;script&gt;alert(1)&lt;/script&gt;" in item_html  # the tool output too


def test_help_examples_with_model_names_work_on_the_demo_panel(db: Path, tmp_path: Path) -> None:
    """The examples in `agenthop-report --help` name the demo panel's models; they must run."""
    import shlex

    from agenthop.reports.cli import EPILOG

    examples = [line.strip().split(" ", 1)[1] for line in EPILOG.splitlines()
                if line.strip().startswith("agenthop-report ") and "RUN_" not in line]
    assert len(examples) >= 4
    for i, example in enumerate(examples):
        args = shlex.split(example)
        extra = ["--db", str(db)] + ([] if args[0] == "sql" or "--out" in args else ["--out", str(tmp_path / f"{i}.html")])
        code, _, err = run(*args, *extra)
        assert code == 0, (example, err)


# ----------------------------------------------------------------------------------------------
# a report site: page + folder, or one file; freshness; data-quality warnings
# ----------------------------------------------------------------------------------------------


def test_single_file_inlines_bundle_and_item_pages(tmp_path: Path, db: Path) -> None:
    out = tmp_path / "one.html"
    code, _, err = run("compare", "--models", "verifier,metadata-looper", "--single-file", "--db", str(db),
                       "--out", str(out))
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.html"]
    html = out.read_text()
    assert "<script src=" not in html and "vegaEmbed" in html
    links = re.findall(r'href="#(item-[^"]+)"', html)
    assert links and all(f'<section class="item-section" id="{a}">' in html for a in links)


def test_item_page_shows_at_most_six_runs(tmp_path: Path, db: Path, panel: dict) -> None:
    ids = [rid for runs in panel.values() for rid, _, _ in runs]
    assert len(ids) > 6
    code, _, err = run("item", "st_0001", "--runs", ",".join(ids), "--db", str(db), "--out", str(tmp_path / "i.html"))
    assert code == 2 and "at most 6 runs" in err


REPORTS = [["compare", "--models", "verifier,balanced"], ["leaderboard"], ["reruns", "--model", "verifier"],
           ["item", "st_0001", "--models", "verifier,balanced"]]


@pytest.mark.parametrize("args", REPORTS, ids=[a[0] for a in REPORTS])
def test_ingest_after_the_last_build_makes_reports_refuse(tmp_path: Path, messages_warehouse, args: list[str]) -> None:
    code, _, err = run(*args, "--db", str(messages_warehouse.stale_db), "--out", str(tmp_path / "r.html"))
    assert code == 2, err
    assert "marts are stale: run dbt build" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.html").exists()
    code, _, err = run(*args, "--db", str(messages_warehouse.db), "--out", str(tmp_path / "r.html"))
    assert code == 0, err


def test_half_rebuilt_marts_are_stale(tmp_path: Path, db: Path) -> None:
    copy = tmp_path / "half.duckdb"
    copy.write_bytes(db.read_bytes())
    con = duckdb.connect(str(copy))
    con.execute("DELETE FROM main.model_summary WHERE run_id = (SELECT max(run_id) FROM main.model_summary)")
    con.close()
    code, _, err = run("leaderboard", "--db", str(copy), "--out", str(tmp_path / "lb.html"))
    assert code == 2 and "marts are stale: run dbt build" in err and "model_summary has" in err


def test_data_quality_warning_block(tmp_path: Path, db: Path) -> None:
    con = duckdb.connect(str(db), read_only=True)
    dq = {name: con.execute(f'SELECT count(*) FROM main."{name}"').fetchone()[0] for (name,) in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_name LIKE 'dq\\_%' ESCAPE '\\'"
    ).fetchall()}
    con.close()
    assert dq and any(dq.values()), dq  # the synthetic benchmark has unresolvable labels
    out = tmp_path / "lb.html"
    assert run("leaderboard", "--db", str(db), "--out", str(out))[0] == 0
    text = _text(out.read_text())
    about_runs = {name: n for name, n in dq.items() if name not in BENCHMARK_DQ_MARTS}
    # label-resolution findings describe the release: a note on the benchmark, not a warning about the runs
    assert ("Data-quality warnings" in text) == any(about_runs.values())
    assert "Benchmark notes" in text and dq["dq_label_resolution"] > 0
    assert 'href="#def-metrics-label-resolution"' in out.read_text()
    for name, n in dq.items():
        assert bool(re.search(rf"{name} ?: {n} rows?\b", text)) == (n > 0), name
    broken = tmp_path / "broken.duckdb"  # a problem in the loaded runs raises the alarm
    broken.write_bytes(db.read_bytes())
    con = duckdb.connect(str(broken))
    con.execute("CREATE OR REPLACE TABLE main.dq_trajectory_accounting AS SELECT 'r0' AS run_id, 'orphan' AS issue")
    con.close()
    assert run("leaderboard", "--db", str(broken), "--out", str(out))[0] == 0
    text = _text(out.read_text())
    assert "Data-quality warnings" in text and re.search(r"dq_trajectory_accounting ?: 1 row\b \(orphan 1\)", text)
    clean = tmp_path / "clean.duckdb"
    clean.write_bytes(db.read_bytes())
    con = duckdb.connect(str(clean))
    for name in dq:
        con.execute(f'DELETE FROM main."{name}"')
    con.close()
    assert run("leaderboard", "--db", str(clean), "--out", str(out))[0] == 0
    assert "Data-quality warnings" not in out.read_text() and "Benchmark notes" not in out.read_text()
