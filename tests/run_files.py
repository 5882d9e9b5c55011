"""What a run wrote, for tests that search it (no key, URL or stray text may reach any written byte)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq


def written_bytes(root: Path) -> bytes:
    """Every byte written under ``root``: raw files plus decoded Parquet cells and metadata."""
    chunks: list[bytes] = []
    for p in root.rglob("*"):
        if not p.is_file():
            continue
        chunks.append(p.read_bytes())
        if p.suffix == ".parquet":
            f = pq.ParquetFile(p)
            chunks.append(json.dumps(f.read().to_pylist(), default=str).encode())
            chunks.append(repr(f.metadata.metadata).encode())
    return b"\n".join(chunks)
