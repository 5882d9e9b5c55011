"""The reply cache of LLM scanners: JSONL lines ``{"key": prompt hash, "reply": text}`` (harness/ask.py writes it)."""

from __future__ import annotations

import json
from pathlib import Path

from agenthop.harness.errors import AgentHopError

from ..text_file import read_utf8


def read_cache(path: Path) -> dict[str, str]:
    """Cached replies (prompt key -> reply). A line that does not parse (cut short by an interruption) is
    skipped and its prompt asked again; a file that is not UTF-8 text or a line that is not an object of two
    strings is an error naming the file and line."""
    if not path.exists():
        return {}
    text = read_utf8(path, "scanner cache", hint="delete it or give another --cache")
    cache: dict[str, str] = {}
    for no, line in enumerate(text.splitlines(), 1):
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(rec, dict) or not isinstance(rec.get("key"), str) or not isinstance(rec.get("reply"), str):
            raise AgentHopError(f"{path}:{no}: a scanner cache line is an object of two strings {{key, reply}}; "
                                "delete the file or give another --cache")
        cache[rec["key"]] = rec["reply"]
    return cache
