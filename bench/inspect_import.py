"""`make bench` stage: importing Inspect AI logs, against Inspect's own reading of them.

Inspect writes a small log offline (the test task of tests/inspect/, two models, two epochs, tools,
a token limit, dict scores); its samples are copied, under new ids, into LOGS logs of
SAMPLES_PER_LOG samples each (SAMPLES in all), every member zstd-compressed as Inspect writes
them. Then, each as its own measured subprocess (best of REPEATS):

- ``inspect_read_samples``: ``inspect_ai.log.read_eval_log_samples`` over every log, the yardstick;
- ``inspect_ingest``: ``agenthop-ingest --inspect-reader builtin --inspect-log DIR`` into a fresh warehouse
  (``auto`` reads through Inspect's API when it is installed, which is that yardstick plus the mapping).

The ratio import / read is in the JSON (target: at most 1). Run alone: ``python bench/inspect_import.py``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import StageResult, best_of  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(REPO / "tests" / "inspect"))

SAMPLES = 10_000
LOGS = 10
SAMPLES_PER_LOG = SAMPLES // LOGS
REPEATS = 2

READ_ALL = (
    "import sys\n"
    "from pathlib import Path\n"
    "from inspect_ai.log import read_eval_log_samples\n"
    "n = sum(1 for p in sorted(Path(sys.argv[1]).glob('*.eval')) for _ in read_eval_log_samples(str(p)))\n"
    "print(n)\n"
)


def make_logs(out: Path, work: Path) -> int:
    """LOGS .eval logs of SAMPLES_PER_LOG samples each, made from one log Inspect wrote."""
    import inspect_fixtures as fx

    seed = fx.write_toolbox_logs(work / "seed", "eval")[0]
    members = fx.eval_members(seed)
    header = dict(next(v for n, v in members if n == "header.json"))
    samples = [v for n, v in members if n.startswith("samples/")]
    out.mkdir(parents=True, exist_ok=True)
    for k in range(LOGS):
        written: list[tuple[str, Any]] = []
        ids: dict[str, None] = {}
        for i in range(SAMPLES_PER_LOG):
            s = dict(samples[i % len(samples)])
            s["id"] = f"{s['id']}-{i // len(samples):04d}"
            ids[s["id"]] = None
            written.append((f"samples/{s['id']}_epoch_{s['epoch']}.json", s))
        dataset = {**header["eval"]["dataset"], "samples": len(ids), "sample_ids": list(ids)}
        eval_spec = {**header["eval"], "eval_id": f"bench{k:04d}", "task_id": f"bench{k:04d}", "dataset": dataset}
        written.append(("_journal/start.json", {"version": header["version"], "eval": eval_spec,
                                                "plan": header["plan"]}))
        written.append(("header.json", {**header, "eval": eval_spec}))
        fx.write_eval(out / f"bench_{k:02d}.eval", written)
    return LOGS * SAMPLES_PER_LOG


def inspect_stages(work: Path) -> list[StageResult]:
    logs = work / "inspect_logs"
    n = make_logs(logs, work)
    read = best_of(REPEATS, "inspect_read_samples", [sys.executable, "-c", READ_ALL, str(logs)])
    dbs = work / "inspect_dbs"
    shutil.rmtree(dbs, ignore_errors=True)
    dbs.mkdir(parents=True)
    runs = []
    for r in range(REPEATS):
        runs.append(best_of(1, "inspect_ingest", [str(BIN / "agenthop-ingest"), "--db", str(dbs / f"w{r}.duckdb"),
                                                   "--inspect-reader", "builtin", "--inspect-log", str(logs), "--quiet"]))
    ingest = min(runs, key=lambda x: x.wall_s)
    ingest.extra["walls_s"] = [x.wall_s for x in runs]
    for stage in (read, ingest):
        stage.extra["samples"] = n
        stage.extra["logs"] = LOGS
    ingest.extra["ratio_to_inspect_read"] = round(ingest.wall_s / read.wall_s, 3) if read.wall_s else None
    return [read, ingest]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=None, help="scratch directory (default: a temporary one)")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-inspect-"))
    results = inspect_stages(work)
    print(json.dumps([r.as_dict() for r in results], indent=1, default=str))
    return 0 if all(r.returncode == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
