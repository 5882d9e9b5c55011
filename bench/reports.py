"""Report-site benchmark: `compare` on the 19-model simulated panel, its page size without its folder.

Targets: compare at most 3 s wall; the page (compare.html) at most 1 MB, its folder (item pages and the
one shared chart bundle) measured separately. `measure(...)` is the stage bench/run_bench.py calls on
the warehouse it has built; run this file alone to measure an existing warehouse:

    python bench/reports.py --db out/bench/1x/warehouse.duckdb --models early-committer,verifier
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import StageResult, best_of, dir_bytes  # noqa: E402

#: stage -> (max wall seconds, max page bytes without its folder)
TARGETS = {"report_site_compare": (3.0, 1024 * 1024)}


def _cli(name: str) -> str:
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else name


def measure(db: Path, out: Path, env: dict[str, str], logs: Path, models: list[str], label: str = "1x",
            repeats: int = 3) -> list[StageResult]:
    """Render compare (folder mode) `repeats` times, keep the fastest; record page, folder and item counts."""
    out.mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True, exist_ok=True)
    target = out / "site-compare.html"
    r = best_of(repeats, f"report_site_compare_{label}",
                [_cli("agenthop-report"), "compare", "--models", f"{models[0]},{models[1]}", "--db", str(db),
                 "--out", str(target)], env=env, log=logs / f"report_site_compare_{label}.log")
    folder = target.with_name(target.stem + "_files")
    r.extra.update({
        "page_bytes": target.stat().st_size if target.exists() else 0,
        "folder_bytes": dir_bytes(folder),
        "item_pages": len(list((folder / "items").glob("*.html"))) if folder.exists() else 0,
    })
    return [r]


def verdicts(results: list[StageResult]) -> list[str]:
    missed = []
    for r in results:
        for prefix, (wall, size) in TARGETS.items():
            if not r.name.startswith(prefix):
                continue
            if r.returncode != 0:
                missed.append(f"{r.name}: failed with exit code {r.returncode}")
            if r.wall_s > wall:
                missed.append(f"{r.name}: {r.wall_s:.2f} s > {wall} s")
            if int(r.extra.get("page_bytes", 0)) > size:
                missed.append(f"{r.name}: page {r.extra['page_bytes']} bytes > {size}")
    return missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="A built warehouse (e.g. the 19-model panel of make bench).")
    ap.add_argument("--models", default="early-committer,verifier")
    ap.add_argument("--work", default="out/bench/reports")
    args = ap.parse_args()
    env = dict(os.environ, DO_NOT_TRACK="1")
    work = Path(args.work)
    results = measure(Path(args.db), work, env, work / "logs", args.models.split(","))
    print(json.dumps({"stages": [r.as_dict() for r in results], "missed": verdicts(results)}, indent=2))
    return 1 if any(r.returncode != 0 for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
