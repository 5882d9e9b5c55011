"""Report captions link to the definitions they use; the page carries those definitions with it.

A caption calls ``definition("metrics.md#paper-recall")`` in a template. The link points to a
"Definitions" appendix at the end of the same page, which holds that part of the project's docs
(``docs/metrics.md``, section or bullet ``paper-recall``) rendered as HTML. So a report that is
shared, put on a static host or printed into a paper's appendix explains its numbers without
links to files on the author's machine, and the wording always matches the docs of the version
that made it.

Per page: ``defs = Definitions()``; the template calls ``defs.link(ref)`` (as ``definition``) in
its captions and ``defs.appendix()`` at the end; :func:`reports.render.render` does the wiring.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from markdown_it import MarkdownIt
from markupsafe import Markup

from agenthop.harness.errors import AgentHopError

#: The project's docs directory, next to the reports package (docs/ of a checkout, agenthop/docs/ of a wheel).
DOCS_DIR = Path(__file__).resolve().parents[1] / "docs"

_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_EXPLICIT_ID_RE = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']\s*>\s*</a>\s*""")
_BULLET_RE = re.compile(r"^(\s*)[-*]\s")
_LINK_RE = re.compile(r'<a href="([^"]*)">(.*?)</a>', re.S)
_HTML_HEADING_RE = re.compile(r"<(/?)h[1-6]>")


def heading_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def element_id(ref: str) -> str:
    """The appendix element id of ``<page>.md#<anchor>``."""
    page, _, anchor = ref.partition("#")
    return re.sub(r"[^A-Za-z0-9_-]+", "-", f"def-{Path(page).stem}-{anchor}")


@dataclass(frozen=True)
class DocSection:
    ref: str       # "<page>.md#<anchor>"
    title: str     # plain text
    markdown: str  # the section or bullet, without its heading


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _section_after_heading(lines: list[str], h: int) -> tuple[str, list[str]]:
    """The heading at line h and the lines under it, up to the next heading of the same or a higher level."""
    m = _HEADING_RE.match(lines[h])
    assert m is not None, lines[h]
    level, title = len(m.group(1)), m.group(2)
    end = h + 1
    while end < len(lines):
        nxt = _HEADING_RE.match(lines[end])
        if nxt and len(nxt.group(1)) <= level:
            break
        end += 1
    return title, lines[h + 1:end]


def _block_at(lines: list[str], i: int) -> tuple[str, list[str]]:
    """The bullet (with its continuation and nested lines) or paragraph that holds line i, and its bold term."""
    start = i
    while start > 0 and not _BULLET_RE.match(lines[start]) and lines[start - 1].strip():
        start -= 1
    base = _indent(lines[start])
    bullet = _BULLET_RE.match(lines[start]) is not None
    end = start + 1
    while end < len(lines) and lines[end].strip() and (not bullet or _indent(lines[end]) > base):
        end += 1
    block = [ln[base:] if _indent(ln) >= base else ln for ln in lines[start:end]]
    if bullet:  # the entry is the bullet's text, not a one-item list
        width = _BULLET_RE.match(block[0]).end()
        block = [block[0][width:]] + [ln[width:] if _indent(ln) >= width else ln.lstrip() for ln in block[1:]]
    term = re.search(r"\*\*(.+?)\*\*", lines[i].split("</a>", 1)[-1]) or re.search(r"\*\*(.+?)\*\*", "\n".join(block))
    return (term.group(1) if term else ""), block


@lru_cache(maxsize=None)
def _page_lines(page: str) -> tuple[str, ...]:
    path = DOCS_DIR / page
    try:
        return tuple(path.read_text(encoding="utf-8").splitlines())
    except OSError:
        raise AgentHopError(f"report template cites docs/{page}, which is not installed at {DOCS_DIR}") from None


def _enclosing_heading(lines: list[str], i: int) -> str:
    for j in range(i, -1, -1):
        m = _HEADING_RE.match(lines[j])
        if m:
            return m.group(2)
    return ""


@lru_cache(maxsize=None)
def doc_section(ref: str) -> DocSection:
    """The part of the docs that ``ref`` (``<page>.md#<anchor>``) names.

    An anchor on a heading (its GitHub slug, or an explicit ``<a id>`` alone on the line above it)
    names the heading's whole section; an ``<a id>`` inside a bullet or paragraph names that bullet
    or paragraph."""
    page, _, anchor = ref.partition("#")
    lines = list(_page_lines(page))
    for i, line in enumerate(lines):
        m = _HEADING_RE.match(line)
        if m and heading_slug(m.group(2)) == anchor:
            title, body = _section_after_heading(lines, i)
            return DocSection(ref, _plain(title), "\n".join(body))
        if f'id="{anchor}"' not in line:
            continue
        if not _EXPLICIT_ID_RE.sub("", line).strip():  # the anchor alone on its line: the next heading
            h = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
            if h is not None and _HEADING_RE.match(lines[h]):
                title, body = _section_after_heading(lines, h)
                return DocSection(ref, _plain(title), "\n".join(body))
        term, block = _block_at(lines, i)
        return DocSection(ref, _plain(term) or _plain(_enclosing_heading(lines, i)), "\n".join(block))
    raise AgentHopError(f"report template cites docs/{ref}, but docs/{page} has no anchor {anchor!r}")


def _plain(markdown: str) -> str:
    return re.sub(r"[`*]|<[^>]+>", "", markdown).strip()


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable("table")


def render_section(section: DocSection, linked: dict[str, str]) -> Markup:
    """A docs section as HTML for the appendix: headings demoted under the entry's own, anchors
    dropped, and links kept only to other entries of the same appendix (`linked`: ref -> id)."""
    page = section.ref.partition("#")[0]
    html = _markdown().render(_EXPLICIT_ID_RE.sub("", section.markdown))
    html = _HTML_HEADING_RE.sub(lambda m: f"<{m.group(1)}h4>", html)

    def relink(m: re.Match[str]) -> str:
        href, text = m.group(1), m.group(2)
        target_page, _, anchor = href.partition("#")
        target = f"{target_page or page}#{anchor}"
        return f'<a href="#{linked[target]}">{text}</a>' if anchor and target in linked else text

    return Markup(_LINK_RE.sub(relink, html))


@dataclass(frozen=True)
class AppendixEntry:
    id: str
    source: str  # "docs/metrics.md#paper-recall"
    title: str
    html: Markup


class Definitions:
    """The definitions one page links to, in order of first use."""

    def __init__(self) -> None:
        self.refs: dict[str, str] = {}  # ref -> element id; refs naming the same text share an entry
        self._by_text: dict[tuple[str, str], str] = {}
        self._entries: list[str] = []  # the refs that own an entry, in order of first use

    def link(self, ref: str, label: str = "definition") -> Markup:
        """An escaped link from a caption to the appendix entry of ``ref`` (``<page>.md#<anchor>``)."""
        if ref not in self.refs:
            section = doc_section(ref)  # a wrong reference fails the render, not the reader
            key = (ref.partition("#")[0], section.markdown)
            if key not in self._by_text:
                self._by_text[key] = element_id(ref)
                self._entries.append(ref)
            self.refs[ref] = self._by_text[key]
        return Markup('<a class="def" href="#{}" title="docs/{}">{}</a>').format(self.refs[ref], ref, label)

    def appendix(self) -> list[AppendixEntry]:
        """The entries linked so far, each with its docs text rendered."""
        return [AppendixEntry(self.refs[ref], f"docs/{ref}", doc_section(ref).title,
                              render_section(doc_section(ref), self.refs)) for ref in self._entries]


__all__ = ["DOCS_DIR", "AppendixEntry", "DocSection", "Definitions", "doc_section", "element_id", "heading_slug",
           "render_section"]
