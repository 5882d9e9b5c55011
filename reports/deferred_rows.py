"""Long tables of a site page whose rows beyond the first few load from a data file beside the page.

A reruns page of the site lists every item a model gets right in some repeats only: thousands of rows
per model at 10,000 items, the same markup each time. In the site (``agenthop-report site``) such a table
keeps its first :data:`INLINE_ROWS` rows in the page; the template marks the rest with
``<!--agenthop-rows:<id>-->`` … ``<!--/agenthop-rows:<id>-->`` and :func:`split` moves them into
``<page>_files/rows/<id>.js``, which calls ``agenthopRows("<id>", "<data>", <n>)`` with the rows' HTML
deflated, as the item data files carry their items (reports/item_data.py: script). The page loads it through a
``<script src>`` (a browser refuses ``fetch`` from ``file://``), inflates it and appends the rows before
its tables are made sortable and filterable, so the table holds the same rows as a page with every row
inline. Rendered alone (``agenthop-report reruns``), a page keeps every row inline.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from . import item_data

#: rows a deferred table keeps in the page itself (what a reader without JavaScript sees)
INLINE_ROWS = 50
FOLDER = "rows"

_MARKED = re.compile(r"<!--agenthop-rows:([A-Za-z0-9_-]+)-->(.*?)<!--/agenthop-rows:\1-->", re.S)


def rows_file(folder: Path, table_id: str) -> Path:
    """The data file of table `table_id` of the page whose folder is `folder`."""
    return folder / FOLDER / f"{table_id}.js"


def script(table_id: str, rows_html: str) -> bytes:
    """The data file: the rows' HTML packed as the item data files are, passed to the page's agenthopRows."""
    return item_data.script("agenthopRows", rows_html, (table_id,))


def split(html: str, folder: Path, write: Callable[[bytes, Path], None]) -> str:
    """`html` without its marked rows, each table's written through `write(data, path)` as its data file."""
    def move(m: re.Match[str]) -> str:
        write(script(m.group(1), m.group(2).strip()), rows_file(folder, m.group(1)))
        return ""
    return _MARKED.sub(move, html)


__all__ = ["FOLDER", "INLINE_ROWS", "rows_file", "script", "split"]
