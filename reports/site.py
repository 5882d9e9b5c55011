"""A report site: one HTML page plus its folder of item pages and one shared chart bundle.

Layout for ``--out compare.html`` (folder mode, the default)::

    compare.html                      the report page
    compare_files/vega-<hash>.js      the offline Vega/Vega-Lite/vega-embed bundle, written once
    compare_files/items/<id>.html     one page per linked item (sample_id made file-name safe)

With ``single_file=True`` nothing but ``compare.html`` is written: the bundle is inlined and each item
page becomes a section of an "Items" appendix at the end of the page, linked by ``#`` anchors. All
links are relative, so the page and its folder open from ``file://`` and from any static host.

API (stable; other report modules, e.g. the paper report, build on it)::

    site = Site(Path("compare.html"), single_file=False)
    href = site.item_href("ST-0001")                # link from the main page
    href = site.item_href("ST-0001", from_page=p)    # link from another page p of this site
    site.write_item_pages(wh, ["ST-0001", ...], runs)  # 1-6 runs shown as turn-aligned columns
    html = site.render_page("compare.html.j2", context, charts, provenance)
    site.write_page(html)                            # swaps the folder in whole, then the page (atomic)

    # a further page of the same site (e.g. a paper report's section pages in the same folder):
    html = site.render_page("x.html.j2", ctx, charts, prov, page=site.folder / "x.html")
    site.write_page(html, page=site.folder / "x.html")

``render_page`` injects into the template: ``item_href(sample_id)`` (relative to that page),
``vega_bundle`` (a ``<script src=...>`` tag or the inlined bundle), the data-quality warnings
(``dq_issues``) given to the Site, and in single-file mode the item appendix. Item pages are
rendered by the shared :mod:`reports.core.item` (the item, each run's transcript and calls) or by
the pages a benchmark brings (``pages=``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from agenthop.harness.errors import AgentHopError

from .bundle import javascript_bundle
from .core.runs import RunInfo
from .render import Charts, Provenance, render, write_html
from .warehouse import Warehouse

_SAFE_RE = re.compile(r"[^A-Za-z0-9._-]+")

#: Most runs an item page shows side by side.
MAX_ITEM_RUNS = 6


#: Longest item page name kept as it is (file systems allow 255 bytes; longer ids are cut and hashed).
MAX_ITEM_NAME = 80


def _id_hash(sample_id: str, n: int) -> str:
    return hashlib.sha1(sample_id.encode("utf-8", "surrogatepass")).hexdigest()[:n]


def item_file_name(sample_id: str) -> str:
    """``<sample_id>.html`` when the id is file-name safe and short, else a sanitised name cut to 60
    characters plus a short hash of the id (so at most 73 characters)."""
    safe = _SAFE_RE.sub("_", sample_id).strip("._") or "item"
    if safe != sample_id or len(safe) > MAX_ITEM_NAME:
        safe = f"{safe[:60]}-{_id_hash(sample_id, 8)}"
    return f"{safe}.html"


def item_anchor(sample_id: str) -> str:
    """The element id of an item's section in single-file mode."""
    return "item-" + item_file_name(sample_id)[: -len(".html")]


#: The names of the site's item viewers and their data folders (reports/item_data.py): never an item's.
_VIEWER_NAME = re.compile(r"view(-\d+)?(-data)?")


class ItemNames:
    """The item page names of one site: ``item_file_name`` unless another id of the site took that name
    already (names are compared case-insensitively, as some file systems do), or the name is one of the
    item viewers' (``view``, ``view-2``, their ``-data`` folders); then a longer hash."""

    def __init__(self) -> None:
        self._stems: dict[str, str] = {}
        self._owners: dict[str, str] = {}

    def stem(self, sample_id: str) -> str:
        stem = self._stems.get(sample_id)
        if stem is None:
            stem = item_file_name(sample_id)[: -len(".html")]
            base = (_SAFE_RE.sub("_", sample_id).strip("._") or "item")[:60]
            k = 0
            while self._owners.get(stem.lower(), sample_id) != sample_id or _VIEWER_NAME.fullmatch(stem.lower()):
                k += 1
                stem = f"{base}-{_id_hash(sample_id, 16)}" + (f"-{k}" if k > 1 else "")
            self._owners[stem.lower()] = sample_id
            self._stems[sample_id] = stem
        return stem


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def swap_folder(staging: Path, folder: Path, error: str) -> None:
    """Put the folder `staging` (written beside `folder`) in the place of `folder`, whole: an existing
    `folder` is moved aside first and removed after. `error` begins the message of a failure."""
    old = None
    try:
        os.chmod(staging, 0o777 & ~_umask())
        if folder.exists():
            old = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.", suffix=".old"))
            os.replace(folder, old / "x")
        os.replace(staging, folder)
    except OSError as exc:
        raise AgentHopError(f"{error} ({exc.strerror or exc})") from None
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _outcomes_of(runs: Sequence[RunInfo]) -> Any:
    """How the pages of `runs` name an outcome (their benchmark's words)."""
    from .core import registry

    return registry.outcomes_of(runs[0].benchmark if runs else None)


def _relative(target: Path, from_page: Path) -> str:
    rel = os.path.relpath(target.resolve(), from_page.resolve().parent)
    return "/".join(quote(part) for part in Path(rel).parts)


@dataclass
class _InlineItem:
    sample_id: str
    anchor: str
    html: Markup  # rendered by our autoescaped templates


@dataclass
class Site:
    """One report page (``out``) and its folder ``<stem>_files`` (or one inlined file)."""

    out: Path
    single_file: bool = False
    dq_issues: Sequence[Any] = ()
    #: shared item pages as one viewer page and data files loaded on demand (reports/item_data.py)
    on_demand: bool = False
    _items: dict[str, Path] = field(default_factory=dict)
    _names: ItemNames = field(default_factory=ItemNames)
    _inline: list[_InlineItem] = field(default_factory=list)
    _inline_charts: dict[str, dict[str, Any]] = field(default_factory=dict)
    _viewed: dict[str, Path] = field(default_factory=dict)  # item -> the viewer page that shows it
    _viewer_hrefs: dict[tuple[Path, Path], str] = field(default_factory=dict)  # (viewer, from page) -> its link
    _bundle_file: Path | None = None
    _staging: Path | None = None  # the folder being written, renamed to `folder` by write_page
    _committed: bool = False

    def __post_init__(self) -> None:
        self.out = Path(self.out)

    # -- the folder is written beside its final place and swapped in whole -----------------------------
    def _stage(self, path: Path) -> Path:
        """Where a file of the folder is written before the main page commits the folder."""
        if self._committed or self.single_file:
            return path
        rel = path.relative_to(self.folder)
        if self._staging is None:
            try:
                self.out.parent.mkdir(parents=True, exist_ok=True)
                self._staging = Path(tempfile.mkdtemp(dir=self.out.parent, prefix=f".{self.folder.name}.", suffix=".tmp"))
            except OSError as exc:
                raise AgentHopError(f"--out {self.out}: cannot write the report ({exc.strerror or exc}: "
                                    f"{exc.filename or self.out.parent})") from None
        return self._staging / rel

    def _write_folder_file(self, text: str | bytes, path: Path) -> None:
        """Write a file of the folder: text as UTF-8, bytes as they are (the data files of reports/item_data.py)."""
        target = self._stage(path)
        if target == path:
            write_html(text, path, report=self.out)
            return
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
        except OSError as exc:
            raise AgentHopError(f"--out {self.out}: cannot write the report ({exc.strerror or exc})") from None

    def _commit_folder(self) -> None:
        """Replace `folder` by the staged one (old item pages of an earlier report go with it)."""
        if self._staging is None or self._committed:
            self._committed = True
            return
        swap_folder(self._staging, self.folder, f"--out {self.out}: cannot write the report")
        self._staging, self._committed = None, True

    def __enter__(self) -> Site:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:
            self.discard()

    def discard(self) -> None:
        """Remove a half-written folder (the CLI calls this when a report fails)."""
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None

    # -- paths ---------------------------------------------------------------------------------------
    @property
    def folder(self) -> Path:
        """``X_files`` next to ``X.html``: item pages and the chart bundle."""
        return self.out.with_name(self.out.stem + "_files")

    @property
    def items_dir(self) -> Path:
        return self.folder / "items"

    def item_path(self, sample_id: str) -> Path:
        return self.items_dir / f"{self._names.stem(sample_id)}.html"

    def item_anchor(self, sample_id: str) -> str:
        """The element id of an item's section in single-file mode."""
        return "item-" + self._names.stem(sample_id)

    def item_href(self, sample_id: str, from_page: Path | None = None) -> str:
        """Relative link to an item's page (``#item-...`` in single-file mode)."""
        if self.single_file:
            return "#" + self.item_anchor(sample_id)
        viewer = self._viewed.get(sample_id)
        if viewer is not None:  # the viewer's link is the same for each of its items: resolved once per page
            key = (viewer, from_page or self.out)
            href = self._viewer_hrefs.get(key)
            if href is None:
                href = self._viewer_hrefs[key] = _relative(*key)
            return href + "#" + quote(self._names.stem(sample_id))
        return _relative(self.item_path(sample_id), from_page or self.out)

    def write_file(self, data: str | bytes, path: Path) -> None:
        """Write a file of the folder (a data file beside the page), swapped in with the folder."""
        self._write_folder_file(data, path)

    def relative(self, path: Path, from_page: Path | None = None) -> str:
        """Relative link to a file of this site (from the main page unless `from_page`)."""
        return _relative(path, from_page or self.out)

    def has_item(self, sample_id: str) -> bool:
        return sample_id in self._items

    # -- the chart bundle -----------------------------------------------------------------------------
    def bundle_path(self) -> Path:
        """Where the shared bundle lives (written on first use)."""
        if self._bundle_file is None:
            body = javascript_bundle()
            digest = hashlib.sha256(body.encode()).hexdigest()[:12]
            path = self.folder / f"vega-{digest}.js"
            self._write_folder_file(body, path)
            self._bundle_file = path
        return self._bundle_file

    def bundle_tag(self, page: Path | None = None) -> Markup:
        """``<script>`` for the bundle: inlined (single file) or a relative ``src``."""
        if self.single_file:
            return Markup("<script>") + Markup(javascript_bundle()) + Markup("</script>")  # trusted library
        src = _relative(self.bundle_path(), page or self.out)
        return Markup('<script src="{}"></script>').format(src)

    # -- pages ----------------------------------------------------------------------------------------
    def render_page(self, template: str, context: dict[str, Any], charts: Charts, provenance: Provenance,
                    page: Path | None = None) -> str:
        """Render one page of the site (the main page unless `page` is given)."""
        page = page or self.out
        main = page == self.out
        specs = dict(charts.specs)
        appendix: list[_InlineItem] = []
        if self.single_file and main:
            specs.update(self._inline_charts)
            appendix = list(self._inline)
        extra = {
            "item_href": lambda sid: self.item_href(sid, from_page=page),
            "item_appendix": appendix,
            "dq_issues": list(self.dq_issues),
        }
        bundle = self.bundle_tag(page) if specs else Markup("")
        return render(template, {**extra, **context}, charts, provenance, bundle=bundle, specs=specs)

    def write_page(self, html: str, page: Path | None = None) -> Path:
        """Write a page atomically. The main page is written last: writing it first swaps the folder
        (item pages, bundle) into place whole, so a failed report never leaves a mixed folder."""
        page = page or self.out
        if page == self.out:
            try:
                self._commit_folder()
            except BaseException:
                self.discard()
                raise
            return write_html(html, page)
        if self.folder in page.parents:
            self._write_folder_file(html, page)
            return page
        return write_html(html, page, report=self.out)

    def write_item_pages(self, wh: Warehouse, sample_ids: Sequence[str], runs: Sequence[RunInfo],
                         provenance: Provenance | None = None, pages: Any = None) -> list[str]:
        """Render one page per item showing `runs` (1-6) side by side; returns the ids written.

        `pages` renders them: an object with ``load(wh, sample_ids, runs)``, ``context(data, sample_id,
        runs, charts)``, ``template`` and ``section_template`` (the shared pages are
        ``reports.core.item.PAGES``, the default; a benchmark may bring its own, as
        ``reports.agenthop.item.PAGES``). Items already written by this Site are skipped. In single-file
        mode the pages are kept for the main page's appendix instead of being written."""
        from . import item_data
        from .core.item import PAGES as shared_pages

        if pages is None:
            pages = shared_pages

        if not runs:
            raise AgentHopError("item pages need at least one run")
        if len(runs) > MAX_ITEM_RUNS:
            raise AgentHopError(f"item pages show at most {MAX_ITEM_RUNS} runs side by side, got {len(runs)}")
        prov = provenance or Provenance.build(wh.path, runs)
        todo = [s for s in dict.fromkeys(sample_ids) if s not in self._items]
        if not todo:
            return []
        if self.on_demand and not self.single_file and pages is shared_pages:
            todo_static = self._write_viewer(wh, todo, runs, prov, pages)
        else:
            todo_static = todo
        step = item_data.BATCH_ITEMS
        for at in range(0, len(todo_static), step):  # a batch of items' data at a time
            batch = todo_static[at:at + step]
            data = pages.load(wh, batch, runs)
            for sid in batch:
                self._write_static_item(data, sid, runs, prov, pages)
        return todo

    def _write_static_item(self, data: Any, sid: str, runs: Sequence[RunInfo], prov: Provenance, pages: Any) -> None:
        """One item's page (or, in single-file mode, its section of the main page's appendix)."""
        page = self.item_path(sid)
        if self.single_file:
            box = Charts(prefix=self.item_anchor(sid) + "-chart")
            ctx = pages.context(data, sid, runs, box)
            html = render(pages.section_template, {**ctx, "item_href": self.item_href,
                                                     "section_id": self.item_anchor(sid)},
                          box, prov, bundle=Markup(""), specs=box.specs)
            self._inline.append(_InlineItem(sid, self.item_anchor(sid), Markup(html)))  # autoescaped output
            self._inline_charts.update(box.specs)
        else:
            box = Charts()
            ctx = pages.context(data, sid, runs, box)
            ctx["back_href"] = _relative(self.out, page)
            ctx["back_title"] = self.out.name
            html = self.render_page(pages.template, ctx, box, prov, page=page)
            self._write_folder_file(html, page)
        self._items[sid] = page

    def _write_viewer(self, wh: Warehouse, todo: Sequence[str], runs: Sequence[RunInfo], prov: Provenance,
                      pages: Any) -> list[str]:
        """Write the items of `todo` as data files and one viewer page (reports/item_data.py), a batch of chunks
        at a time (their items' data loaded, formatted and written, then let go); returns the items whose page
        must be written whole instead (a header the viewer cannot lay out)."""
        from . import item_data

        k = len({p for p in self._viewed.values()})
        viewer = self.items_dir / (f"{item_data.VIEWER_STEM}.html" if k == 0 else f"{item_data.VIEWER_STEM}-{k + 1}.html")
        data_dir = viewer.with_name(viewer.stem + "-data")
        n = item_data.n_chunks_for(len(todo))
        members: list[list[str]] = [[] for _ in range(n)]  # the items of each chunk, in the order of `todo`
        for sid in todo:
            members[item_data.chunk_of(self._names.stem(sid), n)].append(sid)
        static: list[str] = []
        box = Charts()
        meta: tuple[Any, Any] | None = None  # the outcomes' words and the metric, as the items' data gives them
        sizer = item_data.sizer_for(wh.memo, ",".join(sorted({str(r.benchmark) for r in runs})))
        with item_data.ChunkWriter(self._write_folder_file) as out:
            for batch in sizer.batches([len(m) for m in members]):
                data = pages.load(wh, [sid for c in batch for sid in members[c]], runs)
                meta = meta or (data.outcomes, data.metric)
                chars = 0
                for c in batch:
                    ch = item_data.Chunk()
                    for sid in members[c]:
                        body = item_data.payload(pages.context(data, sid, runs, box), ch)
                        if body is None:
                            static.append(sid)
                            continue
                        ch.items[self._names.stem(sid)] = body
                        self._viewed[sid] = viewer
                        self._items[sid] = viewer
                    chars += ch.chars
                    if ch.items:
                        out.add(ch, data_dir / f"{c}.js")
                sizer.saw(sum(len(members[c]) for c in batch), chars)
                del data
        if len(static) == len(todo):
            return static
        outcomes, metric = meta or (None, None)
        ctx = {"title": "Item", "runs": list(runs), "n_chunks": n, "data_dir": data_dir.name,
               "oc": outcomes or _outcomes_of(runs), "metric": metric,
               "back_href": _relative(self.out, viewer), "back_title": self.out.name}
        self._write_folder_file(self.render_page("core_item_viewer.html.j2", ctx, Charts(), prov, page=viewer), viewer)
        order = {sid: i for i, sid in enumerate(todo)}
        return sorted(static, key=order.__getitem__)
