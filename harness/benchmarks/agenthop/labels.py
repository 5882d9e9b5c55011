"""Section-recall label resolution (docs/metrics.md#label-resolution), pure functions shared by describe, ingest and tests.

``norm_label(x)``: lower-case, drop a leading section number (``^[0-9]+(\\.[0-9]+)*\\.?\\s+``), collapse
white space, trim. A label matches a top-level section by *header* when ``norm_label(label) ==
norm_label(header)``; only when no section matches by header does it match by *containment* every
section whose lower-cased, white-space-collapsed text contains ``norm_label(label)``.

White space is Python's ``str.split()`` notion (Unicode white space), applied in the order docs/metrics.md#label-resolution gives.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .model import Label, Paper

#: Kinds returned by :func:`resolve_label` (the names evidence contact uses, docs/metrics.md#evidence-contact).
HEADER = "header"  # the label names a top-level header
PARENT = "parent"  # the label is contained in a parent section's text (e.g. an embedded subsection title)
NONE = "none"  # resolves to no section (no paper, empty label, or text found nowhere)

_LEADING_NUMBER = re.compile(r"^[0-9]+(\.[0-9]+)*\.?\s+")


def norm_label(s: str) -> str:
    """norm() of docs/metrics.md#label-resolution, for a label or a header."""
    return " ".join(_LEADING_NUMBER.sub("", s.lower(), count=1).split())


def norm_text(text: str) -> str:
    """Section text as containment compares it: lower-cased, white space collapsed, trimmed."""
    return " ".join(text.lower().split())


def resolve_label(
    label: Label | str,
    paper: Paper | None,
    *,
    norm_texts: Sequence[str] | None = None,
) -> tuple[str, tuple[int, ...]]:
    """Resolve a label (or its section string) against a paper's top-level sections.

    Returns ``(kind, indices)``: ``(HEADER, (i, ...))`` for header matches, ``(PARENT, (i, ...))``
    for containment matches, ``(NONE, ())`` otherwise (also when ``paper`` is None, i.e. the label's
    arxiv_id is empty or not in the pool). ``norm_texts`` may pass precomputed ``norm_text`` of the
    paper's sections (same order) to avoid recomputing them for many labels on one paper.
    """
    if paper is None:
        return NONE, ()
    section = label.section if isinstance(label, Label) else label
    key = norm_label(section)
    if not key:
        return NONE, ()
    sections = paper.sections
    by_header = tuple(i for i, s in enumerate(sections) if norm_label(s.header) == key)
    if by_header:
        return HEADER, by_header
    texts = norm_texts if norm_texts is not None else [norm_text(s.text) for s in sections]
    contained = tuple(i for i, t in enumerate(texts) if key in t)
    if contained:
        return PARENT, contained
    return NONE, ()

