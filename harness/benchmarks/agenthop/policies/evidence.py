"""Which top-level sections of a gold paper carry an item's evidence (docs/metrics.md#label-resolution), cached.

Simulated agents use this to aim their reads at labelled sections (with noise) and to decide how much
evidence they hold when they answer. The rule is the shared one of ``harness/benchmarks/agenthop/labels.py``
(the one ingest, describe and the marts use): a label matches by *header* when
``norm_label(label) == norm_label(header)``; only when no header matches does it match, by
*containment*, every section whose ``norm_text`` contains ``norm_label(label)``.

This module adds two things for speed: results are cached per (paper object, label text) for the
life of the process, so a panel of many simulated models resolves each label once; and containment
first tries the raw lower-cased text (a hit there is a hit after white-space collapsing, because the
normalised label is single-spaced and trimmed), collapsing only when the text has white-space runs.
"""

from __future__ import annotations

import re

from ..labels import norm_label, norm_text
from ..model import Paper

#: a white-space character other than a plain space, or two in a row: collapsing would change the text
_NEEDS_COLLAPSE = re.compile(r"[^\S ]|  ")

#: (arxiv_id, label) -> (paper object, matched indices, matched by header?)
_CACHE: dict[tuple[str, str], tuple[Paper, tuple[int, ...], bool]] = {}
_CACHE_LIMIT = 200_000


def _contains(section_text: str, key: str) -> bool:
    low = section_text.lower()
    if key in low:
        return True
    if _NEEDS_COLLAPSE.search(low) is None:
        return False
    return key in norm_text(low)


def resolve_label(paper: Paper, label_section: str) -> tuple[tuple[int, ...], bool]:
    """Indices of the top-level sections of ``paper`` a label matches, and whether by header.

    An empty result means the label resolves to nothing (a data-quality case, not an error).
    """
    cache_key = (paper.arxiv_id, label_section)
    hit = _CACHE.get(cache_key)
    if hit is not None and hit[0] is paper:
        return hit[1], hit[2]
    key = norm_label(label_section)
    matched: tuple[int, ...] = ()
    by_header = False
    if key:
        matched = tuple(i for i, s in enumerate(paper.sections) if norm_label(s.header) == key)
        by_header = bool(matched)
        if not matched:
            matched = tuple(i for i, s in enumerate(paper.sections) if _contains(s.text, key))
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    _CACHE[cache_key] = (paper, matched, by_header)
    return matched, by_header


def clear_cache() -> None:
    """Forget cached resolutions (tests; long-lived processes switching releases)."""
    _CACHE.clear()
