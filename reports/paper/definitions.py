"""The definitions the paper report links to: the "Paper analyses" section of docs/metrics.md as HTML.

docs/metrics.md is the one place these definitions are written. It ships beside the dbt project
(the source checkout, or agenthop/dbt_project/docs/ in a wheel). The report renders its paper
section into a page of the report's folder, so every section can link its definition offline.
The conversion is deliberately small: paragraphs, `code`, **bold**, *italics*, and the `<a id>`
anchors; everything else is escaped text.
"""

from __future__ import annotations

import re
from pathlib import Path

from markupsafe import Markup, escape

SECTION = "## Paper analyses"
_ANCHOR = re.compile(r'<a id="([a-z0-9-]+)"></a>')
_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*")


def metrics_doc() -> Path | None:
    """docs/metrics.md of the source checkout or of the installed wheel; None when neither has it."""
    root = Path(__file__).resolve().parents[2]  # the repository (editable) or site-packages/agenthop
    for cand in (root / "docs" / "metrics.md", root / "dbt_project" / "docs" / "metrics.md"):
        if cand.is_file():
            return cand
    return None


def _inline(text: str) -> Markup:
    text = text.replace("\\*", "\x00")  # an escaped asterisk is a literal one
    out = Markup("")
    pos = 0
    for m in _INLINE.finditer(text):
        out += escape(text[pos:m.start()])
        code, bold, ital = m.groups()
        if code is not None:
            out += Markup("<code>{}</code>").format(code.replace("\x00", "\\*"))
        elif bold is not None:
            out += Markup("<b>{}</b>").format(bold)
        else:
            out += Markup("<i>{}</i>").format(ital)
        pos = m.end()
    out += escape(text[pos:])
    return Markup(str(out).replace("\x00", "*"))


def paper_definitions(doc: Path | None = None) -> tuple[list[Markup], set[str]]:
    """The paper section as HTML paragraphs (anchors kept as element ids) and the anchors it defines."""
    path = doc or metrics_doc()
    if path is None:
        return [], set()
    text = path.read_text(encoding="utf-8")
    start = text.find(SECTION)
    if start < 0:
        return [], set()
    body = text[start:].split("\n", 1)[1] if "\n" in text[start:] else ""  # after the heading line
    nxt = re.search(r"^## ", body, flags=re.MULTILINE)
    body = body[: nxt.start()] if nxt else body
    paragraphs: list[Markup] = []
    anchors: set[str] = set()
    for block in re.split(r"\n\s*\n", body.strip()):
        ids = _ANCHOR.findall(block)
        anchors.update(ids)
        rest = " ".join(_ANCHOR.sub("", block).split())
        html = Markup("").join(Markup('<span id="{}"></span>').format(i) for i in ids)
        if rest:
            html += Markup("<p>") + _inline(rest) + Markup("</p>")
        paragraphs.append(html)
    return paragraphs, anchors
