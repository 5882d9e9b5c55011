"""Real-backend harness against loopback providers: rate-limited throughput and concurrent panels.

Two measurements, each the `agenthop-harness run` command as a subprocess (wall and CPU time of the
harness process tree; the providers run in this process, so their CPU is not counted):

1. ``harness_real_rpm_*``: 40 items x 4 model calls at ``--workers 16`` against one OpenAI-compatible
   provider with 0.5 s latency and a 600 requests/minute limit that answers 429 with OpenAI's headers
   (``retry-after-ms``, ``Retry-After``, ``x-ratelimit-*``). The limit allows the 160 calls in
   (160 - burst) / 10 + 0.5 s; target: wall within 1.2x of that and harness CPU under 10 % of wall.
   Run twice: discovering the limit from 429s alone, and with ``--rpm 600``. The fixed start-up of the
   command (imports, loading the release, one sample against a provider without latency) is measured
   on its own (``harness_real_startup``) and reported beside the totals: ``run_over_ideal`` and
   ``run_cpu_over_wall`` are the figures without it.
2. ``harness_real_panel_*``: a 3-model panel against three providers with 1 s latency, versus one of
   its models alone; target: the panel takes about as long as one model (within 1.3x), not three times.

`python bench/harness_real.py [--work DIR]` prints the figures; bench/run_bench.py calls :func:`run`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO / "tests"))
from measure import StageResult, run_stage  # noqa: E402
from servers.fake_provider import FakeProvider  # noqa: E402

BIN = Path(sys.executable).parent
RPM = 600
RPM_LATENCY_S = 0.5
RPM_ITEMS = 40
RPM_WORKERS = 16
PANEL_ITEMS = 8
PANEL_LATENCY_S = 1.0
PANEL_WORKERS = 4
THINK_TURNS = 3  # + one submit: 4 calls per sample


def cli(name: str) -> str:
    exe = BIN / name
    return str(exe) if exe.exists() else name


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))
           and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", DO_NOT_TRACK="1")
    return env


def _check(r: StageResult, out: Path) -> None:
    if r.returncode != 0:
        raise SystemExit(f"{r.name} failed ({r.returncode}); see {out}")


def startup_stage(work: Path, bench: Path) -> StageResult:
    out = work / "runs_startup"
    shutil.rmtree(out, ignore_errors=True)
    with FakeProvider(think_turns=THINK_TURNS) as srv:
        cmd = [cli("agenthop-harness"), "run", "--data", str(bench), "--model", "startup", "--backend", "openai",
               "--base-url", srv.base_url, "--limit", "1", "--out", str(out), "--no-progress"]
        r = run_stage("harness_real_startup", cmd, env=clean_env(), log=work / "startup.log")
    _check(r, work / "startup.log")
    return r


def rpm_stage(work: Path, bench: Path, label: str, extra: list[str], startup: StageResult) -> StageResult:
    out = work / f"runs_{label}"
    shutil.rmtree(out, ignore_errors=True)
    with FakeProvider(latency_s=RPM_LATENCY_S, rpm=RPM, think_turns=THINK_TURNS) as srv:
        cmd = [cli("agenthop-harness"), "run", "--data", str(bench), "--model", "rate-limited", "--backend", "openai",
               "--base-url", srv.base_url, "--limit", str(RPM_ITEMS), "--workers", str(RPM_WORKERS), "--out",
               str(out), "--no-progress", *extra]
        r = run_stage(f"harness_real_rpm_{label}", cmd, env=clean_env(), log=work / f"{label}.log")
        n_requests, n_429 = srv.n_requests, srv.n_429
    _check(r, work / f"{label}.log")
    calls = RPM_ITEMS * (THINK_TURNS + 1)
    rate = RPM / 60.0
    ideal = (calls - max(1.0, rate)) / rate + RPM_LATENCY_S
    run_wall = r.wall_s - startup.wall_s
    run_cpu = r.cpu_s - startup.cpu_s
    r.extra = {"model_calls": calls, "requests": n_requests, "answered_429": n_429, "ideal_s": round(ideal, 2),
               "wall_over_ideal": round(r.wall_s / ideal, 3), "cpu_over_wall": round(r.cpu_s / r.wall_s, 3),
               "startup_wall_s": startup.wall_s, "startup_cpu_s": startup.cpu_s,
               "run_over_ideal": round(run_wall / ideal, 3), "run_cpu_over_wall": round(run_cpu / run_wall, 3),
               "target": "wall <= 1.2x ideal, harness cpu < 10% of wall (start-up excluded)",
               "met": run_wall <= 1.2 * ideal and run_cpu < 0.10 * run_wall}
    r.extra["summary"] = (f"{n_429} answers 429; {r.extra['run_over_ideal']}x the {ideal:.1f} s the limit allows, "
                          f"CPU {100 * r.extra['run_cpu_over_wall']:.0f}% of wall (start-up "
                          f"{startup.wall_s:.1f} s excluded)")
    return r


def panel_stage(work: Path, bench: Path) -> list[StageResult]:
    results: list[StageResult] = []
    providers = [FakeProvider(latency_s=PANEL_LATENCY_S, think_turns=THINK_TURNS) for _ in range(3)]
    for p in providers:
        p.__enter__()
    try:
        panel = work / "panel3.yaml"
        panel.write_text("models:\n" + "".join(
            f"  - {{name: model-{i}, backend: openai, model_id: fake-{i}, base_url: '{p.base_url}'}}\n"
            for i, p in enumerate(providers)))
        for label, args in (("one", ["--model", "model-0", "--backend", "openai", "--model-id", "fake-0",
                                     "--base-url", providers[0].base_url]),
                            ("three", ["--panel", str(panel)])):
            out = work / f"runs_panel_{label}"
            shutil.rmtree(out, ignore_errors=True)
            cmd = [cli("agenthop-harness"), "run", "--data", str(bench), *args, "--limit", str(PANEL_ITEMS),
                   "--workers", str(PANEL_WORKERS), "--out", str(out), "--no-progress"]
            r = run_stage(f"harness_real_panel_{label}", cmd, env=clean_env(), log=work / f"panel_{label}.log")
            _check(r, work / f"panel_{label}.log")
            results.append(r)
    finally:
        for p in providers:
            p.__exit__(None, None, None)
    one, three = results
    ratio = three.wall_s / one.wall_s
    three.extra = {"models": 3, "one_model_wall_s": one.wall_s, "panel_over_one_model": round(ratio, 3),
                   "target": "panel within 1.3x of one model", "met": ratio <= 1.3}
    one.extra = {"models": 1, "items": PANEL_ITEMS, "latency_s": PANEL_LATENCY_S,
                 "summary": f"one model, {PANEL_ITEMS} items, {PANEL_LATENCY_S:g} s latency"}
    three.extra["summary"] = f"3 models concurrently: {ratio:.2f}x one model's wall"
    return results


def missed(results: list[StageResult]) -> list[str]:
    """Targets of this module that a run missed (for bench/run_bench.py's verdicts)."""
    return [f"{r.name}: {r.extra['target']} not met" for r in results if r.extra.get("met") is False]


def run(work: Path) -> list[StageResult]:
    """Every measurement of this module (a release of RPM_ITEMS items is generated under ``work``)."""
    work.mkdir(parents=True, exist_ok=True)
    bench = work / "release"
    if not (bench / "qa" / "full.jsonl").exists():
        r = run_stage("harness_real_release", [cli("agenthop-harness"), "make-benchmark", "--out", str(bench),
                                               "--items", str(RPM_ITEMS), "--seed", "0"], env=clean_env())
        _check(r, bench)
    startup = startup_stage(work, bench)
    startup.extra = {"summary": "the command's fixed start-up: imports, release, one sample"}
    return [startup, rpm_stage(work, bench, "429_only", [], startup),
            rpm_stage(work, bench, "with_rpm", ["--rpm", str(RPM)], startup), *panel_stage(work, bench)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--work", default=str(REPO / "out" / "bench_real"))
    args = ap.parse_args()
    results = run(Path(args.work))
    for r in results:
        print(json.dumps({"stage": r.name, "wall_s": r.wall_s, "cpu_s": r.cpu_s, **r.extra}))
    return 0 if all(r.extra.get("met", True) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
