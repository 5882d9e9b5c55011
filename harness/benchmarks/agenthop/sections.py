"""Section aliases, header normalisation and section-name resolution (the reference harness).

``read_section`` accepts a section in five forms; the first rule that yields an index wins:

1. alphabet alias: the upper-cased query is 1-3 letters A-Z, optionally in parentheses
   (``"B"``, ``"(b)"``, ``"AA"``); used only when the index is in range, otherwise fall through;
2. exact header, case-insensitive (both sides stripped);
3. normalised exact match (``normalize_header`` on both sides);
4. the lower-cased query is a substring of exactly ONE lower-cased header;
5. the normalised query is a substring of exactly ONE normalised header.

Ambiguous (several hits in 4/5) and missing are the same outcome: ``None``.

Per-paper derived forms (lower-cased and normalised headers) are cached module-wide, keyed by the
identity of the ``Paper`` object, so repeated reads of the same paper cost a few dictionary look-ups.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .model import Paper, Section

_A = ord("A")

# Compiled once; the hot path never compiles a pattern.
_ALIAS_RE = re.compile(r"\(?([A-Z]{1,3})\)?")
_APDX_LETTER_RE = re.compile(r"^apdx_[a-z][\d.]*:\s*")
_APDX_RE = re.compile(r"^apdx:\s*")
_ROMAN_RE = re.compile(r"^[ivxlc]+-?[a-z]?\s+")
_NUMBER_RE = re.compile(r"^[\d.]+\s*")
_PUNCT_RE = re.compile(r"[:\-\u2013\u2014]")
_SPACE_RE = re.compile(r"\s+")


def alias(i: int) -> str:
    """Alphabet alias of a 0-based section index (bijective base 26): 0→A, 25→Z, 26→AA, 27→AB."""
    if i < 0:
        raise ValueError(f"section index must be >= 0, got {i}")
    out = ""
    n = i + 1
    while n:
        n, rem = divmod(n - 1, 26)
        out = chr(_A + rem) + out
    return out


def alias_to_index(letters: str) -> int:
    """Inverse of :func:`alias` for upper-case letters: 'A'→0, 'Z'→25, 'AA'→26, 'AB'→27."""
    idx = 0
    for ch in letters:
        idx = idx * 26 + (ord(ch) - _A + 1)
    return idx - 1


def display_header(index: int, header: str) -> str:
    """A section's header as the tools show it: a missing header shows as ``Section {i+1}``
    (the reference harness)."""
    return header or f"Section {index + 1}"


def normalize_header(header: str) -> str:
    """The reference's fuzzy form of a header (or query).

    Lower-case and strip; drop a leading ``apdx_<letter><digits/dots>:`` and then a leading ``apdx:``;
    drop a leading run of Roman-numeral letters [ivxlc] (optionally ``-`` and one letter) followed by
    white space; drop leading digits/dots; turn ``:`` ``-`` ``–`` ``—`` into spaces; collapse white space.
    (Like the reference, the Roman-numeral rule also eats real words such as "civil ".)
    """
    h = header.lower().strip()
    h = _APDX_LETTER_RE.sub("", h, count=1)
    h = _APDX_RE.sub("", h, count=1)
    h = _ROMAN_RE.sub("", h, count=1)
    h = _NUMBER_RE.sub("", h, count=1)
    h = _PUNCT_RE.sub(" ", h)
    return _SPACE_RE.sub(" ", h).strip()


class _HeaderForms:
    """Lower-cased and normalised headers of one paper (normalised forms computed on first use)."""

    __slots__ = ("paper", "stripped", "lowered", "_normalized", "_available")

    def __init__(self, paper: Paper) -> None:
        self.paper = paper  # keeps the key object alive, so its id() cannot be reused
        lowered = [s.header.lower() for s in paper.sections]
        self.lowered = lowered
        self.stripped = [h.strip() for h in lowered]
        self._normalized: list[str] | None = None
        self._available: str | None = None

    @property
    def available(self) -> str:
        """``(A) Header; (B) Header; ...`` as in read_section's not-found message."""
        if self._available is None:
            self._available = "; ".join(
                f"({alias(i)}) {display_header(i, s.header)}" for i, s in enumerate(self.paper.sections)
            )
        return self._available

    @property
    def normalized(self) -> list[str]:
        if self._normalized is None:
            self._normalized = [normalize_header(s.header) for s in self.paper.sections]
        return self._normalized


_FORMS: dict[int, _HeaderForms] = {}
_FORMS_MAX = 100_000


def _forms(paper: Paper) -> _HeaderForms:
    f = _FORMS.get(id(paper))
    if f is None or f.paper is not paper:
        if len(_FORMS) >= _FORMS_MAX:
            _FORMS.clear()
        f = _FORMS[id(paper)] = _HeaderForms(paper)
    return f


def clear_cache() -> None:
    """Forget cached header forms (tests, or a long-lived process that loads a new release)."""
    _FORMS.clear()


def _resolve(q_raw: str, n: int, forms: _HeaderForms) -> int | None:
    q = q_raw.strip()
    if not q:
        return None
    # 1. alphabet alias
    m = _ALIAS_RE.fullmatch(q.upper())
    if m is not None:
        idx = alias_to_index(m.group(1))
        if 0 <= idx < n:
            return idx
    # 2. exact header, case-insensitive
    q_lower = q.lower()
    stripped = forms.stripped
    for i in range(n):
        if stripped[i] == q_lower:
            return i
    # 3. normalised exact
    q_norm = normalize_header(q)
    normalized = forms.normalized if q_norm else None
    if normalized is not None:
        for i in range(n):
            if normalized[i] == q_norm:
                return i
    # 4. raw substring of exactly one header
    hit = -1
    for i, h in enumerate(forms.lowered):
        if q_lower in h:
            if hit >= 0:
                hit = -2
                break
            hit = i
    if hit >= 0:
        return hit
    # 5. normalised substring of exactly one normalised header
    if normalized is not None:
        hit = -1
        for i, h in enumerate(normalized):
            if q_norm in h:
                if hit >= 0:
                    return None
                hit = i
        if hit >= 0:
            return hit
    return None


def resolve_section(query: str, paper: Paper) -> int | None:
    """0-based index of the section of ``paper`` that ``query`` names, or None (missing/ambiguous)."""
    return _resolve(query, len(paper.sections), _forms(paper))


def available_sections(paper: Paper) -> str:
    """The ``Available sections:`` list of read_section's not-found text (cached per paper)."""
    return _forms(paper).available


def resolve_in_sections(query: str, sections: Sequence[Section]) -> int | None:
    """Same as :func:`resolve_section` for a bare list of sections (no caching)."""
    return _resolve(query, len(sections), _HeaderForms(Paper("", "", tuple(sections))))
