"""Text normalisation of the ``normalized-match`` judge (docs/sciexplore.md#normalized-match).

``normalize(s)``: Unicode NFKC, lower case (``str.casefold``), every punctuation or symbol
character replaced by a space, the articles *a*, *an*, *the* dropped as whole words, white space
collapsed and trimmed. ``contains_phrase(text, phrase)``: the normalised phrase occurs in the
normalised text as whole words.
"""

from __future__ import annotations

import unicodedata

ARTICLES = frozenset({"a", "an", "the"})


def _is_punct(ch: str) -> bool:
    cat = unicodedata.category(ch)
    return cat[0] in ("P", "S")


def normalize(text: str | None) -> str:
    if not text:
        return ""
    s = unicodedata.normalize("NFKC", text).casefold()
    s = "".join(" " if _is_punct(ch) else ch for ch in s)
    return " ".join(w for w in s.split() if w not in ARTICLES)


def contains_phrase(text: str, phrase: str) -> bool:
    """Whole-phrase containment of already normalised strings (an empty phrase never matches)."""
    return bool(phrase) and f" {phrase} " in f" {text} "


def matches(predicted: str | None, gold: str | None) -> bool:
    """Normalised equality or whole-phrase containment of ``gold`` in ``predicted``."""
    p, g = normalize(predicted), normalize(gold)
    return bool(g) and (p == g or contains_phrase(p, g))


def normalize_doi(doi: str | None) -> str:
    """A DOI compared case-insensitively without its resolver prefix (``https://doi.org/``, ``doi:``)."""
    if not doi:
        return ""
    s = unicodedata.normalize("NFKC", doi).strip().casefold()
    for prefix in ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi:"):
        if s.startswith(prefix):
            s = s[len(prefix):].strip()
    return s
