"""``--shard k/n``: a deterministic 1/n of the samples of every run, so n machines run one panel.

A sample belongs to shard ``int(sha256(sample_id)) mod n`` (k counts from 0, like a Slurm array
index or a Kubernetes Job completion index): stable across machines, Python versions and releases
that keep the id. The shards of a run write into the same run directory without sharing any lock:

- each shard numbers its part files in a range of its own (``part_base``), so no two shards ever
  write a file of the same name;
- each shard locks only its own ``.lock-<k>of<n>``, and repairs (after a crash) only its own parts;
- whichever shard finds, after its own last write, that every sample of the run's scope has a final
  attempt on disk writes ``_SUCCESS`` (harness/completion.py), as an unsharded run does.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import click

#: part numbers of one shard: [part_base, part_base + SPAN); unsharded runs use [0, SPAN)
SPAN = 100_000
MAX_SHARDS = 999

_SHARD_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    k: int
    n: int

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"

    def owns(self, sample_id: str) -> bool:
        return shard_of(sample_id, self.n) == self.k

    @property
    def part_base(self) -> int:
        """First part number of this shard (unique per k and n, so even shards of different
        counts never collide)."""
        return (self.n * (MAX_SHARDS + 1) + self.k) * SPAN

    @property
    def lock_name(self) -> str:
        return f".lock-{self.k}of{self.n}"

    def owns_part(self, part: int) -> bool:
        return self.part_base <= part < self.part_base + SPAN


def shard_of(sample_id: str, n: int) -> int:
    digest = hashlib.sha256(sample_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % n


def parse_shard(text: str) -> Shard:
    m = _SHARD_RE.match(text)
    if not m:
        raise ValueError(f"{text!r}: expected k/n, e.g. 0/4 (k from 0 to n-1)")
    k, n = int(m.group(1)), int(m.group(2))
    if not 1 <= n <= MAX_SHARDS:
        raise ValueError(f"{text!r}: n must be 1 to {MAX_SHARDS}")
    if not 0 <= k < n:
        raise ValueError(f"{text!r}: k must be 0 to {n - 1} (shards count from 0)")
    return Shard(k, n)


class ShardParam(click.ParamType):
    name = "k/n"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Shard:
        if isinstance(value, Shard):
            return value
        try:
            return parse_shard(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
