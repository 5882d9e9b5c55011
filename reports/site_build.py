"""`agenthop-report site`: one static site of everything a warehouse holds, offline from ``file://``.

Layout of ``--out DIR``::

    index.html                          benchmarks, models, runs with their coverage, links to every page
    assets/vega-<hash>.js               the one chart bundle every page of the site loads
    leaderboard/<benchmark>.html        each benchmark's leaderboard
    models/<model>.html                 a page per model (reports/core/model_page.py)
    reruns/<benchmark>/<model>.html     per model with two or more repeats of a configuration
    compare/<benchmark>/<a>--<b>.html   model pairs of a benchmark, up to --max-pairs per benchmark
    paper/, sciexplore/                 the benchmark-specific reports, when the warehouse has their runs
    behaviours.html                     the behaviour scanners' page, when the warehouse holds scanner results
    <page>_files/items/<id>.html        the item pages a page links to, beside it

Every page is rendered by the command that renders it alone (reports/core/pages.py, the paper and
SciExplore builders) through a :class:`SitePage`, a :class:`reports.site.Site` whose chart bundle is
the site's; every link is relative. The site is written into a folder beside ``DIR`` and swapped in
whole at the end, so a failure leaves ``DIR`` as it was. ``DIR`` may be new, empty, or a site written
earlier (it carries the marker file :data:`MARKER`); any other folder is refused.
"""

from __future__ import annotations

import hashlib
import itertools
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenthop.harness.errors import AgentHopError

from .bundle import javascript_bundle
from .render import Charts, Provenance, write_html
from .site import ItemNames, Site, _relative, swap_folder
from .warehouse import Warehouse

#: The file that marks a folder as a site written by this command (so a later run may replace it).
MARKER = ".agenthop-site"
DEFAULT_MAX_PAIRS = 10
#: DuckDB's memory while the site is built: the blocks it keeps as the pages read the transcripts (every run's,
#: over the site) would otherwise grow towards its default, most of the machine's memory. Pages rendered by
#: several worker processes share it (site_workers.worker_memory_limit), so the workers together keep the
#: cache one process keeps.
MEMORY_LIMIT_MB = 512
MEMORY_LIMIT = f"{MEMORY_LIMIT_MB}MB"

Progress = Callable[[str], None]


@dataclass
class SitePage(Site):
    """One page of a multi-page site: its own folder of item pages, the site's one chart bundle, and a
    link back to the site's index in its header."""

    shared_bundle: Path | None = None
    index: Path | None = None

    def bundle_path(self) -> Path:
        if self.shared_bundle is None:
            return super().bundle_path()
        return self.shared_bundle

    def render_page(self, template: str, context: dict[str, Any], charts: Charts, provenance: Provenance,
                    page: Path | None = None) -> str:
        home = _relative(self.index, page or self.out) if self.index is not None else None
        return super().render_page(template, {"site_home": home, **context}, charts, provenance, page=page)


def ranked_pairs(models: Sequence[str]) -> list[tuple[str, str]]:
    """Every pair of `models` (ranked best first): neighbours in the ranking first, then pairs further
    apart, each distance in ranking order."""
    pairs = list(itertools.combinations(range(len(models)), 2))
    pairs.sort(key=lambda ij: (ij[1] - ij[0], ij[0]))
    return [(models[i], models[j]) for i, j in pairs]


def compare_command(a: str, b: str, benchmark: str) -> str:
    return f"agenthop-report compare --models {a},{b} --benchmark {benchmark} --out compare.html"


@dataclass
class Entry:
    """A page of the site: where it goes (relative to the site root), what renders it."""

    kind: str
    title: str
    rel: str
    render: Callable[[SitePage], str]
    benchmark: str = ""
    model: str = ""
    written: bool = False
    problem: str = ""
    #: rendered once every earlier page is, but for the pages that wait like it: its links go to the pages written
    #: (a model page's to the leaderboards and reruns pages, never to another model page)
    after_earlier: bool = False


@dataclass
class Plan:
    entries: list[Entry] = field(default_factory=list)
    unrendered_pairs: dict[str, list[dict[str, str]]] = field(default_factory=dict)


class Paths:
    """File names unique within each folder of the site (names kept where they are safe)."""

    def __init__(self) -> None:
        self._names: dict[str, ItemNames] = {}

    def stem(self, folder: str, name: str) -> str:
        return self._names.setdefault(folder, ItemNames()).stem(name)

    def file(self, folder: str, name: str) -> str:
        return f"{folder}/{self.stem(folder, name)}.html"


class SiteBuilder:
    def __init__(self, wh: Warehouse, out: Path, max_pairs: int = DEFAULT_MAX_PAIRS,
                 progress: Progress | None = None, workers: int | None = None) -> None:
        if max_pairs < 0:
            raise AgentHopError("--max-pairs must be 0 or more")
        if workers is not None and workers < 1:
            raise AgentHopError("--workers must be 1 or more")
        self.wh, self.out, self.max_pairs = wh, Path(out), max_pairs
        #: processes rendering the pages (reports/site_workers.py); None: site_workers.default_workers()
        self.workers = workers
        self.progress = progress or (lambda _msg: None)
        self.root: Path = self.out  # the staging folder while building
        self.dq: Sequence[Any] = ()
        self.bundle: Path | None = None
        self.leaderboards: dict[str, str] = {}  # benchmark -> its leaderboard page (relative to the root)
        self.model_pages: dict[str, str] = {}
        self.written: set[str] = set()  # the pages written so far (relative to the root): links go to these only
        self.run_benchmarks: dict[str, str] = {}  # every run the pages show -> its benchmark (the plan's)

    # -- the folder ---------------------------------------------------------------------------------
    def _check_out(self) -> None:
        if self.out.exists() and not self.out.is_dir():
            raise AgentHopError(f"--out {self.out}: is a file; give a folder for the site")
        if self.out.is_dir() and any(self.out.iterdir()) and not (self.out / MARKER).exists():
            raise AgentHopError(f"--out {self.out}: the folder is not empty and holds no site written by "
                                "agenthop-report site; give a new or empty folder")

    def _stage(self) -> None:
        parent = self.out.resolve().parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.root = Path(tempfile.mkdtemp(dir=parent, prefix=f".{self.out.name}.", suffix=".tmp"))
        except OSError as exc:
            raise AgentHopError(f"--out {self.out}: cannot write the site ({exc.strerror or exc})") from None

    def _swap_in(self) -> None:
        swap_folder(self.root, self.out, f"--out {self.out}: cannot write the site")
        self.root = self.out

    def page_site(self, rel: str) -> SitePage:
        return SitePage(self.root / rel, dq_issues=self.dq, shared_bundle=self.bundle, index=self.root / "index.html",
                        on_demand=True)

    def _write_bundle(self) -> None:
        body = javascript_bundle()
        path = self.root / "assets" / f"vega-{hashlib.sha256(body.encode()).hexdigest()[:12]}.js"
        write_html(body, path, report=self.out)
        self.bundle = path

    # -- the plan -----------------------------------------------------------------------------------
    def plan(self) -> Plan:
        from .core import leaderboard as shared_leaderboard
        from .core import model_page, pages
        from .core.runs import benchmarks_held, shared_runs

        wh = self.wh
        runs = shared_runs(wh)  # an empty warehouse is a user error saying so
        self.run_benchmarks = {r.run_id: str(r.benchmark) for r in runs}
        plan = Plan()
        paths = Paths()
        benches = sorted({str(r.benchmark) for r in runs})
        boards = {b: shared_leaderboard.build(wh, b, None)["boards"][0] for b in benches}
        self.leaderboards = {b: paths.file("leaderboard", b) for b in benches}
        for b in benches:
            plan.entries.append(Entry("leaderboard", f"Leaderboard · {b}", self.leaderboards[b],
                                      lambda s, b=b: pages.leaderboard(wh, s, b, None)[0], benchmark=b))
        reruns: dict[tuple[str, str], str] = {}
        for (b, m), group in itertools.groupby(sorted(runs, key=lambda r: (str(r.benchmark), r.model)),
                                               key=lambda r: (str(r.benchmark), r.model)):
            members = list(group)
            by_cond: dict[str, set[int]] = {}
            for r in members:
                by_cond.setdefault(r.condition, set()).add(r.replicate)
            if any(len(reps) >= 2 for reps in by_cond.values()):
                reruns[(b, m)] = paths.file(f"reruns/{paths.stem('', b)}", m)
                plan.entries.append(Entry("reruns", f"Reruns of {m} · {b}", reruns[(b, m)],
                                          lambda s, m=m, b=b: pages.reruns(wh, s, m, b)[0], benchmark=b, model=m))
        for b in benches:
            ranked = [r["model"] for r in boards[b]["rows"]]
            pairs = ranked_pairs(ranked)
            folder = f"compare/{paths.stem('', b)}"
            for a, c in pairs[: self.max_pairs]:
                plan.entries.append(Entry("compare", f"{a} vs {c}", paths.file(folder, f"{a}--{c}"),
                                          lambda s, a=a, c=c, b=b: pages.compare(wh, s, [a, c], [], None, b)[0],
                                          benchmark=b, model=f"{a},{c}"))
            plan.unrendered_pairs[b] = [{"a": a, "b": c, "command": compare_command(a, c, b)}
                                        for a, c in pairs[self.max_pairs:]]
        models = sorted({r.model for r in runs})
        self.model_pages = {m: paths.file("models", m) for m in models}
        for m in models:
            links_for = self._model_links(m, reruns)
            plan.entries.append(Entry("model", f"Model {m}", self.model_pages[m],
                                      lambda s, m=m, links_for=links_for: model_page.page(wh, s, m, links_for(s))[0],
                                      model=m, after_earlier=True))
        held = benchmarks_held(wh)
        plan.entries += self._specific(held)
        if has_scanner_results(wh):
            plan.entries.append(Entry("behaviours", "Behaviours", "behaviours.html",
                                      lambda s: pages.behaviours(wh, s, "holm")[0]))
        return plan

    def _model_links(self, model: str, reruns: dict[tuple[str, str], str]) -> Callable[[SitePage], dict[str, Any]]:
        def links(site: SitePage) -> dict[str, Any]:
            rel = lambda p: _relative(self.root / p, site.out)  # noqa: E731
            return {"index": rel("index.html"),
                    "leaderboard": {b: rel(p) for b, p in self.leaderboards.items() if p in self.written},
                    "reruns": {b: rel(p) for (b, m), p in reruns.items() if m == model and p in self.written}}
        return links

    def _specific(self, held: Sequence[str]) -> list[Entry]:
        """The benchmark-specific reports whose benchmark the warehouse holds."""
        from .paper import BENCHMARK as PAPER_BENCHMARK
        from .sciexplore import BENCHMARK as SCIEXPLORE_BENCHMARK

        wh, out = self.wh, []

        def paper(site: SitePage) -> str:
            from .paper.build import build, write_report
            from .paper.page import render_page

            report = build(wh, "full", None, None, [])
            html = render_page(wh, report, site)
            write_report(report, site.out.parent)
            return html

        def sciexplore(site: SitePage) -> str:
            from .sciexplore.build import build, write_tables
            from .sciexplore.data import check_fresh
            from .sciexplore.page import render_page

            check_fresh(wh)
            report = build(wh, "normalized-match", [])
            html = render_page(wh, report, site)
            write_tables(report, site.out.parent)
            return html

        if PAPER_BENCHMARK in held:
            out.append(Entry("specific", "AgentHop paper analysis", "paper/index.html", paper,
                             benchmark=PAPER_BENCHMARK))
        if SCIEXPLORE_BENCHMARK in held:
            out.append(Entry("specific", "SciExplore tables", "sciexplore/index.html", sciexplore,
                             benchmark=SCIEXPLORE_BENCHMARK))
        return out

    # -- building -----------------------------------------------------------------------------------
    def _render(self, entry: Entry) -> None:
        site = self.page_site(entry.rel)
        try:
            with site:
                html = entry.render(site)
                site.write_page(html)
        except AgentHopError as exc:  # one page the warehouse cannot give: listed on the index with why
            entry.problem = str(exc)
            return
        entry.written = True
        self.written.add(entry.rel)

    def build(self) -> Path:
        """Write the whole site; returns the index page's path."""
        self._check_out()
        with capped_memory(self.wh, MEMORY_LIMIT):
            return self._build()

    def _build(self) -> Path:
        from . import site_workers
        from .core import queries
        from .freshness import prepare

        self.dq = prepare(self.wh)
        plan = self.plan()
        self._stage()
        try:
            self._write_bundle()
            (self.root / MARKER).write_text("written by agenthop-report site\n", encoding="utf-8")
            n = len(plan.entries) + 1

            def announce(i: int, entry: Entry) -> None:
                where = f" ({entry.benchmark})" if entry.benchmark and entry.kind == "compare" else ""
                self.progress(f"[{i}/{n}] {entry.kind}: {entry.title}{where}")

            workers = min(self.workers or site_workers.default_workers(), len(plan.entries))
            with queries.batched(self.wh, self.run_benchmarks):  # the pages' per-run aggregates: a query for all
                if workers > 1 and site_workers.can_fork():
                    site_workers.render_all(self, plan.entries, workers, MEMORY_LIMIT, announce,
                                            site_workers.worker_memory_limit(MEMORY_LIMIT_MB, workers))
                else:
                    for i, entry in enumerate(plan.entries, 1):
                        announce(i, entry)
                        self._render(entry)
            self.progress(f"[{n}/{n}] index")
            self._index(plan)
        except BaseException:
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        self._swap_in()
        return self.out / "index.html"

    def _index(self, plan: Plan) -> None:
        from .core import marts
        from .core import runs as core_runs
        from .core.leaderboard import imported_runs
        from .core.model_page import COVERAGE

        wh = self.wh
        runs = core_runs.shared_runs(wh)
        cov: dict[str, dict[str, Any]] = {}
        if marts.has(wh, COVERAGE):  # every run of any benchmark, also those without shared trajectories
            cov = {str(r["run_id"]): r for r in wh.rows(f"SELECT * FROM {COVERAGE} ORDER BY benchmark, model, run_id")}
        site = self.page_site("index.html")
        site.index = None
        written = [e for e in plan.entries if e.written]
        run_rows = [{"run_id": r.run_id, "benchmark": str(r.benchmark), "model": r.model, "condition": r.condition,
                     "repeat": core_runs.registry.repeats_of(r.benchmark).name(r), "simulated": r.simulated,
                     "cov": cov.get(r.run_id)} for r in runs]
        shown = {r.run_id for r in runs}
        # runs without shared trajectories (a responses file, say): simulated as their imported summary says
        imported = {r.run_id: r.simulated for r in imported_runs(wh)}
        run_rows += [{"run_id": rid, "benchmark": str(c["benchmark"]), "model": str(c["model"]), "condition": "",
                      "repeat": "", "simulated": imported.get(rid, False), "cov": c}
                     for rid, c in cov.items() if rid not in shown]
        names = sorted({r["benchmark"] for r in run_rows} | set(core_runs.benchmarks_held(wh)))
        benches = []
        for b in names:
            mine = [r for r in run_rows if r["benchmark"] == b]
            c = [r["cov"] for r in mine if r["cov"] is not None]
            benches.append({
                "benchmark": b, "n_models": len({r["model"] for r in mine}), "n_runs": len(mine),
                **{k: (sum(int(x[k]) for x in c) if c else None) for k in ("n_scope", "n_scored", "n_error", "n_missing")},
                "pages": [e for e in written if e.benchmark == b and e.kind in ("leaderboard", "specific")],
                "compares": [e for e in written if e.benchmark == b and e.kind == "compare"],
                "unrendered": plan.unrendered_pairs.get(b, []),
            })
        models = []
        for m in sorted({r["model"] for r in run_rows}):
            mine = [r for r in run_rows if r["model"] == m]
            models.append({
                "model": m, "simulated": any(r["simulated"] for r in mine), "n_runs": len(mine),
                "benchmarks": sorted({r["benchmark"] for r in mine}),
                "page": next((e for e in written if e.kind == "model" and e.model == m), None),
                "reruns": [e for e in written if e.kind == "reruns" and e.model == m],
            })
        context = {
            "title": "AgentHop Warehouse · site",
            "benchmarks": benches, "models": models, "run_rows": run_rows,
            "problems": [e for e in plan.entries if e.problem],
            "behaviours": next((e for e in written if e.kind == "behaviours"), None),
            "href": lambda e: _relative(self.root / e.rel, site.out),
            "max_pairs": self.max_pairs,
        }
        prov = Provenance.build(wh.path, runs)
        html = site.render_page("site_index.html.j2", context, Charts(), prov)
        site.write_page(html)


@contextmanager
def capped_memory(wh: Warehouse, limit: str) -> Iterator[None]:
    """DuckDB's memory_limit of `wh`'s connection set to `limit` (a size DuckDB reads, "1GB") within the block,
    then as it was."""
    (before,) = wh.con.execute("SELECT current_setting('memory_limit')").fetchone()  # type: ignore[misc]
    wh.con.execute(f"SET memory_limit = '{limit}'")
    try:
        yield
    finally:
        wh.con.execute(f"SET memory_limit = '{before}'")


def has_scanner_results(wh: Warehouse) -> bool:
    """Whether the marts hold a scanner's prevalence in some run (after agenthop-scan and dbt build)."""
    return wh.has("scanner_prevalence") and bool(wh.rows("SELECT 1 FROM scanner_prevalence LIMIT 1"))


def build_site(wh: Warehouse, out: Path, max_pairs: int = DEFAULT_MAX_PAIRS, progress: Progress | None = None,
               workers: int | None = None) -> Path:
    """Render the whole site of `wh` into `out` with `workers` processes (None: $AGENTHOP_SITE_WORKERS, else the
    cores, at most 4; reports/site_workers.py); returns the path of its index page. With more than one worker, `wh`'s
    connection is closed and opened again (its memo kept, its temporary views and settings not)."""
    return SiteBuilder(wh, out, max_pairs, progress, workers).build()


__all__ = ["DEFAULT_MAX_PAIRS", "MARKER", "MEMORY_LIMIT", "MEMORY_LIMIT_MB", "capped_memory", "SiteBuilder", "SitePage", "build_site", "has_scanner_results", "ranked_pairs"]
