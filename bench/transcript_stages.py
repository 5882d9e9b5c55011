"""The transcript stages of `make bench`: a lab's corpus of 100,000 transcripts, and 1,000,000 behind
`make bench-large` (docs/search.md#speed).

At N transcripts (bench/transcript_corpus.py writes them straight into a new warehouse's raw tables,
as an ingest would, 4 models x 2 epochs), each stage a measured subprocess (bench/measure.py):

- ``tx<N>_index``: `agenthop-ingest --reindex`, the search index of the N transcripts (its units and
  its word index): what ingest spends on them beyond loading their rows. Streamed in batches, so its
  peak RSS must not grow with N.
- ``tx<N>_dbt_first``: the first `agenthop-dbt build` of the warehouse (setting up the next stages;
  reported, no target).
- ``tx<N>_ingest``: `agenthop-ingest` of one more Inspect log (1,000 AgentDojo-shaped samples,
  bench/inspect_corpus.py) into the warehouse of N transcripts: the everyday ingest, index kept up to
  date, whose cost must not follow N.
- ``tx<N>_dbt``: the incremental `agenthop-dbt build` after that ingest.
- ``tx<N>_search_<query>_cold`` and ``_warm``: searches as `agenthop-report search` processes (cold: the
  first after the ingest; warm: the same again in a new process, best of three): those of
  bench/search_bench.py (a word in assistant messages, a regular expression over every unit, a
  sequence of three calls, a repeated call) and a phrase over every unit.
- ``tx<N>_scan``: one pattern scanner (an identical call made twice or more) over every run.
- ``tx<N>_site``: `agenthop-report site` of the warehouse.

Targets (:data:`TARGETS`), per size: what a user waiting on that step would accept.

    .venv/bin/python bench/transcript_stages.py --transcripts 100000 [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import StageResult, dir_bytes, run_stage  # noqa: E402
import inspect_corpus  # noqa: E402
import scan_bench  # noqa: E402
import search_bench  # noqa: E402
import transcript_corpus  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DEFAULT_TRANSCRIPTS = 100_000
LARGE_TRANSCRIPTS = 1_000_000
#: samples of the Inspect log ingested into the corpus (the everyday ingest)
EXTRA_SAMPLES = 1_000

#: the searches: name -> `agenthop-report search` arguments
QUERIES: dict[str, list[str]] = {**search_bench.QUERIES, "phrase_any": ["error 404"]}

#: stage (its name without ``tx<N>_``) -> (max wall seconds at 100,000 transcripts, at 1,000,000); stages
#: ending in ``_cold``/``_warm`` match by that ending. Peak RSS: at most MAX_RSS_MIB at any size.
TARGETS: dict[str, tuple[float, float]] = {
    "index": (180, 1800),
    "ingest": (60, 90),
    "dbt": (60, 180),
    "_cold": (30, 120),
    "_warm": (2, 10),
    "scan": (30, 300),
    "site": (120, 600),
}
MAX_RSS_MIB = 2048.0


def label(transcripts: int) -> str:
    """``tx100k``, ``tx1m``, ``tx400``: the stages' prefix at that size."""
    if transcripts and transcripts % 1_000_000 == 0:
        return f"tx{transcripts // 1_000_000}m"
    return f"tx{transcripts // 1000}k" if transcripts and transcripts % 1000 == 0 else f"tx{transcripts}"


def target(name: str, transcripts: int) -> float | None:
    """The wall-time target of stage ``name`` (with its ``tx<N>_`` prefix) at ``transcripts``."""
    stage = name.split("_", 1)[1] if name.startswith("tx") else name
    for key, (small, large) in TARGETS.items():
        if stage == key or (key.startswith("_") and stage.endswith(key)):
            return small if transcripts <= DEFAULT_TRANSCRIPTS else large
    return None


def measure(work: Path, transcripts: int = DEFAULT_TRANSCRIPTS, env: dict[str, str] | None = None,
            extra_samples: int = EXTRA_SAMPLES) -> list[StageResult]:
    """Run every stage at ``transcripts`` in ``work`` (made anew); one result per stage."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    logs = work / "logs"
    logs.mkdir()
    db = work / "corpus.duckdb"
    env = dict(env or os.environ, AGENTHOP_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    pre = label(transcripts)
    out: list[StageResult] = []

    def stage(name: str, cmd: list[str]) -> StageResult:
        r = run_stage(f"{pre}_{name}", cmd, env=env, cwd=REPO, log=logs / f"{name}.log")
        r.extra["transcripts"] = transcripts
        out.append(r)
        return r

    t0 = time.perf_counter()
    times = transcript_corpus.build(db, transcripts, index=False)
    corpus = StageResult(name=f"{pre}_corpus", command=["transcript_corpus.build"],
                         wall_s=round(time.perf_counter() - t0, 3), cpu_s=0.0, peak_rss_mib=0.0,
                         max_process_rss_mib=0.0, returncode=0)
    corpus.extra.update({k + "_s": round(v, 2) for k, v in times.items()})
    corpus.extra["transcripts"] = transcripts
    out.append(corpus)
    r = stage("index", [str(BIN / "agenthop-ingest"), "--db", str(db), "--reindex"])
    r.extra["bytes"] = db.stat().st_size
    stage("dbt_first", [str(BIN / "agenthop-dbt"), "--db", str(db), "build"])
    log = work / "extra.eval"
    inspect_corpus.write_log(log, extra_samples)
    r = stage("ingest", [str(BIN / "agenthop-ingest"), "--db", str(db), "--inspect-log", str(log), "--quiet"])
    r.extra["samples"] = extra_samples
    stage("dbt", [str(BIN / "agenthop-dbt"), "--db", str(db), "build"])
    searched = search_bench.time_queries(db, work, QUERIES, prefix=f"{pre}_search_")
    for r in searched:
        r.extra["transcripts"] = transcripts
    out += searched
    scanners = work / "pattern.yml"
    scanners.write_text(scan_bench.SCANNERS["pattern"])
    stage("scan", [str(BIN / "agenthop-scan"), "--scanners", str(scanners), "--db", str(db), "-q"])
    site = work / "site"
    r = stage("site", [str(BIN / "agenthop-report"), "site", "--out", str(site), "--quiet", "--db", str(db)])
    r.extra["bytes_written"] = dir_bytes(site)
    return out


def verdicts(results: list[StageResult]) -> list[str]:
    """The targets missed, one line each."""
    missed = []
    for r in results:
        if not r.name.startswith("tx") or r.name.endswith(("_corpus", "_dbt_first")):
            continue
        n = int(r.extra.get("transcripts", DEFAULT_TRANSCRIPTS))  # type: ignore[arg-type]
        limit = target(r.name, n)
        if r.returncode != 0:
            missed.append(f"{r.name}: failed with exit code {r.returncode}")
        elif limit is not None and r.wall_s > limit:
            missed.append(f"{r.name}: {r.wall_s:.1f} s (> {limit:.0f} s)")
        if r.peak_rss_mib > MAX_RSS_MIB:
            missed.append(f"{r.name}: peak RSS {r.peak_rss_mib:.0f} MiB (> {MAX_RSS_MIB:.0f} MiB)")
    return missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=str(REPO / "out" / "bench" / "transcripts"))
    ap.add_argument("--transcripts", type=int, default=DEFAULT_TRANSCRIPTS)
    ap.add_argument("--extra-samples", type=int, default=EXTRA_SAMPLES,
                    help="samples of the Inspect log ingested into the corpus")
    ap.add_argument("--json", type=Path, default=None, help="also write the results to this file")
    args = ap.parse_args()
    results = measure(Path(args.work), args.transcripts, extra_samples=args.extra_samples)
    for r in results:
        limit = target(r.name, args.transcripts)
        print(f"{r.name}: {r.wall_s:.2f} s, CPU {r.cpu_s:.2f} s, peak RSS {r.peak_rss_mib:.0f} MiB (exit {r.returncode})"
              + (f" target {limit:.0f} s" if limit else "") + " " + " ".join(f"{k}={v}" for k, v in r.extra.items()))
    missed = verdicts(results)
    if args.json:
        args.json.write_text(json.dumps({"load_average": os.getloadavg(), "stages": [r.as_dict() for r in results],
                                         "missed": missed}, indent=1) + "\n")
    print("missed: " + "; ".join(missed) if missed else "targets met")
    return 1 if any(r.returncode != 0 for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
