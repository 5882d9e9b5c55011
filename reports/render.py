"""HTML rendering: one Jinja template per report, autoescape on, charts embedded offline.

Every page inlines the Vega/Vega-Lite/vega-embed bundle once; each chart is a ``<div>`` plus a
``vegaEmbed(...)`` call with the SVG renderer. Chart specs are serialised with :func:`script_json`,
which escapes ``<``, ``>`` and ``&`` as JSON unicode escapes, so no data string can close the script
element (a superset of the usual ``'</'`` -> ``'<\\/'`` rule). Data from trajectories reaches the page
only through autoescaped template variables; no template applies ``|safe`` to data.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from agenthop.harness.errors import AgentHopError

from . import stats
from .bundle import javascript_bundle
from .doc_links import Definitions
from .values import control_pictures, jsonable
from .core.runs import RunInfo

TEMPLATES = Path(__file__).resolve().parent / "templates"
DEFAULT_OUT_DIR = Path("reports_out")


def script_json(value: Any) -> Markup:
    """JSON for a <script> block: '<', '>', '&', U+2028/9 escaped, so '</script>' cannot appear."""
    text = json.dumps(value, default=jsonable, separators=(",", ":"), ensure_ascii=False)
    text = (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
    return Markup(text)  # escaped above for the script context


# -- filters ----------------------------------------------------------------------------------------


def _num(v: Any) -> float | None:
    v = jsonable(v)
    if v is None or isinstance(v, (str, bytes)):
        return None
    return float(v)


def pct(v: Any, digits: int = 1) -> str:
    """A fraction as a percentage number without the sign: 0.8541 -> '85.4'."""
    x = _num(v)
    return "n/a" if x is None else f"{100 * x:.{digits}f}"


def pp(v: Any, digits: int = 1) -> str:
    """A fraction difference in signed percentage points: 0.031 -> '+3.1'."""
    x = _num(v)
    return "n/a" if x is None else f"{100 * x:+.{digits}f}"


def signed(v: Any, digits: int = 1) -> str:
    """A difference already in its unit, with its sign: 24.12 -> '+24.1' (as every Δ column prints)."""
    x = _num(v)
    return "n/a" if x is None else f"{x:+.{digits}f}"


def num(v: Any, digits: int = 1) -> str:
    x = _num(v)
    if x is None:
        return "n/a"
    return f"{x:,.{digits}f}"


def pval(v: Any) -> str:
    return stats.format_p(_num(v))


def pstat(v: Any) -> str:
    """'p = 0.0480' or 'p < 0.001' for running text."""
    text = stats.format_p(_num(v))
    return f"p {text[0]} {text[1:]}" if text.startswith("<") else f"p = {text}"


def acc_pm(k: Any, n: Any) -> Markup:
    """A cell's "acc ± h" (the paper's numbers); where that misleads about the interval (at 0% and 100%,
    see stats.acc_pm_lopsided) the full Wilson 95% interval follows it, e.g. "100.0 ± 0.0 [95.9, 100.0]"."""
    if k is None or n is None:
        return Markup("n/a")
    k, n = int(k), int(n)
    text = Markup.escape(stats.format_acc_pm(k, n))
    if stats.acc_pm_lopsided(k, n):
        text += Markup(' <span class="ci" title="Wilson 95%% interval, %%">%s</span>') % stats.wilson_text(k, n)
    return text


def acc_title(k: Any, n: Any) -> str:
    """The tooltip of an "acc ± h" cell: k/n and the full interval, e.g. "85/90 correct; Wilson 95% interval [87.6, 97.6] %"."""
    if k is None or n is None or not int(n):
        return "no items"
    return f"{int(k)}/{int(n)} correct; Wilson 95% interval {stats.wilson_text(int(k), int(n))} %"


def pretty_json(v: Any) -> str:
    """args_json normalised to one readable line (raw text if it is not JSON); autoescape escapes it."""
    if v is None:
        return ""
    try:
        return json.dumps(json.loads(v), ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        return str(v)


def cell(v: Any) -> str:
    """Generic table cell: floats with four significant digits, NULL as 'n/a'."""
    v = jsonable(v)
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def clip(v: Any, limit: int = 160) -> str:
    s = "" if v is None else str(v)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _count(n: Any, noun: str) -> str:
    """'1 turn', '3 turns'; an unknown count as 'n/a turns'."""
    if n is None:
        return f"n/a {noun}s"
    return f"{n} {noun}{'' if n == 1 else 's'}"


def run_summary_line(s: Mapping[str, Any], n_calls: Any) -> str:
    """One run's line under its name on an item page, from its trajectory row `s` and its number of tool
    calls: "score 0.500 · ended by answer · 3 turns · 2 calls · 1,234 tokens", then its wall time
    ("12.3 s") when recorded and "attempt 2 of 3" when the run tried the item more than once. A missing
    score, ending or count reads "n/a". The static item page (``_core_macros.html.j2``) and the on-demand
    item viewer (:mod:`reports.item_data`) both print this line."""
    score = _num(s.get("score"))
    ended = s.get("terminated_by")
    parts = [f"score {'n/a' if score is None else f'{score:.3f}'}", f"ended by {'n/a' if ended is None else ended}",
             _count(s.get("total_turns"), "turn"), _count(n_calls, "call"), f"{num(s.get('total_tokens'), 0)} tokens"]
    if s.get("wall_time_s") is not None:
        parts.append(f"{num(s['wall_time_s'], 1)} s")
    n_attempts = s.get("n_attempts")
    if n_attempts and n_attempts > 1:
        parts.append(f"attempt {s['attempt'] + 1} of {n_attempts}")
    return " · ".join(parts)


_ID_RE = re.compile(r"[^A-Za-z0-9_-]+")


def anchor(*parts: Any) -> str:
    """A stable HTML id from arbitrary strings (unsafe characters replaced, a hash keeps it unique)."""
    raw = "|".join(str(p) for p in parts)
    return "a-" + _ID_RE.sub("-", raw)[:40].strip("-") + "-" + hashlib.sha1(raw.encode()).hexdigest()[:8]


def visible_controls(value: Any) -> Any:
    """A text value with its control characters (NUL, ESC, ...) shown as control pictures (U+2400...;
    C1 controls as U+FFFD; values.control_pictures), which HTML may not hold raw; markup and other values
    as they are."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return control_pictures(value)
    return value


#: Soft hyphens (U+00AD) in the long words of table headers: a narrow numeric column may break its header
#: there ("Conver-" / "sion") instead of growing as wide as the word.
HYPHENATION = {"Conversion": "Conver\u00adsion", "Concentration": "Concen\u00adtration",
               "Discordant": "Discor\u00addant"}
_HYPHEN_RE = re.compile("|".join(sorted(HYPHENATION, key=len, reverse=True)))


def header_breaks(text: Any) -> str:
    """A table header with break opportunities: after "(", ".", "/" (zero-width spaces) and inside its
    long words (soft hyphens, HYPHENATION)."""
    s = _HYPHEN_RE.sub(lambda m: HYPHENATION[m.group()], str(text))
    return s.replace("(", "\u200b(").replace(".", ".\u200b").replace("/", "/\u200b")


def tool_name(text: Any) -> Markup:
    """A tool name kept whole on its line where it fits (an inline block, base.html.j2's ``.tool-name``) and
    broken after its underscores only where it does not (``get_<wbr>most_<wbr>recent_<wbr>transactions``),
    so a table of long names (AgentDojo's) wraps inside its column instead of pushing its numbers off the
    page; copied or searched, the name reads as it is."""
    if text is None:
        return Markup("")
    parts = control_pictures(str(text)).split("_")
    return Markup('<span class="tool-name">%s</span>') % Markup("_<wbr>").join(Markup.escape(p) for p in parts)


def tool_seq(text: Any) -> Markup:
    """A stored tool sequence ('a>b>c', a trigram) as the pages print it: 'a → b → c', a line breaking
    between names (the arrow stays with the name before it), each name as tool_name prints it."""
    if text is None:
        return Markup("")
    return Markup("\u00a0→ ").join(tool_name(part) for part in str(text).split(">"))


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,  # every template, whatever its extension
        finalize=visible_controls,  # every {{ value }}, before it is escaped
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        script_json=script_json, cell=cell, pct=pct, pp=pp, signed=signed, num=num, pval=pval, pstat=pstat, pretty_json=pretty_json, clip=clip,
        anchor=lambda v, *rest: anchor(v, *rest), header_breaks=header_breaks, tool_name=tool_name, tool_seq=tool_seq,
    )
    env.globals.update(acc_pm=acc_pm, acc_title=acc_title, acc_pm_meaning=stats.ACC_PM_MEANING, anchor=anchor, significant=stats.significant,
                       run_summary_line=run_summary_line)
    return env


def add_template_globals(**values: Any) -> None:
    """Functions a benchmark's own templates call (reports/<benchmark>/__init__.py adds them on import)."""
    environment().globals.update(values)


# -- provenance ---------------------------------------------------------------------------------------


def package_version() -> str:
    try:
        return metadata.version("agenthop-warehouse")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _git(args: Sequence[str], cwd: Path) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def commit_of(source: Path) -> str | None:
    """The git commit of the checkout that tracks the file `source` ("<sha>", or "<sha> (with
    uncommitted changes)"), or None when no checkout tracks it (an installed wheel, no git on PATH)."""
    here = source.resolve().parent
    if _git(["ls-files", "--error-unmatch", source.name], here) is None:
        return None  # not a tracked file of a checkout (e.g. site-packages inside some repository)
    sha = _git(["rev-parse", "HEAD"], here)
    if not sha:
        return None
    dirty = _git(["status", "--porcelain", "--untracked-files=no"], here)
    return f"{sha} (with uncommitted changes)" if dirty else sha


@lru_cache(maxsize=1)
def project_commit() -> str | None:
    """The commit of the project checkout this package runs from (None from an installed wheel)."""
    return commit_of(Path(__file__))


def display_path(path: Path) -> str:
    """`path` relative to the working directory (absolute when it is on another drive)."""
    resolved = Path(path).resolve()
    try:
        return os.path.relpath(resolved, Path.cwd())
    except ValueError:
        return str(resolved)


def _json_object(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _seconds(v: Any) -> str:
    x = _num(v)
    return "" if x is None else f"{x:g} s"


def run_source(run: RunInfo) -> dict[str, str] | None:
    """Where an imported run came from, as its footer shows it (None for a run without that record: the
    harness's own, or a warehouse built before it was kept): the source's package versions, the task's
    version and arguments, and its limits, each in its own field (a message limit is not a turn cap)."""
    s = run.summary
    recorded = ("source_packages_json", "task_version", "task_args_json", "message_limit", "time_limit_s",
                "working_limit_s")
    if all(s.get(k) is None for k in recorded):
        return None
    packages = _json_object(s.get("source_packages_json"))
    args = _json_object(s.get("task_args_json"))
    limits = [(label, text) for label, text in (
        ("message limit", f"{int(s['message_limit']):,}" if s.get("message_limit") is not None else ""),
        ("turn limit", f"{int(s['max_turns']):,}" if s.get("max_turns") else ""),
        ("token limit", f"{int(s['max_total_tokens']):,}" if s.get("max_total_tokens") else ""),
        ("time limit", _seconds(s.get("time_limit_s"))),
        ("working limit", _seconds(s.get("working_limit_s"))),
    ) if text]
    return {
        "benchmark": str(run.benchmark or ""),
        "packages": ", ".join(f"{k} {v}" for k, v in sorted(packages.items())) or "not recorded",
        "task_version": "" if s.get("task_version") is None else str(s["task_version"]),
        "task_args": ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in sorted(args.items())) or "none",
        "limits": ", ".join(f"{label} {text}" for label, text in limits) or "none recorded",
    }


@dataclass
class Provenance:
    warehouse: str
    run_ids: list[str]
    benchmark_hashes: list[str]
    package_version: str
    generated_at: str
    git_commit: str | None = None
    #: imported runs' provenance (run_source), one entry per distinct record with the runs that share it
    sources: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def build(cls, warehouse: Path, runs: Sequence[RunInfo]) -> Provenance:
        hashes = sorted({r.benchmark_sha256 for r in runs if r.benchmark_sha256})
        sources: dict[tuple[str, ...], dict[str, Any]] = {}
        for r in runs:
            src = run_source(r)
            if src is not None:
                sources.setdefault(tuple(src.values()), {**src, "run_ids": []})["run_ids"].append(r.run_id)
        return cls(
            warehouse=display_path(warehouse),
            run_ids=[r.run_id for r in runs],
            benchmark_hashes=hashes,
            package_version=package_version(),
            generated_at=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
            git_commit=project_commit(),
            sources=list(sources.values()),
        )


# -- page ---------------------------------------------------------------------------------------------


class Charts:
    """Collects the chart specs of one page under generated element ids."""

    def __init__(self, prefix: str = "chart") -> None:
        self.prefix = prefix
        self.specs: dict[str, dict[str, Any]] = {}

    def add(self, spec: dict[str, Any] | None) -> str | None:
        """Register a spec; returns its element id (None when there was nothing to chart)."""
        if spec is None:
            return None
        cid = f"{self.prefix}-{len(self.specs) + 1}"
        self.specs[cid] = spec
        return cid


def render(template: str, context: dict[str, Any], charts: Charts, provenance: Provenance, *,
           bundle: Markup | None = None, specs: dict[str, dict[str, Any]] | None = None) -> str:
    """Render a report page to a string.

    `bundle` is the chart-library markup (a ``<script src>`` tag from :class:`reports.site.Site`, or
    the inlined bundle when None); `specs` the chart specs to embed (default: `charts.specs`)."""
    env = environment()
    specs = charts.specs if specs is None else specs
    if bundle is None:
        bundle = Markup("<script>") + Markup(javascript_bundle()) + Markup("</script>") if specs else Markup("")
    defs = Definitions()  # caption links and the page's definitions appendix (reports/doc_links.py)
    ctx = {"item_href": None, "item_appendix": [], "dq_issues": [], **context,
           "definition": defs.link, "definitions_appendix": defs.appendix}
    return env.get_template(template).render(
        **ctx, charts=specs, vega_bundle=bundle, provenance=provenance
    )


def write_html(html: str | bytes, out: Path, report: Path | None = None) -> Path:
    """Write atomically (temporary file + rename) so a crash never leaves half a report (text as UTF-8,
    bytes as they are).

    Errors name `report` (the --out page) when `out` is a file of its folder."""
    label = report or out
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    except OSError as exc:
        raise AgentHopError(f"--out {label}: cannot write the report ({_os_reason(exc)})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(html.encode("utf-8") if isinstance(html, str) else html)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, out)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise AgentHopError(f"--out {label}: cannot write the report ({_os_reason(exc)})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out


def _os_reason(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return f"{reason}: {exc.filename}" if exc.filename else reason


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_SLUG_RE = re.compile(r"[^A-Za-z0-9._-]+")


def default_out(kind: str, *names: str) -> Path:
    """reports_out/<kind>-<names>.html with file-system-safe names."""
    slug = "-vs-".join(_SLUG_RE.sub("_", n).strip("_") or "x" for n in names)[:120]
    return DEFAULT_OUT_DIR / (f"{kind}-{slug}.html" if slug else f"{kind}.html")
