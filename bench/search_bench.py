"""The search stage of `make bench`: transcript search over a seeded corpus (docs/search.md#speed).

Builds the corpus (bench/transcript_corpus.py: 100,000 transcripts by default) with its search index,
then runs four searches as separate `agenthop-report search` processes: a word in assistant messages,
a regular expression over every unit, a sequence of three calls and a repeated call. Each runs first
right after the index is built (cold: nothing of the warehouse in DuckDB's memory) and then again in
a new process (warm: best of three). Targets: 5 s warm, 30 s cold.

    python bench/search_bench.py --transcripts 100000 --work out/bench/search
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import StageResult, run_stage  # noqa: E402
import transcript_corpus  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
RESULTS = REPO / "bench" / "results"
WARM_S, COLD_S = 5.0, 30.0
WARM_REPEATS = 3
DEFAULT_TRANSCRIPTS = 100_000

#: name -> the search's arguments
QUERIES: dict[str, list[str]] = {
    "word_assistant": ["timeout", "--role", "assistant"],
    "regex_any": [r"error\s+40[0-9]", "--regex"],
    "sequence": ["--sequence", "search_papers>read_section>read_section"],
    "repeat": ["--repeat", "2"],
}


def measure(work: Path, transcripts: int = DEFAULT_TRANSCRIPTS, corpus_db: Path | None = None) -> list[StageResult]:
    """Build the corpus in ``work`` (a new one each time; or use ``corpus_db``, a corpus built before, its
    index rebuilt) and time the searches; one result per stage."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    results: list[StageResult] = []
    if corpus_db is None:
        db = work / "corpus.duckdb"
        t0 = time.perf_counter()
        times = transcript_corpus.build(db, transcripts, index=True)
        corpus = StageResult(name=f"search_corpus_{transcripts}", command=["transcript_corpus.build"],
                             wall_s=round(time.perf_counter() - t0, 3), cpu_s=0.0, peak_rss_mib=0.0,
                             max_process_rss_mib=0.0, returncode=0)
        corpus.extra.update({k + "_s": round(v, 2) for k, v in times.items()})
        corpus.extra["bytes"] = db.stat().st_size
        results.append(corpus)
    else:
        db = corpus_db
        results.append(run_stage("search_reindex", [str(BIN / "agenthop-ingest"), "--db", str(db), "--reindex"]))
    return results + time_queries(db, work, QUERIES)


def time_queries(db: Path, work: Path, queries: dict[str, list[str]], prefix: str = "search_") -> list[StageResult]:
    """Each query of ``queries`` on ``db`` as `agenthop-report search` processes: first once (cold: the
    first search since the index changed), then WARM_REPEATS times more (warm: the best is kept);
    stages ``<prefix><name>_cold`` and ``_warm``."""
    env = dict(os.environ, AGENTHOP_DB=str(db))
    results: list[StageResult] = []
    for name, args in queries.items():
        cmd = [str(BIN / "agenthop-report"), "search", *args, "--format", "json", "--limit", "20", "--db", str(db)]
        log = work / f"{name}.json"
        cold = run_stage(f"{prefix}{name}_cold", cmd, env=env, log=log)
        cold.extra["n_matches"] = _n_matches(log)
        warm_runs = [run_stage(f"{prefix}{name}_warm", cmd, env=env, log=log) for _ in range(WARM_REPEATS)]
        warm = min(warm_runs, key=lambda r: r.wall_s)
        warm.extra["walls_s"] = [r.wall_s for r in warm_runs]
        warm.extra["n_matches"] = _n_matches(log)
        results += [cold, warm]
    return results


def _n_matches(log: Path) -> int | None:
    try:
        return int(json.loads(log.read_text())["n_matches"])
    except (OSError, ValueError, KeyError):
        return None


def verdicts(results: list[StageResult]) -> list[str]:
    """The targets missed, one line each."""
    missed = []
    for r in results:
        if not r.name.endswith(("_cold", "_warm")):
            continue
        limit = WARM_S if r.name.endswith("_warm") else COLD_S
        if r.returncode != 0:
            missed.append(f"{r.name}: failed with exit code {r.returncode}")
        elif r.wall_s > limit:
            missed.append(f"{r.name}: {r.wall_s:.2f} s (> {limit:.0f} s)")
    return missed


def write_results(results: list[StageResult], transcripts: int) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "search_latest.json"
    out.write_text(json.dumps({"date": dt.date.today().isoformat(), "cores": os.cpu_count(),
                               "load_average": os.getloadavg(), "transcripts": transcripts,
                               "stages": [r.as_dict() for r in results], "missed": verdicts(results)}, indent=1) + "\n")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=str(REPO / "out" / "bench" / "search"))
    ap.add_argument("--transcripts", type=int, default=DEFAULT_TRANSCRIPTS)
    ap.add_argument("--corpus", type=Path, default=None,
                    help="a corpus built before (transcript_corpus.py) to search instead of building one")
    ap.add_argument("--no-results", action="store_true", help="do not write bench/results/search_latest.json")
    args = ap.parse_args()
    results = measure(Path(args.work), args.transcripts, args.corpus)
    for r in results:
        print(f"{r.name}: {r.wall_s:.2f} s, CPU {r.cpu_s:.2f} s (exit {r.returncode}) "
              + " ".join(f"{k}={v}" for k, v in r.extra.items()))
    if not args.no_results:
        print(write_results(results, args.transcripts))
    missed = verdicts(results)
    print("missed: " + "; ".join(missed) if missed else "targets met")
    return 1 if any(r.returncode != 0 for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
