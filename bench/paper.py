"""Paper-report benchmark: `agenthop-report paper` on the 19-model simulated panel (target: at most 10 s).

`measure(...)` is the stage bench/run_bench.py calls on the warehouse it has built (1x: 19 runs x
1,011 items); run this file alone to measure an existing warehouse:

    python bench/paper.py --db out/bench/warehouse_1x.duckdb
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import StageResult, best_of, dir_bytes  # noqa: E402

#: stage prefix -> max wall seconds
TARGETS = {"report_paper": 10.0}


def _cli(name: str) -> str:
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else name


def measure(db: Path, out: Path, env: dict[str, str], logs: Path, label: str = "1x",
            repeats: int = 3) -> list[StageResult]:
    """Render the paper report `repeats` times, keep the fastest; record page, tables and item pages."""
    target = out / "paper"
    logs.mkdir(parents=True, exist_ok=True)
    r = best_of(repeats, f"report_paper_{label}",
                [_cli("agenthop-report"), "paper", "--db", str(db), "--out", str(target)],
                env=env, log=logs / f"report_paper_{label}.log")
    page = target / "index.html"
    r.extra.update({
        "page_bytes": page.stat().st_size if page.exists() else 0,
        "tables_bytes": dir_bytes(target / "tables") if (target / "tables").exists() else 0,
        "tables": len(list((target / "tables").glob("*"))) if (target / "tables").exists() else 0,
        "item_pages": len(list((target / "index_files" / "items").glob("*.html"))),
    })
    return [r]


def verdicts(results: list[StageResult]) -> list[str]:
    missed = []
    for r in results:
        for prefix, wall in TARGETS.items():
            if r.name.startswith(prefix):
                if r.returncode != 0:
                    missed.append(f"{r.name}: failed with exit code {r.returncode}")
                elif r.wall_s > wall:
                    missed.append(f"{r.name}: {r.wall_s:.2f} s > {wall} s")
    return missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--out", type=Path, default=Path("out") / "bench" / "paper")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    env = dict(__import__("os").environ, DO_NOT_TRACK="1")
    results = measure(args.db, args.out, env, args.out / "logs", repeats=args.repeats)
    print(json.dumps([r.as_dict() for r in results], indent=2))
    missed = verdicts(results)
    for m in missed:
        print("missed:", m)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
