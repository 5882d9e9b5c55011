"""`agenthop-scan`: run a file of scanners over the loaded runs and store their results (docs/scanners.md).

Two phases. Reading: on a read-only connection that may not touch files, every scanner's units are
found (the attempts of the selected runs it has not scanned in their current version) and classified:
``sql`` scanners by their query, ``pattern`` scanners by the transcript search, ``llm`` scanners by prompts answered through the harness's backends
(harness/ask.py: cached by prompt hash, so an interrupted scan resumes; capped by ``--max-cost-usd``).
Writing: every result in one transaction (store.py). Nothing is written when a scanner file is bad.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from agenthop.harness.errors import AgentHopError
from agenthop.harness.shards import Shard

from . import llm_kind, sql_kind
from .definitions import Scanner
from .store import RunScan, write_scans
from .units import Unit, done_runs, is_current, select_runs, transcripts, units_of, units_table


@dataclass(slots=True)
class ScanResult:
    scanners: int = 0
    #: (scanner, run) pairs scanned, and left alone because nothing changed
    scanned: int = 0
    unchanged: int = 0
    units: int = 0
    asked: int = 0
    cached: int = 0
    unreadable: int = 0
    over_cap: int = 0
    failed: list[str] = field(default_factory=list)

    def summary(self) -> str:
        text = (f"{self.scanners} scanner(s): {self.scanned} run scan(s) written ({self.units} units), "
                f"{self.unchanged} unchanged")
        if self.asked or self.cached or self.unreadable:
            text += (f"; {self.asked} prompts asked, {self.cached} answered from the cache, "
                     f"{self.unreadable} replies without an answer")
        return text


@dataclass(frozen=True, slots=True)
class LlmSettings:
    cache: Path
    concurrency: int = 4
    max_cost_usd: float = 0.0
    progress: Callable[[int, int], None] | None = None


def _read_only(db: Path) -> duckdb.DuckDBPyConnection:
    if not db.exists():
        raise AgentHopError(f"warehouse {db} does not exist: load runs with agenthop-ingest first")
    try:
        return duckdb.connect(str(db), read_only=True, config={"enable_external_access": False})
    except duckdb.Error as exc:
        if "lock" in str(exc).lower():
            from ..warehouse import lock_error

            raise lock_error(db, exc) from None
        raise AgentHopError(f"warehouse {db} cannot be opened: {str(exc).splitlines()[0]}") from None


def _sql_rows(con: duckdb.DuckDBPyConnection, scanner: Scanner, units: list[Unit]) -> list[tuple]:
    con.register("scan_units", units_table(units))
    try:
        found = {(r[0], r[1], r[2]): r for r in sql_kind.run_query(con, scanner.options["query"])}
    except (duckdb.Error, ValueError) as exc:
        raise AgentHopError(f"scanner {scanner.name!r}: field 'query': {str(exc).splitlines()[0][:300]}") from None
    finally:
        con.unregister("scan_units")
    out = []
    for u in units:
        r = found.get(u)
        out.append(r if r is not None else (*u, 0.0, None, None, None))
    return out


def _llm_rows(con: duckdb.DuckDBPyConnection, scanner: Scanner, units: list[Unit], llm: LlmSettings,
              result: ScanResult) -> dict[Unit, tuple]:
    from agenthop.harness.ask import CostCap, ask_all
    from agenthop.harness.panel import ModelSpec

    from .cache import read_cache

    opts = scanner.options
    texts = transcripts(con, units)
    prompts = {u: llm_kind.build_prompt(opts, texts[u]) for u in units}
    keys = {u: llm_kind.prompt_key(opts, p) for u, p in prompts.items()}
    cached = read_cache(llm.cache)
    todo = {keys[u]: prompts[u] for u in units if keys[u] not in cached}
    result.cached += len({k for k in keys.values() if k in cached})
    if todo:
        spec = ModelSpec(name=opts["model"], backend=opts["backend"], model_id=opts["model"],
                         base_url=opts.get("base_url"), api_key_env=opts.get("api_key_env"))
        cap = CostCap.for_model(llm.max_cost_usd, spec) if llm.max_cost_usd else None
        done = [0]

        def tick() -> None:
            done[0] += 1
            if llm.progress:
                llm.progress(done[0], len(todo))

        asked = ask_all(spec, llm_kind.system_prompt(opts), todo, llm.cache, concurrency=llm.concurrency,
                        on_done=tick, cap=cap, condition="scan")
        cached.update(asked.replies)
        result.asked += len(asked.replies)
        result.failed += [f"scanner {scanner.name!r}: {f}" for f in asked.failed]
        result.over_cap += asked.over_cap
    out: dict[Unit, tuple] = {}
    for u in units:
        reply = cached.get(keys[u])
        if reply is None:
            continue  # not asked (failed or over the cost cap): asked on the next scan
        read = llm_kind.read_answer(opts["answer"], reply)
        if read is None:
            result.unreadable += 1
            out[u] = (*u, None, None, f"no answer of the asked form: {reply.strip()[:300]}", None)
        else:
            out[u] = (*u, read[0], read[1], reply.strip()[:500], None)
    return out


def run_scan(db: Path, scanners: Sequence[Scanner], *, runs: Sequence[str] = (), models: Sequence[str] = (),
             shard: Shard | None = None, llm: LlmSettings | None = None) -> ScanResult:
    """Scan the selected runs with ``scanners`` and write the results (module docstring)."""
    result = ScanResult(scanners=len(scanners))
    shard_text = str(shard) if shard is not None else ""
    scans: list[RunScan] = []
    con = _read_only(db)
    try:
        run_shas = select_runs(con, runs, models)
        units = units_of(con, list(run_shas), shard)
        done = done_runs(con)
        for scanner in scanners:
            version = scanner.recorded_version
            mine = [r for r, (_, bench) in run_shas.items() if scanner.benchmark in (None, bench)]
            todo = [r for r in mine
                    if not is_current(done.get((scanner.name, r), []), shard_text, version, run_shas[r][0])]
            result.unchanged += len(mine) - len(todo)
            if not todo:
                continue
            work = [u for r in todo for u in units[r]]
            if scanner.kind == "sql":
                rows = {(r[0], r[1], r[2]): r for r in _sql_rows(con, scanner, work)}
            elif scanner.kind == "pattern":
                from .pattern_kind import run_pattern

                rows = {(r[0], r[1], r[2]): r for r in run_pattern(con, scanner.options, work)}
            else:
                assert llm is not None
                rows = _llm_rows(con, scanner, work, llm, result)
            for r in todo:
                scan = RunScan(scanner.name, version, r, run_shas[r][0], units[r])
                scan.rows = [rows[u] for u in units[r] if u in rows]
                scans.append(scan)
    finally:
        con.close()
    if scans:
        write_scans(db, scans, shard_text)
    result.scanned = len(scans)
    result.units = sum(len(s.rows) for s in scans)
    return result
