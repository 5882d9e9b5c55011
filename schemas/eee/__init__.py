"""Every Eval Ever's JSON Schemas, version 0.3.0, as published by its project (MIT licence, LICENSE beside
this file; repository evaleval/every_eval_ever at commit 9bce4136e789ec006c62582f5f9d107d20f8b398,
``every_eval_ever/schemas/``). Ingest checks EEE files against them (docs/interchange.md)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

VERSION = "0.3.0"
_HERE = Path(__file__).resolve().parent


@cache
def schema(name: str) -> dict[str, Any]:
    """``eval`` (aggregate record) or ``instance_level_eval`` (one line of the samples file)."""
    return json.loads((_HERE / f"{name}.schema.json").read_text(encoding="utf-8"))
