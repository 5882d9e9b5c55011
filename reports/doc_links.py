"""Links from report captions to the definitions they use, in the project's own docs.

A caption calls ``definition("metrics.md#paper-recall")`` in a template. The link points at the
docs that ship with the code: ``docs/`` of a source checkout, or ``agenthop/docs/`` of an installed
wheel (both sit next to the ``reports`` package once symbolic links are resolved), so it opens
offline like the report itself.
"""

from __future__ import annotations

from pathlib import Path

from markupsafe import Markup

#: The project's docs directory, next to the reports package.
DOCS_DIR = Path(__file__).resolve().parents[1] / "docs"


def doc_href(ref: str) -> str:
    """URL of ``<page>.md#<anchor>`` in the docs: a file:// URI when the page is present, else the docs/ path."""
    page, _, fragment = ref.partition("#")
    path = DOCS_DIR / page
    url = path.as_uri() if path.is_file() else f"docs/{page}"
    return f"{url}#{fragment}" if fragment else url


def definition(ref: str, label: str = "definition") -> Markup:
    """An escaped link to the definition ``ref`` (``<page>.md#<anchor>``), for a report caption."""
    return Markup('<a class="def" href="{}" title="docs/{}">{}</a>').format(doc_href(ref), ref, label)


__all__ = ["DOCS_DIR", "definition", "doc_href"]
