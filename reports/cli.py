"""`agenthop-report`: HTML reports and read-only SQL over the warehouse marts (thin click layer)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from agenthop.harness.cli_examples import epilog
from agenthop.harness.errors import AgentHopError, cli_errors
from agenthop.harness.storage import LocalPath  # a URL-looking value is an error, not a folder named 's3:'

from .values import control_pictures, csv_document, spreadsheet_safe, sql_text, sql_value
from .warehouse import Warehouse

EPILOG = """\b
Examples (each subcommand's --help has its own):
  agenthop-report compare --models early-committer,verifier
  agenthop-report compare --runs RUN_A,RUN_B --out cmp.html
  agenthop-report compare --models early-committer,verifier --single-file
  agenthop-report leaderboard
  agenthop-report leaderboard --condition closed_book
  agenthop-report reruns --model verifier
  agenthop-report item st_0001 --models early-committer,verifier
  agenthop-report paper --condition full
  agenthop-report model verifier
  agenthop-report site --out site/
  agenthop-report sql "SELECT model, accuracy FROM model_summary" --format csv

A report is a page plus its folder (cmp.html and cmp_files/ with item pages and the chart bundle);
--single-file writes one self-contained file instead.

Exit codes: 0 success, 2 user error (unknown model, missing or stale marts, warehouse in use, bad SQL).
"""


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def parse_pairs(pairs: Sequence[str], what: str) -> list[tuple[str, str]]:
    """``--pair A,B`` values as name pairs; a value that is not two different names is a user error."""
    out = []
    for p in pairs:
        names = _split(p)
        if len(names) != 2 or names[0] == names[1]:
            raise AgentHopError(f"--pair {p!r}: give two different {what} names, e.g. --pair {what}-a,{what}-b")
        out.append((names[0], names[1]))
    return out


def db_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--db", "db", type=LocalPath(dir_okay=False), default=None,
        help="Warehouse file (default: $AGENTHOP_DB, else warehouse/agenthop.duckdb).",
    )(fn)


def out_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--single-file", "single_file", is_flag=True, default=False,
        help="Inline everything (chart bundle, item pages) into the one HTML file, e.g. to send by mail.",
    )(fn)
    return click.option(
        "--out", "out", type=LocalPath(dir_okay=False, path_type=Path), default=None,
        help="Output HTML file (default: reports_out/<kind>-<names>.html); item pages and the chart "
             "bundle go to the folder <name>_files beside it.",
    )(fn)


def open_site(wh: Warehouse, out: Path, single_file: bool) -> Any:  # returns reports.site.Site
    """The checks every report runs first (marts current, dq warnings), then the report's Site."""
    from .freshness import prepare
    from .site import Site

    return Site(out, single_file=single_file, dq_issues=prepare(wh))


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EPILOG)
@click.version_option(package_name="agenthop-warehouse", prog_name="agenthop-report")
def main() -> None:
    """Render self-contained HTML reports (offline, file://) and run read-only SQL on the marts."""


def benchmark_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--benchmark", "benchmark", default=None, metavar="NAME",
        help="The benchmark whose runs --models / --model picks (needed when a model has runs of several, "
             "e.g. inspect:TASK).",
    )(fn)


def cluster_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--cluster", "cluster", default=None, metavar="FIELD",
        help="Cluster the intervals and paired tests by this item field (AgentHop: source_paper or an items column; "
             "SciExplore: domain or a tasks column; Inspect: a sample metadata field); 'item' for items alone. "
             "Default: the benchmark's own (AgentHop source_paper, SciExplore domain, Inspect none).",
    )(fn)


def condition_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--condition", default=None, metavar="NAME",
        help="For a benchmark with conditions (AgentHop's full, no_search, closed_book): the condition whose runs "
             "to pick (default: the benchmark's default condition). Other benchmarks ignore it.",
    )(fn)


def metric_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--metric", "metric", default=None, metavar="NAME",
        help="The metric the page shows (default: the benchmark's primary metric): a full name as metric_defs "
             "lists it (grade.security) or a bare name unique within the benchmark (security).",
    )(fn)


@main.command(epilog=epilog("agenthop-report compare"))
@click.option("--models", help="Two model names, comma-separated: each model's runs under --condition, every "
                                "epoch or replicate pooled per item.")
@click.option("--runs", "run_ids", help="Two run ids, comma-separated (instead of --models), of any benchmark.")
@click.option("--epoch", "--replicate", "epoch", type=click.IntRange(0), default=None, metavar="N",
              help="With --models: only epoch N (Inspect, from 1) or replicate N (as the runs number them) of each "
                   "model instead of all of them pooled.")
@condition_option
@benchmark_option
@metric_option
@cluster_option
@db_option
@out_option
@cli_errors
def compare(models: str | None, run_ids: str | None, epoch: int | None, condition: str | None, benchmark: str | None,
            metric: str | None, cluster: str | None, db: str | None, out: Path | None, single_file: bool) -> None:
    """Compare two runs of one benchmark: outcomes, paired test, behaviour, the items they differ on."""
    from .core import pages
    from .render import default_out

    names, ids = _split(models), _split(run_ids)
    if bool(names) == bool(ids):
        raise AgentHopError("compare: give exactly one of --models a,b or --runs r1,r2")
    if len(names or ids) != 2:
        raise AgentHopError(f"compare: needs exactly two {'models' if names else 'runs'}, got {len(names or ids)}")
    if ids and epoch is not None:
        raise AgentHopError("compare: --epoch/--replicate picks among a model's runs; it goes with --models, not --runs")
    target = out or default_out("compare", *(names or ids))
    with Warehouse(db) as wh:
        with open_site(wh, target, single_file) as site:
            html, _ = pages.compare(wh, site, names, ids, condition, benchmark, epoch, metric, cluster=cluster)
    click.echo(str(site.write_page(html)))


@main.command(epilog=epilog("agenthop-report leaderboard"))
@click.option("--benchmark", "benchmark", default=None, metavar="NAME",
              help="Only this benchmark's table (default: one table per benchmark the warehouse holds).")
@condition_option
@metric_option
@cluster_option
@db_option
@out_option
@cli_errors
def leaderboard(benchmark: str | None, condition: str | None, metric: str | None, cluster: str | None, db: str | None, out: Path | None,
                single_file: bool) -> None:
    """A table per benchmark: each model's score with its interval, items, repeats, tokens, cost and
    terminations; AgentHop's panel by tier (Table 2), accuracy vs recall, condition deltas, reliability."""
    from .core import pages
    from .render import default_out

    target = out or default_out("leaderboard", *(n for n in (benchmark, condition) if n))
    with Warehouse(db) as wh:
        with open_site(wh, target, single_file) as site:
            html, _ = pages.leaderboard(wh, site, benchmark, condition, metric, cluster=cluster)
    click.echo(str(site.write_page(html)))


@main.command(epilog=epilog("agenthop-report reruns"))
@click.option("--model", required=True, help="Model whose replicates (or Inspect epochs) to analyse.")
@benchmark_option
@metric_option
@cluster_option
@db_option
@out_option
@cli_errors
def reruns(model: str, benchmark: str | None, metric: str | None, cluster: str | None, db: str | None, out: Path | None,
           single_file: bool) -> None:
    """Rerun variance across replicates or epochs, per-item flips, unstable items, noise floor."""
    from .core import pages
    from .render import default_out

    with Warehouse(db) as wh:
        with open_site(wh, out or default_out("reruns", model), single_file) as site:
            html, context = pages.reruns(wh, site, model, benchmark, metric, cluster=cluster)
    if not context["groups"]:
        click.secho(f"warning: model {model!r} has no condition with two or more replicates", fg="yellow", err=True)
    click.echo(str(site.write_page(html)))


@main.command(epilog=epilog("agenthop-report behaviours"))
@click.option("--adjust", "method", type=click.Choice(["holm", "bh"]), default="holm", show_default=True,
              help="How the Fisher p-values of every scanner and run are adjusted together (docs/reports.md#multiplicity).")
@db_option
@out_option
@cli_errors
def behaviours(method: str, db: str | None, out: Path | None, single_file: bool) -> None:
    """Behaviour scanners (docs/scanners.md): prevalence per model, agreement with human labels, association
    with the primary metric, and the items each scanner flagged."""
    from .core import pages
    from .render import default_out

    with Warehouse(db) as wh:
        with open_site(wh, out or default_out("behaviours"), single_file) as site:
            html, context = pages.behaviours(wh, site, method)
    if not context["scanners"]:
        click.secho("warning: the warehouse holds no scanner results: run agenthop-scan --scanners shipped:common, "
                    "then dbt build", fg="yellow", err=True)
    click.echo(str(site.write_page(html)))


@main.command(epilog=epilog("agenthop-report item"))
@click.argument("sample_id")
@click.option("--runs", "run_ids", help="Run ids, comma-separated, of any benchmark.")
@click.option("--models", help="Model names, comma-separated (each: its --condition run, lowest replicate).")
@condition_option
@benchmark_option
@metric_option
@db_option
@out_option
@cli_errors
def item(sample_id: str, run_ids: str | None, models: str | None, condition: str | None, benchmark: str | None,
         metric: str | None, db: str | None, out: Path | None, single_file: bool) -> None:
    """One item and 1-6 runs' trajectories on it, side by side and turn-aligned, with the transcript."""
    from .core import pages
    from .render import default_out

    names, ids = _split(models), _split(run_ids)
    if not names and not ids:
        raise AgentHopError("item: give --runs r1,r2 (or --models a,b)")
    with Warehouse(db) as wh:
        with open_site(wh, out or default_out("item", sample_id), single_file) as site:
            html, _ = pages.item(wh, site, sample_id, names, ids, condition, benchmark, metric)
    click.echo(str(site.write_page(html)))


@main.command(epilog=epilog("agenthop-report paper"))
@click.option("--condition", default="full", show_default=True,
              help="The panel: every model's run under this condition with the lowest replicate.")
@click.option("--external", type=LocalPath(dir_okay=False, path_type=Path), default=None,
              help="CSV model,benchmark,score of other benchmarks (Table 16).")
@click.option("--covariates", type=LocalPath(dir_okay=False, path_type=Path), default=None,
              help="CSV sample_id,<columns...> of item covariates; numeric columns give quartiles (Table 19).")
@click.option("--pair", "pairs", multiple=True, metavar="A,B",
              help="Two models whose bigram frequencies to test (repeatable; default: neighbours by accuracy).")
@click.option("--out", "out", type=LocalPath(file_okay=False, path_type=Path), default=None,
              help="Output directory (default: reports_out/paper): index.html, its folder index_files/ "
                   "(item pages, chart bundle) and tables/.")
@click.option("--single-file", "single_file", is_flag=True, default=False,
              help="Inline the chart bundle and item pages into index.html (tables/ is still written).")
@db_option
@cli_errors
def paper(condition: str, external: Path | None, covariates: Path | None, pairs: tuple[str, ...], out: Path | None,
          single_file: bool, db: str | None) -> None:
    """The paper's whole analysis for a panel: DIR/index.html plus every table as CSV and LaTeX."""
    from .core.runs import require_benchmark
    from .paper import BENCHMARK as PAPER_BENCHMARK
    from .paper.build import build, write_report
    from .paper.inputs import read_covariates, read_external
    from .paper.page import render_page
    from .render import DEFAULT_OUT_DIR

    pair_list = parse_pairs(pairs, "model")
    scores = read_external(external) if external else None
    cov = read_covariates(covariates) if covariates else None
    target = out or DEFAULT_OUT_DIR / "paper"
    with Warehouse(db) as wh:
        require_benchmark(wh, PAPER_BENCHMARK, "paper")
        with open_site(wh, target / "index.html", single_file) as site:  # a failure leaves no staging folder
            report = build(wh, condition, scores, cov, pair_list)
            html = render_page(wh, report, site)  # writes the item pages into the site's folder
            write_report(report, target)
    click.echo(str(site.write_page(html)))


@main.command(epilog=epilog("agenthop-report sciexplore"))
@click.option("--judge", default="normalized-match", show_default=True,
              help="Whose verdicts score the tables: the built-in judge, or the name of a judge whose "
                   "verdicts were loaded (agenthop-ingest --judgments), e.g. llm:<model>.")
@click.option("--pair", "pairs", multiple=True, metavar="A,B",
              help="Two systems to compare with an exact paired test on the shared T1/T2 tasks (repeatable; "
                   "default: neighbours by Overall).")
@click.option("--out", "out", type=LocalPath(file_okay=False, path_type=Path), default=None,
              help="Output directory (default: reports_out/sciexplore): index.html, index_files/ (task pages, "
                   "chart bundle) and tables/ (CSV and LaTeX).")
@click.option("--single-file", "single_file", is_flag=True, default=False,
              help="Inline the chart bundle into index.html and leave out the task pages (tables/ is still written).")
@cluster_option
@db_option
@cli_errors
def sciexplore(judge: str, pairs: tuple[str, ...], out: Path | None, single_file: bool, cluster: str | None,
               db: str | None) -> None:
    """SciExplore's Tables 3, 4, 6, 7 and Figure 3, paired tests, failure taxonomy, judge agreement, task pages."""
    from .core.runs import require_benchmark
    from .render import DEFAULT_OUT_DIR
    from .sciexplore import BENCHMARK as SCIEXPLORE_BENCHMARK
    from .sciexplore.build import build, write_tables
    from .sciexplore.data import check_fresh
    from .sciexplore.page import render_page
    from .site import Site

    pair_list = parse_pairs(pairs, "system")
    target = out or DEFAULT_OUT_DIR / "sciexplore"
    with Warehouse(db) as wh:
        require_benchmark(wh, SCIEXPLORE_BENCHMARK, "sciexplore")
        check_fresh(wh)
        site = Site(target / "index.html", single_file=single_file)
        report = build(wh, judge, pair_list, cluster)
        html = render_page(wh, report, site)
        write_tables(report, target)
    click.echo(str(site.write_page(html)))


@main.command(epilog=epilog("agenthop-report search"))
@click.argument("text", required=False)
@click.option("--regex", is_flag=True, help="TEXT is a regular expression (RE2 syntax, as DuckDB's regexp functions).")
@click.option("--case-sensitive", is_flag=True, help="Match letter case exactly (default: case-insensitive).")
@click.option("--role", type=click.Choice(["system", "user", "assistant", "tool", "any"]), default="any",
              show_default=True, help="Search messages of this role only (a call's arguments count as assistant, "
              "a tool's output as tool).")
@click.option("--tool", default=None, metavar="NAME", help="Calls of this tool (with TEXT: search its arguments and outputs only).")
@click.option("--tool-args", default=None, metavar="REGEX", help="Calls whose arguments' JSON matches REGEX.")
@click.option("--status", default=None, metavar="STATUS", help="Calls with this status (ok, tool_error, ...).")
@click.option("--sequence", default=None, metavar="A>B>C", help="Consecutive calls of these tools, in this order, in one attempt.")
@click.option("--repeat", type=click.IntRange(2), default=None, metavar="N",
              help="An identical call (tool and arguments) made N or more times in one attempt, whatever its status.")
@click.option("--benchmark", default=None, metavar="NAME", help="Runs of this benchmark only.")
@click.option("--model", default=None, metavar="NAME", help="Runs of this model only.")
@click.option("--run", "run_id", default=None, metavar="RUN_ID", help="This run only.")
@click.option("--epoch", type=click.IntRange(1), default=None, metavar="N",
              help="Runs of this epoch only (Inspect's epoch; a harness replicate counted from 1).")
@click.option("--metric", default=None, metavar="NAME", help="Items whose value of this metric is --value, or within --min/--max (reads the marts).")
@click.option("--value", type=float, default=None, metavar="V", help="With --metric: the value.")
@click.option("--min", "min_value", type=float, default=None, metavar="X", help="With --metric: the lowest value kept.")
@click.option("--max", "max_value", type=float, default=None, metavar="Y", help="With --metric: the highest value kept.")
@click.option("--terminated-by", default=None, metavar="T", help="Attempts that ended this way (answer, max_turns, error, ...).")
@click.option("--item-group", default=None, metavar="G", help="Items of this group (AgentHop: the cell, e.g. st_d1; reads the marts).")
@click.option("--limit", type=click.IntRange(0), default=100, show_default=True,
              help="Matches listed; the summary and the count cover them all.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "html"]), default="table", show_default=True,
              help="A text table (summary and matches), JSON (matches, summary, n_matches, truncated), CSV (the "
              "matches) or an HTML page linking each match to its item page.")
@click.option("--out", "out", type=LocalPath(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of standard output (HTML: default reports_out/search.html, item pages "
              "in the folder <name>_files beside it).")
@db_option
@cli_errors
def search(text: str | None, regex: bool, case_sensitive: bool, role: str, tool: str | None, tool_args: str | None,
           status: str | None, sequence: str | None, repeat: int | None, benchmark: str | None, model: str | None,
           run_id: str | None, epoch: int | None, metric: str | None, value: float | None, min_value: float | None,
           max_value: float | None, terminated_by: str | None, item_group: str | None, limit: int, fmt: str,
           out: Path | None, db: str | None) -> None:
    """Find text, calls, call sequences and repeated calls in the transcripts of every run (docs/search.md)."""
    from agenthop.ingest.transcripts.search import TranscriptQuery, find_matches

    from . import search as page

    query = TranscriptQuery(text=text, regex=regex, case_sensitive=case_sensitive, role=role, tool=tool,
                            tool_args=tool_args, status=status, sequence=sequence or (), repeat=repeat,
                            benchmark=benchmark, model=model, run=run_id, epoch=epoch, metric=metric, value=value,
                            min=min_value, max=max_value, terminated_by=terminated_by, item_group=item_group,
                            limit=limit)
    with Warehouse(db) as wh:
        result = find_matches(wh.con, query)
        if fmt == "html":
            from .render import default_out

            with open_site(wh, out or default_out("search"), False) as site:
                html = page.html_page(wh, site, result, query)
            click.echo(str(site.write_page(html)))
            return
    body = {"json": page.as_json, "csv": page.as_csv, "table": page.as_table}[fmt](result)
    if out is None:
        click.echo(body, nl=False)
        return
    from .render import write_html

    click.echo(str(write_html(body, out)))


@main.command(epilog=epilog("agenthop-report export"))
@click.option("--format", "fmt", type=click.Choice(["eee", "atif", "scout"]), required=True,
              help="eee: Every Eval Ever aggregate records and instance-level JSONL; atif: one ATIF trajectory per "
                   "sample's final attempt; scout: an Inspect Scout transcript database (docs/interchange.md).")
@click.option("--out", "out", type=LocalPath(file_okay=False, path_type=Path), required=True,
              help="Folder to write data/<benchmark>/<developer>/<model>/<uuid>.json (and _samples.jsonl) under; "
                   "for scout, the database folder (one transcripts_*.parquet file).")
@click.option("--runs", "run_ids", help="Run ids, comma-separated (default: every run).")
@click.option("--models", help="Model names, comma-separated: every run of each.")
@click.option("--benchmark", "benchmark", default=None, metavar="NAME", help="Only runs of this benchmark.")
@db_option
@cli_errors
def export(fmt: str, out: Path, run_ids: str | None, models: str | None, benchmark: str | None, db: str | None) -> None:
    """Write runs of any source in an interchange format other tools read (file names derive from run ids:
    exporting again rewrites the same files)."""
    from .interchange.write import export as run_export

    result = run_export(db, out, fmt, _split(run_ids), _split(models), benchmark)
    click.echo(result.summary(fmt, out))


@main.command(epilog=epilog("agenthop-report model"))
@click.argument("name")
@db_option
@out_option
@cli_errors
def model(name: str, db: str | None, out: Path | None, single_file: bool) -> None:
    """One model across every benchmark it has runs of: primary score with interval and coverage, repeats,
    all tokens and cost, terminations and tool behaviour, each beside the panel's median."""
    from .core import model_page
    from .render import default_out

    with Warehouse(db) as wh:
        with open_site(wh, out or default_out("model", name), single_file) as site:
            html, _ = model_page.page(wh, site, name)
    click.echo(str(site.write_page(html)))


@main.command(epilog=epilog("agenthop-report site"))
@click.option("--out", "out", type=LocalPath(file_okay=False, path_type=Path), required=True,
              help="Folder of the site (new, empty, or a site written before, which is replaced whole).")
@click.option("--max-pairs", "max_pairs", type=click.IntRange(0), default=10, show_default=True,
              help="Compare pages rendered per benchmark (neighbours in the leaderboard first); the other pairs "
                   "are listed on the index with their command.")
@click.option("--workers", type=click.IntRange(1), default=None,
              help="Processes rendering the pages [default: $AGENTHOP_SITE_WORKERS, else the cores, at most 4]; "
                   "each holds the page it renders (some hundreds of MB on a large warehouse). 1 renders them in "
                   "this process.")
@click.option("--quiet", is_flag=True, default=False, help="No progress lines on stderr.")
@db_option
@cli_errors
def site(out: Path, max_pairs: int, workers: int | None, quiet: bool, db: str | None) -> None:
    """Everything the warehouse holds as one static site: index.html (benchmarks, models, runs, coverage),
    each benchmark's leaderboard, a page per model, reruns, compare pages, the benchmark-specific reports
    and their item pages; one chart bundle, relative links, offline from file://."""
    from .site_build import build_site

    def progress(msg: str) -> None:
        if not quiet:
            click.echo(f"site: {msg}", err=True)

    with Warehouse(db) as wh:
        index = build_site(wh, out, max_pairs, progress, workers)
    click.echo(str(index))


@main.command(epilog=epilog("agenthop-report sql"))
@click.argument("query")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True,
              help="An aligned table, CSV or JSON. In the table and CSV a boolean is true/false and a list, struct "
              "or map its JSON text ([\"a\", 1], {\"k\": \"v\"}), in JSON a JSON boolean, array or object; "
              "dates and times are ISO 8601 (2024-01-02T03:04:05), intervals exact ISO 8601 durations, months "
              "kept (P1M, P1DT2H), BLOBs as DuckDB spells them (\\xAA). In CSV a text cell (or header) beginning with =, +, -, @, a tab "
              "or a CR gets a leading ' so a spreadsheet shows it as text instead of running it as a formula; "
              "numbers (and a text that is just a number, such as -3) are written as they are.")
@click.option("--max-rows", default=1000, show_default=True, type=click.IntRange(1),
              help="Rows printed in table format (csv/json print all).")
@db_option
@cli_errors
def sql(query: str, fmt: str, max_rows: int, db: str | None) -> None:
    """Run one SQL statement on a read-only connection and print its result (with a warning on stderr when
    the marts are stale). Several statements (SELECT 1; SELECT 2) are refused: run each on its own."""
    from .freshness import stale_warning

    with Warehouse(db) as wh:
        names, rows = wh.execute_user_sql(query)
        warning = stale_warning(wh)
    if warning:
        click.echo(warning, err=True)
    click.echo(format_rows(names, rows, fmt, max_rows), nl=False)


def _csv_cell(v: Any) -> Any:
    """A CSV cell: NULL empty, a number as it is, anything else as its text (a boolean true/false, a list or
    struct as JSON, values.sql_text) with control pictures and, when it begins with = + - @ (tab, CR), a leading
    apostrophe (values.spreadsheet_safe, after the conversion: an interval "-PT1S" gets one)."""
    v = sql_text(v)
    if v is None:
        return ""
    if isinstance(v, (int, float)):  # a negative number is a number, not a formula
        return v
    return spreadsheet_safe(v if isinstance(v, str) else str(v))  # control pictures: csv_document


def format_rows(names: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str, max_rows: int = 1000) -> str:
    """Render a result set as an aligned text table, CSV or a JSON array of objects. Table and CSV show
    control characters (NUL, ESC, ...) as control pictures; JSON keeps them, escaped (``\\u0000``). CSV
    text cells (and headers) that would start a spreadsheet formula get a leading apostrophe. Nested
    values are JSON (text in the table and CSV), dates, times and intervals ISO 8601 (values.sql_value)."""
    if fmt == "json":
        return json.dumps([{n: sql_value(v) for n, v in zip(names, r)} for r in rows], allow_nan=False,
                          indent=1) + "\n"
    if fmt == "csv":
        return csv_document([[_csv_cell(str(n)) for n in names], *([_csv_cell(v) for v in r] for r in rows)])
    if not names:
        return "(no result set)\n"
    shown = rows[:max_rows]

    def cell(v: Any) -> str:
        v = sql_text(v)
        if v is None:
            return "NULL"
        if isinstance(v, float):
            return f"{v:.6g}"
        return control_pictures(str(v).replace("\n", "\\n"))

    heads = [control_pictures(str(n)) for n in names]
    body = [[cell(v) for v in r] for r in shown]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(heads)]
    lines = [" | ".join(h.ljust(w) for h, w in zip(heads, widths)),
             "-+-".join("-" * w for w in widths)]
    lines += [" | ".join(v.ljust(w) for v, w in zip(r, widths)) for r in body]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''}"
                 f"{f', first {max_rows} shown' if len(rows) > max_rows else ''})")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
