"""A scripted search agent (tests/servers/search_agent.py, over OpenAI chat completions on 127.0.0.1)
run through the real command line over a synthetic release's offline corpus: the same trajectory
twice, and a SIGKILL mid-run followed by a resume that ends equal to an uninterrupted run.

The release is the generator's, cut to two tasks of each type so a run takes seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from servers.openai_server import OpenAIServer
from servers.search_agent import ABSTAIN, MISSING_DOC, responder, slow_responder
from sx_fixtures import N_SMALL, clean_env, harness, small_release  # noqa: F401 (fixture)

from agenthop.harness.errors import AgentHopError
from agenthop.harness.writer import finished_samples

#: columns that hold clock readings (they differ between any two runs)
TIMING = frozenset({"wall_time_s", "t_offset_s", "wait_s", "started_at", "finished_at", "created_at", "ts"})
TABLES = ("trajectories", "turns", "tool_calls", "messages")
N_TASKS = N_SMALL


def run_args(release: Path, out: Path, base_url: str) -> list[str]:
    return ["run", "--benchmark", "sciexplore", "--data", str(release), "--paradigm", "search", "--search", "corpus",
            "--model", "scripted-searcher", "--backend", "openai", "--base-url", base_url, "--out", str(out),
            "--workers", "2", "--flush-every", "1", "--no-progress"]


def run(release: Path, out: Path, base_url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*harness(), *run_args(release, out, base_url)], capture_output=True, text=True,
                          env=clean_env(), timeout=300)


def run_dir_of(out: Path) -> Path:
    dirs = [p for p in out.iterdir() if p.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def rows(run_dir: Path, table: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in sorted(run_dir.glob(f"{table}-*.parquet")):
        out.extend(pq.read_table(p).to_pylist())
    return out


def content(run_dir: Path, table: str) -> list[tuple[Any, ...]]:
    """A table's rows without clock columns, in a fixed order (samples run concurrently)."""
    return sorted(tuple((k, v) for k, v in r.items() if k not in TIMING) for r in rows(run_dir, table))


def conversations(srv: OpenAIServer) -> list[str]:
    """Every request the agent received, as canonical JSON, sorted (their order depends on scheduling)."""
    return sorted(json.dumps(r.body, sort_keys=True) for r in srv.requests)


@pytest.fixture(scope="module")
def reference(small_release: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """An uninterrupted run and the requests its agent received."""
    out = tmp_path_factory.mktemp("sx_scripted_ref")
    with OpenAIServer(responder=responder) as srv:
        done = run(small_release, out, srv.base_url)
        requests = conversations(srv)
    assert done.returncode == 0, done.stderr
    assert f"n={N_TASKS}/{N_TASKS}" in done.stdout, done.stdout
    return run_dir_of(out), requests


def test_the_scripted_agent_searches_the_corpus(reference: tuple[Path, list[str]]) -> None:
    run_dir, _ = reference
    calls = rows(run_dir, "tool_calls")
    assert {c["tool"] for c in calls} == {"web_search", "scholar_search", "db_search", "open_page"}
    for c in calls:
        args = json.loads(c["args_json"])
        if c["tool"] == "open_page":
            assert c["paper_id"] == args["id"] and c["search_query"] is None
        else:
            assert c["search_query"] == args["query"] and c["output_chars"] > 0 and c["status"] == "ok"
    missing = [c for c in calls if c["paper_id"] == MISSING_DOC]
    assert missing and all(c["status"] == "tool_error" and c["error_type"] == "not_found" for c in missing)
    assert any(c["status"] == "ok" and c["tool"] == "open_page" for c in calls)
    # per sample the calls are numbered 0.. without gaps, each costs one point of the paradigm's cap
    by_sample: dict[str, list[int]] = {}
    for c in calls:
        by_sample.setdefault(c["sample_id"], []).append(c["seq"])
    assert all(sorted(s) == list(range(len(s))) for s in by_sample.values())
    finals = {t["sample_id"]: t for t in rows(run_dir, "trajectories") if t["is_final"]}
    assert len(finals) == N_TASKS and all(t["terminated_by"] == "answer" for t in finals.values())
    assert all(finals[s]["budget_used"] == len(seqs) for s, seqs in by_sample.items())
    # answers parsed in the task type's shape, an abstention among them
    parsed = {s: json.loads(t["answer_json"]) for s, t in finals.items()}
    abstained = [s for s, t in finals.items() if ABSTAIN in (t["predicted_answer"] or "")]
    assert abstained and len(abstained) < N_TASKS
    answered = [s for s in finals if s not in abstained]
    assert {s[:2] for s in answered} == {"t1", "t2", "t3", "t4"}
    for s in answered:
        if s.startswith(("t1", "t2")):
            assert isinstance(parsed[s], str) and parsed[s]
        if s.startswith("t3"):
            assert isinstance(parsed[s], dict) and all(refs[0]["title"] for refs in parsed[s].values())
    # tokens as the server reported them: 500 + 100 per turn prompt, 40 completion
    for t in finals.values():
        n = t["total_turns"]
        assert t["total_prompt_tokens"] == sum(500 + 100 * k for k in range(n))
        assert t["total_completion_tokens"] == 40 * n


def test_two_runs_give_the_same_trajectories(small_release: Path, reference: tuple[Path, list[str]],
                                             tmp_path: Path) -> None:
    ref_dir, ref_requests = reference
    with OpenAIServer(responder=responder) as srv:
        again = run(small_release, tmp_path, srv.base_url)
        requests = conversations(srv)
    assert again.returncode == 0, again.stderr
    run_dir = run_dir_of(tmp_path)
    assert run_dir.name == ref_dir.name
    assert requests == ref_requests  # the model was sent the same prompts and tool results
    for table in TABLES:
        assert content(run_dir, table) == content(ref_dir, table), table


def wait_mid_run(run_dir_root: Path, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    """Two to N - 3 samples are finished on disk (the others in flight or still to start)."""
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"run ended ({proc.returncode}) before it was killed:\n{out}\n{err}")
        dirs = [p for p in run_dir_root.iterdir() if p.is_dir()] if run_dir_root.exists() else []
        try:
            done = finished_samples(dirs[0]) if dirs else set()
        except AgentHopError:  # a part replaced while it was listed: look again
            continue
        if 2 <= len(done) <= N_TASKS - 3:
            return
        assert time.monotonic() < deadline, "the run never got half-way"
        time.sleep(0.02)


def test_sigkill_mid_run_then_resume_equals_an_uninterrupted_run(small_release: Path,
                                                                   reference: tuple[Path, list[str]],
                                                                   tmp_path: Path) -> None:
    ref_dir, _ = reference
    out = tmp_path / "runs"
    with OpenAIServer(responder=slow_responder(0.15)) as slow:
        proc = subprocess.Popen([*harness(), *run_args(small_release, out, slow.base_url)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=clean_env(), start_new_session=True)
        try:
            wait_mid_run(out, proc)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)  # no handler runs: whatever was in flight is lost
            proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    run_dir = run_dir_of(out)
    assert not (run_dir / "_SUCCESS").exists()
    killed_done = finished_samples(run_dir)
    assert 2 <= len(killed_done) < N_TASKS
    with OpenAIServer(responder=responder) as fast:
        again = run(small_release, out, fast.base_url)
        prompts = {r.body["messages"][1]["content"] for r in fast.requests}
    assert again.returncode == 0, again.stderr
    assert run_dir_of(out) == run_dir and (run_dir / "_SUCCESS").exists()
    assert f"n={N_TASKS}/{N_TASKS}" in again.stdout, again.stdout
    # the resume asked the model about exactly the samples that were not on disk, none of the others
    questions = {json.loads(line)["id"]: json.loads(line)["question"]
                 for line in (small_release / "tasks.jsonl").read_text().splitlines()}
    asked = {tid for tid, q in questions.items() if any(p.startswith(q + "\n") for p in prompts)}
    assert asked == set(questions) - killed_done
    # every sample exactly once, one attempt, each tool call once
    traj = rows(run_dir, "trajectories")
    assert sorted(t["sample_id"] for t in traj) == sorted(t["sample_id"] for t in rows(ref_dir, "trajectories"))
    assert len({t["sample_id"] for t in traj}) == len(traj) == N_TASKS
    keys = [(c["sample_id"], c["attempt"], c["seq"]) for c in rows(run_dir, "tool_calls")]
    assert len(keys) == len(set(keys))
    turn_keys = [(t["sample_id"], t["attempt"], t["turn"]) for t in rows(run_dir, "turns")]
    assert len(turn_keys) == len(set(turn_keys))
    for table in TABLES:
        assert content(run_dir, table) == content(ref_dir, table), table
    assert json.loads((run_dir / "_SUCCESS").read_text())["n_samples"] == N_TASKS
