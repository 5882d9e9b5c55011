"""`make bench` stage: importing reference-harness JSON logs, against the cost of parsing them.

The paper-scale harness run (19 models x 1,011 items) is exported as the reference harness would
have logged it (experiments/<model>/<sample_id>.json, _failed_attempts/, summary.json; the layout
docs/ingest.md#reference-harness-json---reference-json describes): turns, tool calls, tool results
cut to 500 characters, and a provider-style message history holding the full tool outputs. Then,
each as its own measured subprocess:

- ``ref_json_load``: one plain ``json.load`` of every file (one process), the yardstick (best of
  REPEATS, like the import);
- ``ref_ingest_startup``: ``agenthop-ingest --help``, the command's fixed start-up (interpreter and
  imports), reported apart; it is not subtracted from the acceptance ratio;
- ``ref_ingest``: ``agenthop-ingest --reference-json`` into a warehouse that already holds the
  benchmark (best of REPEATS, each into a fresh copy);
- ``ref_dbt_build``: ``dbt build`` on the result.

Ratios in the JSON (on ``ref_ingest``): ``ratio_to_json_load`` = import wall / json.load wall, the
acceptance figure (start-up included, same files); ``cpu_ratio_to_json_load`` the same in CPU
seconds (the import's worker processes included), which a busy shared machine distorts less;
``ratio_without_startup``; the load average when the import started. Also (import + dbt build) against the reference's own
evaluate.py, which cannot run here: its time is estimated from the figure measured on the same
19,209 files elsewhere (EVALUATE_S) scaled by this machine's json.load time against that machine's
(JSON_LOAD_ELSEWHERE_S). Run alone: ``python bench/reference_import.py --runs OUT/runs_1x --benchmark DIR``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import StageResult, dir_bytes, run_stage  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
REPEATS = 3

#: evaluate.py on 19 x 1,011 reference files, and one json.load of them, on the machine where the
#: figures were taken (evaluate.py 33 s; our import there took 26 s = 4.3-5.5x json.load, so
#: json.load took about 26 / 4.9 = 5.3 s)
EVALUATE_S = 33.0
JSON_LOAD_ELSEWHERE_S = 26.0 / 4.9

_FILLER = ("Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut "
           "labore et dolore magna aliqua. ") * 200
_SYSTEM = "You are a research assistant navigating a citation graph. " * 40


def _filler(n: int) -> str:
    return _FILLER[: max(n, 0)]


def _output(call: dict[str, Any]) -> str:
    """The full agent-visible text of a call, shaped so the status is derivable as the reference's is."""
    tool, status = call["tool"], call["status"]
    n = int(call["output_chars"])
    if status == "ok":
        if tool == "read_section":
            head = f"=== {call['resolved_header'] or 'Section 1'} ===\n\n"
            return head + _filler(n - len(head))
        if tool == "submit_answer":
            return f"Answer submitted: {call['answer'] or ''}"
        return "Result: " + _filler(n - 8)
    return {
        "rejected_budget": f"REJECTED: Insufficient budget (remaining {call['budget_after']}) for {tool}.",
        "rejected_disabled": f"REJECTED: Tool '{tool}' is disabled in this condition.",
        "unknown_tool": f"Unknown tool: {tool}",
        "invalid_args": f"Error calling {tool}: Missing or invalid parameter - 'paper_id'",
        "unknown_paper": f"Paper '{call['paper_id']}' not found in this item's graph.",
        "no_full_text": "Full text not available for this paper.",
        "section_not_found": f"Section '{call['section_query']}' not found in paper {call['paper_id']}.",
    }.get(status, "Result: ")


def _attempt_record(model: str, traj: dict[str, Any], turns: list[dict], calls: list[dict]) -> dict[str, Any]:
    by_turn: dict[int, list[dict]] = defaultdict(list)
    for c in calls:
        by_turn[c["turn"]].append(c)
    turn_recs, messages = [], [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": _filler(600)}]
    for t in turns:
        tcs = sorted(by_turn.get(t["turn"], []), key=lambda c: c["call_index"])
        executed = [c for c in tcs if c["status"] != "not_executed"]
        outputs = [_output(c) for c in executed]
        tool_calls = [{"id": f"call_{t['turn']}_{c['call_index']}", "name": c["tool"], "args": json.loads(c["args_json"])}
                      for c in tcs]
        turn_recs.append({
            "turn": t["turn"], "role": t["role"], "content": _filler(t["content_chars"]),
            "tool_calls": tool_calls,
            "tool_results": [{"name": c["tool"], "args": tc["args"], "output": o if len(o) <= 500 else o[:500] + "...",
                              "cost": c["cost"]} for c, tc, o in zip(executed, tool_calls, outputs)],
            "budget_before": t["budget_before"], "budget_after": t["budget_after"], "timestamp": t["t_offset_s"],
            "prompt_tokens": t["prompt_tokens"], "completion_tokens": t["completion_tokens"],
        })
        messages.append({"role": "assistant", "content": _filler(t["content_chars"]), "tool_calls": tool_calls})
        messages += [{"role": "tool", "tool_call_id": tc["id"], "name": c["tool"], "content": o}
                     for c, tc, o in zip(executed, tool_calls, outputs)]
    return {
        "sample_id": traj["sample_id"], "model": model, "predicted_answer": traj["predicted_answer"] or "",
        "predicted_index": traj["predicted_index"], "is_correct": traj["is_correct"],
        "reasoning": traj["reasoning"] or "", "budget_total": 30, "budget_used": traj["budget_used"],
        "total_turns": len(turn_recs), "total_prompt_tokens": traj["total_prompt_tokens"],
        "total_completion_tokens": traj["total_completion_tokens"], "cache_read_tokens": traj["cache_read_tokens"],
        "cache_creation_tokens": traj["cache_creation_tokens"], "wall_time_s": traj["wall_time_s"],
        "turns": turn_recs, "messages": messages, "tool_errors": traj["tool_errors"],
        "api_error_count": traj["api_error_count"], "transient_retry_count": traj["transient_retry_count"],
        "terminated_by": traj["terminated_by"],
    }


MERGED = ("total_prompt_tokens", "total_completion_tokens", "cache_read_tokens", "cache_creation_tokens",
          "api_error_count", "transient_retry_count")


def export_run(run_dir: Path, experiments: Path, benchmark_sha256: str) -> int:
    """Write one harness run directory as a reference model folder; returns the files written."""
    def rows(table: str) -> list[dict[str, Any]]:
        return pq.read_table(sorted(run_dir.glob(f"{table}-*.parquet"))).to_pylist()

    model = rows("runs")[0]["model"]
    folder = experiments / model
    failed_dir = folder / "_failed_attempts"
    failed_dir.mkdir(parents=True, exist_ok=True)
    turns: dict[tuple, list[dict]] = defaultdict(list)
    calls: dict[tuple, list[dict]] = defaultdict(list)
    for t in rows("turns"):
        turns[(t["sample_id"], t["attempt"])].append(t)
    for c in rows("tool_calls"):
        calls[(c["sample_id"], c["attempt"])].append(c)
    attempts: dict[str, list[dict]] = defaultdict(list)
    for tr in rows("trajectories"):
        attempts[tr["sample_id"]].append(tr)
    n = 0
    for sid, trs in attempts.items():
        trs.sort(key=lambda r: r["attempt"])
        recs = [_attempt_record(model, tr, sorted(turns[(sid, tr["attempt"])], key=lambda t: t["turn"]),
                                calls[(sid, tr["attempt"])]) for tr in trs]
        final = recs[-1]
        for k, rec in enumerate(recs[:-1]):
            rec["retry_count"] = k
            (failed_dir / f"{sid}.attempt_{k}.json").write_text(json.dumps(rec, indent=2), encoding="utf-8")
            n += 1
        for key in MERGED:  # the reference adds failed attempts into the final record
            final[key] = sum(r[key] for r in recs)
        final["retry_count"] = len(recs) - 1
        (folder / f"{sid}.json").write_text(json.dumps(final, indent=2), encoding="utf-8")
        n += 1
    summary = {"fingerprint": {"benchmark_sha256": benchmark_sha256, "schema_version": "agenthop-eval-v1"},
               "config": {"budget": 30, "max_turns": 20, "max_total_tokens": 200_000}}
    (folder / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return n


JSON_LOAD = ("import json, pathlib, sys\n"
             "n = 0\n"
             "for p in sorted(pathlib.Path(sys.argv[1]).rglob('*.json')):\n"
             "    if p.name != 'summary.json':\n"
             "        with open(p, encoding='utf-8') as fh:\n"
             "            json.load(fh)\n"
             "        n += 1\n"
             "print(n)\n")


def reference_stages(work: Path, bench_dir: Path, runs_dir: Path, env: dict[str, str],
                     export: bool = True, dbt: bool = True) -> list[StageResult]:
    """Export (unless ``export`` is false and a previous export exists), then measure json.load, the
    import and (unless ``dbt`` is false) dbt build (see the module docstring)."""
    experiments = work / "reference" / "experiments"
    if export or not experiments.is_dir():
        if experiments.exists():
            shutil.rmtree(experiments)
        experiments.mkdir(parents=True)
        bsha = hashlib.sha256((bench_dir / "qa" / "full.jsonl").read_bytes()).hexdigest()[:16]
        for d in sorted(p.parent for p in runs_dir.glob("*/_SUCCESS")):
            export_run(d, experiments, bsha)
    n_files = sum(1 for p in experiments.rglob("*.json") if p.name != "summary.json")
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    results = []
    base = work / "reference" / "benchmark_only.duckdb"
    db = work / "reference" / "warehouse.duckdb"
    for p in (base, db):
        p.unlink(missing_ok=True)
    subprocess.run([str(BIN / "agenthop-ingest"), "--db", str(base), "--benchmark", str(bench_dir), "--quiet"],
                   env=env, check=True)
    startups = [run_stage("ref_ingest_startup", [str(BIN / "agenthop-ingest"), "--help"], env=env,
                          log=logs / "ref_ingest_startup.log") for _ in range(REPEATS)]
    startup = min(startups, key=lambda x: x.wall_s)
    # json.load and the import alternate, so that a disturbance of the machine (a neighbour, the
    # kernel writing back earlier stages' files) falls on both sides of the ratio alike
    loads, ingests, load_avg = [], [], []
    for _ in range(REPEATS):
        loads.append(run_stage("ref_json_load", [sys.executable, "-c", JSON_LOAD, str(experiments)], env=env,
                               log=logs / "ref_json_load.log"))
        shutil.copyfile(base, db)
        load_avg.append(round(os.getloadavg()[0], 2))
        ingests.append(run_stage("ref_ingest", [str(BIN / "agenthop-ingest"), "--db", str(db), "--reference-json",
                                                str(experiments), "--quiet"], env=env, log=logs / "ref_ingest.log"))
    r = min(loads, key=lambda x: x.wall_s)
    r.extra = {"files": n_files, "bytes": dir_bytes(experiments), "walls_s": [x.wall_s for x in loads]}
    results.append(r)
    results.append(startup)
    r = min(ingests, key=lambda x: x.wall_s)
    r.extra = {"walls_s": [x.wall_s for x in ingests], "load_average_1min": load_avg[ingests.index(r)]}
    results.append(r)
    dbt_stage = run_stage("ref_dbt_build", [str(BIN / "dbt"), "build", "--project-dir", str(REPO), "--profiles-dir",
                                      str(REPO), "--target-path", str(work / "target_ref"), "--log-path",
                                      str(work / "dbtlogs_ref")],
                    env=dict(env, AGENTHOP_DB=str(db)), cwd=REPO, log=logs / "ref_dbt_build.log") if dbt else None
    if dbt_stage is not None:
        results.append(dbt_stage)
    json_load, ingest_r = results[0], results[2]
    load, ingest = json_load.wall_s, ingest_r.wall_s
    evaluate_here = EVALUATE_S * load / JSON_LOAD_ELSEWHERE_S
    ingest_r.extra.update(
        ratio_to_json_load=round(ingest / load, 2) if load else None,
        cpu_ratio_to_json_load=round(ingest_r.cpu_s / json_load.cpu_s, 2) if json_load.cpu_s else None,
        startup_s=round(startup.wall_s, 2),
        ratio_without_startup=round((ingest - startup.wall_s) / load, 2) if load else None,
        evaluate_py_estimate_s=round(evaluate_here, 2),
        ingest_plus_dbt_to_evaluate_py=round((ingest + dbt_stage.wall_s) / evaluate_here, 2)
        if evaluate_here and dbt_stage is not None else None,
    )
    return results


#: acceptance: the import at most this many times one json.load of the same files (wall, start-up included)
TARGET_RATIO = 2.0


def verdicts(results: list[StageResult]) -> list[str]:
    """The missed reference-import target, if any (for make bench's summary line)."""
    out = []
    for r in results:
        ratio = r.extra.get("ratio_to_json_load") if r.name == "ref_ingest" else None
        if isinstance(ratio, (int, float)) and ratio > TARGET_RATIO:
            out.append(f"ref_ingest {ratio}x json.load (target {TARGET_RATIO:g}x; "
                       f"{r.extra.get('cpu_ratio_to_json_load')}x in CPU seconds)")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", required=True, type=Path, help="a harness --out directory (19 runs of 1,011 items)")
    ap.add_argument("--benchmark", required=True, type=Path)
    ap.add_argument("--work", type=Path, default=REPO / "out" / "bench")
    ap.add_argument("--reuse-export", action="store_true", help="keep a previous export under --work")
    ap.add_argument("--no-dbt", action="store_true", help="measure json.load and the import only (no dbt build)")
    args = ap.parse_args()
    env = dict(os.environ, DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    results = reference_stages(args.work, args.benchmark, args.runs, env, export=not args.reuse_export,
                               dbt=not args.no_dbt)
    print(json.dumps([r.as_dict() for r in results], indent=2))
    return 0 if all(r.returncode == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
