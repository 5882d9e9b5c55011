"""`make bench` stage: importing one large Inspect `.eval` log of AgentDojo-shaped samples.

bench/inspect_corpus.py writes logs of N/4, N/2 and N samples (about 60 KB of JSON each, events
included; the smaller logs are the first samples of the larger one). Each is imported with the
built-in reader into a fresh warehouse, as a measured subprocess (wall, CPU, peak RSS of the process
tree): ``inspect_large_import_<N>``; the N/4 log once more through Inspect's own reader when
inspect-ai is installed: ``inspect_large_import_inspect_<N/4>``; then the N-sample log again into its
warehouse, unchanged: ``inspect_large_reimport_<N>`` (target ≤ 5 s: only the file's hash is read).

The import streams its rows into the warehouse (docs/inspect.md#memory), so its peak RSS stops
growing once DuckDB's buffer reaches its cap: the rows report the peak RSS of every size and its
growth per sample between the two largest logs (flat: about 0). The cost per sample is the slope of
time between the smallest and the largest log; from these the row of the largest log states what
200,000 samples would take: an extrapolation, labelled as such, unless N is 200,000
(`make bench-large`). Targets for 200,000 samples: ≤ 120 s and ≤ 2,048 MiB peak RSS.

    .venv/bin/python bench/inspect_large.py [--samples N] [--work DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import StageResult, run_stage  # noqa: E402
import inspect_corpus  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
#: the log size the targets are for, and the sizes measured by `make bench` and `make bench-large`
TARGET_SAMPLES = 200_000
DEFAULT_SAMPLES = 32_000
MAX_IMPORT_S = 120.0
MAX_IMPORT_RSS_MIB = 2048.0
MAX_REIMPORT_S = 5.0


def _import(name: str, log: Path, db: Path, env: dict[str, str], logs: Path, reader: str = "builtin") -> StageResult:
    """One import of ``log`` into a new warehouse ``db``."""
    db.unlink(missing_ok=True)
    return run_stage(name, [str(BIN / "agenthop-ingest"), "--db", str(db), "--inspect-reader", reader,
                            "--inspect-log", str(log), "--quiet"], env=env, cwd=REPO, log=logs / f"{name}.log")


def _inspect_installed() -> bool:
    return importlib.util.find_spec("inspect_ai") is not None


def measure(work: Path, samples: int = DEFAULT_SAMPLES, env: dict[str, str] | None = None) -> list[StageResult]:
    env = dict(env or os.environ)
    work.mkdir(parents=True, exist_ok=True)
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    sizes = sorted({max(1, samples // 4), max(1, samples // 2), samples})
    out: list[StageResult] = []
    written = {}
    for n in sizes:
        log = work / f"dojo_{n}.eval"
        if not log.exists():  # the generator is deterministic: a log of this size from an earlier run is the same
            written[n] = inspect_corpus.write_log(log, n)
        db = work / f"w_{n}.duckdb"
        r = _import(f"inspect_large_import_{n}", log, db, env, logs)
        r.extra.update(samples=n, log_bytes=log.stat().st_size, json_bytes=written.get(n, {}).get("json_bytes"),
                       load_average=os.getloadavg())
        out.append(r)
    db = work / f"w_{samples}.duckdb"  # loaded above: nothing changes
    again = run_stage(f"inspect_large_reimport_{samples}", [
        str(BIN / "agenthop-ingest"), "--db", str(db), "--inspect-reader", "builtin", "--inspect-log",
        str(work / f"dojo_{samples}.eval"), "--quiet"], env=env, cwd=REPO,
        log=logs / f"inspect_large_reimport_{samples}.log")
    again.extra.update(samples=samples, load_average=os.getloadavg())
    add_slopes(out)
    if _inspect_installed():
        n = sizes[0]
        api = _import(f"inspect_large_import_inspect_{n}", work / f"dojo_{n}.eval", work / f"w_api_{n}.duckdb", env,
                      logs, reader="inspect")
        api.extra.update(samples=n, reader="inspect", load_average=os.getloadavg())
        api.extra["cpu_ms_per_sample"] = round(1000 * api.cpu_s / n, 3)
        api.extra["ms_per_sample"] = round(1000 * api.wall_s / n, 3)
        # its whole cost per sample (start-up included) times 200,000: an upper bound
        api.extra["extrapolated_200k_cpu_s"] = round(api.cpu_s / n * TARGET_SAMPLES, 1)
        out.append(api)
    out.append(again)
    return out


def add_slopes(imports: list[StageResult]) -> None:
    """On the largest of ``imports`` (smallest first): the time per sample between the smallest and the
    largest log, the peak RSS of every size and its growth per sample between the two largest, and,
    below 200,000 samples, those extrapolated to 200,000."""
    small, big = imports[0], imports[-1]
    samples = int(big.extra["samples"])
    big.extra["peak_rss_mib_by_samples"] = {int(r.extra["samples"]): round(r.peak_rss_mib) for r in imports}
    if len(imports) > 1 and samples > small.extra["samples"]:
        dn = samples - small.extra["samples"]
        s_per = (big.wall_s - small.wall_s) / dn
        cpu_per = (big.cpu_s - small.cpu_s) / dn
        half = imports[-2]
        mib_per = max(0.0, (big.peak_rss_mib - half.peak_rss_mib) / (samples - half.extra["samples"]))
        big.extra["ms_per_sample"] = round(1000 * s_per, 3)
        big.extra["cpu_ms_per_sample"] = round(1000 * cpu_per, 3)
        big.extra["kib_per_sample"] = round(1024 * mib_per, 1)
        if samples != TARGET_SAMPLES:
            rest = TARGET_SAMPLES - samples
            big.extra["extrapolated_200k_s"] = round(big.wall_s + s_per * rest, 1)
            # on a quiet machine the import runs on one core: wall about CPU
            big.extra["extrapolated_200k_cpu_s"] = round(big.cpu_s + cpu_per * rest, 1)
            big.extra["extrapolated_200k_mib"] = round(big.peak_rss_mib + mib_per * rest)


def summary(r: StageResult) -> str:
    """The bench table's words for one stage of this module."""
    if r.extra.get("reader") == "inspect":
        return (f"{r.extra['samples']:,} samples through Inspect's own reader; per sample {r.extra['ms_per_sample']} ms "
                f"({r.extra['cpu_ms_per_sample']} ms CPU); 200,000 samples extrapolated: "
                f"{r.extra['extrapolated_200k_cpu_s']} s CPU")
    if "ms_per_sample" in r.extra:
        rss = ", ".join(f"{n:,}: {mib:,} MiB" for n, mib in r.extra["peak_rss_mib_by_samples"].items())
        text = (f"{r.extra['samples']:,} samples; per sample {r.extra['ms_per_sample']} ms "
                f"({r.extra['cpu_ms_per_sample']} ms CPU, slope from the smallest log); peak RSS {rss} "
                f"({r.extra['kib_per_sample']} KiB more per sample between the two largest)")
        if "extrapolated_200k_s" in r.extra:
            text += (f"; 200,000 samples extrapolated: {r.extra['extrapolated_200k_s']} s "
                     f"({r.extra['extrapolated_200k_cpu_s']} s CPU), {r.extra['extrapolated_200k_mib']:,} MiB")
        return text
    return f"{r.extra.get('samples', 0):,} samples"


def verdicts(results: list[StageResult]) -> list[str]:
    """Targets of this module that a run missed (for bench/run_bench.py's verdicts)."""
    missed = []
    for r in results:
        if not r.name.startswith("inspect_large_"):
            continue
        if r.returncode != 0:
            missed.append(f"{r.name}: failed with exit code {r.returncode}")
        if r.extra.get("reader") == "inspect":
            if r.extra["extrapolated_200k_cpu_s"] > MAX_IMPORT_S:
                missed.append(f"{r.name}: 200,000 samples through Inspect's reader extrapolated to "
                              f"{r.extra['extrapolated_200k_cpu_s']} CPU s > {MAX_IMPORT_S:g} s")
            continue
        if r.name.startswith("inspect_large_reimport_") and r.wall_s > MAX_REIMPORT_S:
            missed.append(f"{r.name}: {r.wall_s:.1f} s > {MAX_REIMPORT_S:g} s")
        if r.extra.get("samples") == TARGET_SAMPLES and r.name.startswith("inspect_large_import_"):
            if r.wall_s > MAX_IMPORT_S:
                missed.append(f"{r.name}: {r.wall_s:.1f} s > {MAX_IMPORT_S:g} s")
            if r.peak_rss_mib > MAX_IMPORT_RSS_MIB:
                missed.append(f"{r.name}: peak RSS {r.peak_rss_mib:.0f} MiB > {MAX_IMPORT_RSS_MIB:g} MiB")
        if "extrapolated_200k_s" in r.extra:
            if r.extra["extrapolated_200k_cpu_s"] > MAX_IMPORT_S:
                missed.append(f"{r.name}: 200,000 samples extrapolated to {r.extra['extrapolated_200k_cpu_s']} CPU s "
                              f"> {MAX_IMPORT_S:g} s")
            if r.extra["extrapolated_200k_mib"] > MAX_IMPORT_RSS_MIB:
                missed.append(f"{r.name}: 200,000 samples extrapolated to {r.extra['extrapolated_200k_mib']:,} MiB "
                              f"> {MAX_IMPORT_RSS_MIB:g} MiB")
    return missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=DEFAULT_SAMPLES)
    ap.add_argument("--work", type=Path, default=REPO / "out" / "bench" / "inspect_large")
    args = ap.parse_args()
    env = dict(os.environ, DO_NOT_TRACK="1")
    results = measure(args.work.resolve(), args.samples, env)
    print(json.dumps({"stages": [r.as_dict() for r in results], "summary": [summary(r) for r in results],
                      "missed": verdicts(results)}, indent=1, default=str))
    return 0 if all(r.returncode == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
