"""``sample_hash``: one item's identity across sources (docs/interchange.md#sample-hash).

Every Eval Ever's canonical recipe, from its contributor guide: the lowercase hex SHA-256 of the UTF-8
bytes of ``json.dumps({"raw": raw, "reference": reference}, sort_keys=True, separators=(",", ":"))``
with the whole reference list (``[]`` when there is none) and ``json.dumps``'s default ASCII escapes.
Its converters hash differently (plain concatenations); hashes read from files are recomputed on import.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence


def sample_hash(raw: str, reference: Sequence[str]) -> str:
    """The canonical hash of an item whose input is ``raw`` and whose reference answers are ``reference``."""
    text = json.dumps({"raw": raw, "reference": list(reference)}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def references(target: str | None) -> list[str]:
    """A stored target as a reference list: a JSON list of strings as its items, any other text as one."""
    if target is None or target == "":
        return []
    if target.startswith("["):
        try:
            value = json.loads(target)
        except ValueError:
            return [target]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
    return [target]
