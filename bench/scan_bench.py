"""The scanner stage of `make bench`: one pattern scanner and one sql scanner over a seeded corpus
(docs/scanners.md; target: a pattern scanner over 100,000 transcripts in 30 s on 2 cores).

Builds the transcript corpus of the search stage (bench/transcript_corpus.py, with its search index), or
scans one built before (`make bench` passes the search stage's), then runs `agenthop-scan` as a separate
process per scanner file: a pattern scanner (an identical call made
twice or more) and a sql scanner (the same behaviour as a query); then the pattern scanner again, which
has nothing to do (the runs are unchanged).

    python bench/scan_bench.py --transcripts 100000 --work out/bench/scan
    python bench/scan_bench.py --corpus out/bench/search/corpus.duckdb --work out/bench/scan
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import StageResult, run_stage  # noqa: E402
import transcript_corpus  # noqa: E402

BIN = Path(sys.executable).parent
TARGET_S = 30.0
DEFAULT_TRANSCRIPTS = 100_000

SCANNERS: dict[str, str] = {
    "pattern": "scanners:\n  - {name: bench_repeat, version: 1, kind: pattern, repeat: 2}\n",
    "sql": ("scanners:\n  - name: bench_repeat_sql\n    version: 1\n    kind: sql\n    query: |\n"
            "      select run_id, sample_id, attempt, max(n) >= 2 as value\n"
            "      from (select run_id, sample_id, attempt, tool, args_json, count(*) as n from raw.tool_calls group by all)\n"
            "      group by all\n"),
}


def measure(work: Path, transcripts: int = DEFAULT_TRANSCRIPTS, corpus_db: Path | None = None) -> list[StageResult]:
    """Time the scanners in ``work`` over a new corpus of ``transcripts`` (or over ``corpus_db``, a corpus with
    its index built before, which the scans write their results into); one result per stage."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    results: list[StageResult] = []
    if corpus_db is None:
        db = work / "corpus.duckdb"
        t0 = time.perf_counter()
        transcript_corpus.build(db, transcripts, index=True)
        results.append(StageResult(name=f"scan_corpus_{transcripts}", command=["transcript_corpus.build"],
                                   wall_s=round(time.perf_counter() - t0, 3), cpu_s=0.0, peak_rss_mib=0.0,
                                   max_process_rss_mib=0.0, returncode=0))
    else:
        db = corpus_db
    for kind, text in SCANNERS.items():
        f = work / f"{kind}.yml"
        f.write_text(text)
        results.append(run_stage(f"scan_{kind}", [str(BIN / "agenthop-scan"), "--scanners", str(f), "--db", str(db),
                                                  "-q"], log=work / f"{kind}.log"))
    results.append(run_stage("scan_pattern_unchanged", [str(BIN / "agenthop-scan"), "--scanners",
                                                        str(work / "pattern.yml"), "--db", str(db), "-q"],
                             log=work / "unchanged.log"))
    return results


def verdicts(results: list[StageResult]) -> list[str]:
    missed = []
    for r in results:
        if not r.name.startswith("scan_") or r.name.startswith("scan_corpus"):
            continue
        if r.returncode != 0:
            missed.append(f"{r.name}: failed with exit code {r.returncode}")
        elif r.wall_s > TARGET_S:
            missed.append(f"{r.name}: {r.wall_s:.2f} s (> {TARGET_S:.0f} s)")
    return missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=str(Path(__file__).resolve().parents[1] / "out" / "bench" / "scan"))
    ap.add_argument("--transcripts", type=int, default=DEFAULT_TRANSCRIPTS)
    ap.add_argument("--corpus", type=Path, default=None,
                    help="a corpus built before (transcript_corpus.py --index) to scan instead of building one")
    args = ap.parse_args()
    results = measure(Path(args.work), args.transcripts, args.corpus)
    for r in results:
        print(f"{r.name}: {r.wall_s:.2f} s, CPU {r.cpu_s:.2f} s (exit {r.returncode})")
    missed = verdicts(results)
    print("missed: " + "; ".join(missed) if missed else "targets met")
    return 1 if any(r.returncode != 0 for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
