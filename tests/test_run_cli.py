"""`agenthop-harness run` as a user runs it: SIGKILL + rerun, Ctrl-C, ablation dirs, key hygiene, panel errors."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from servers.openai_server import OpenAIServer, completion, tool_call

from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.cli import main as cli_main
from agenthop.harness.errors import AgentHopError
from agenthop.harness.panel import load_panel
from agenthop.harness.writer import finished_samples
from run_files import written_bytes

N_ITEMS = 120
BIN = Path(sys.executable).parent


def harness() -> list[str]:
    exe = BIN / "agenthop-harness"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "agenthop.harness.cli"]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli") / "bench"
    make_benchmark(root, N_ITEMS, seed=11)
    return root


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "ANTHROPIC_")) and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", **extra)
    return env


def start(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """Start a run in its own process group (as a shell job: Ctrl-C reaches the whole group)."""
    return subprocess.Popen([*harness(), "run", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env or clean_env(), start_new_session=True)


def wait_for(pattern: str, root: Path, proc: subprocess.Popen[str], timeout: float = 120) -> None:
    """Poll until a file matching ``pattern`` exists under ``root`` (the run is mid-way)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(root.glob(pattern)):
            return
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"run ended ({proc.returncode}) before {pattern} appeared:\n{out}\n{err}")
        time.sleep(0.002)
    proc.kill()
    raise AssertionError(f"{pattern} never appeared")


def rows(run_dir: Path, table: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in sorted(run_dir.glob(f"{table}-*.parquet")):
        part = int(p.stem.rsplit("-", 1)[1])
        out.extend({**r, "_part": part} for r in pq.read_table(p).to_pylist())
    return out


def check_consistent(run_dir: Path) -> set[str]:
    """No half-written sample: every sample's rows are in one part, turns match its trajectory rows."""
    traj = rows(run_dir, "trajectories")
    keys = Counter((r["run_id"], r["sample_id"], r["attempt"]) for r in traj)
    assert max(keys.values(), default=1) == 1
    finals = Counter((r["run_id"], r["sample_id"]) for r in traj if r["is_final"])
    assert max(finals.values(), default=1) == 1
    part_of = {(r["sample_id"], r["attempt"]): r["_part"] for r in traj}
    n_turns = Counter((r["sample_id"], r["attempt"]) for r in rows(run_dir, "turns"))
    for r in rows(run_dir, "turns") + rows(run_dir, "tool_calls"):
        assert part_of[(r["sample_id"], r["attempt"])] == r["_part"]
    for r in traj:
        assert n_turns[(r["sample_id"], r["attempt"])] == r["total_turns"]
    assert not [p.name for p in run_dir.iterdir() if p.name.startswith(".tmp-")]
    return {sid for _, sid in finals}


def only_run_dir(out: Path) -> Path:
    dirs = [p for p in out.iterdir() if p.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def test_sigkill_mid_run_then_rerun_finds_every_sample_once(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    args = ["--data", str(bench), "--model", "over-searcher", "--out", str(out), "--flush-every", "2", "--no-progress"]
    proc = start(args)
    wait_for("*/trajectories-00000.parquet", out, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    run_dir = only_run_dir(out)
    assert not (run_dir / "_SUCCESS").exists()
    kept = finished_samples(run_dir)
    assert 0 < len(kept) < N_ITEMS

    again = subprocess.run([*harness(), "run", *args], capture_output=True, text=True, env=clean_env())
    assert again.returncode == 0, again.stderr
    assert only_run_dir(out) == run_dir
    done = check_consistent(run_dir)
    ids = [json.loads(line)["id"] for line in (bench / "qa" / "full.jsonl").read_text().splitlines()]
    assert done == set(ids)
    success = json.loads((run_dir / "_SUCCESS").read_text())
    assert success["n_samples"] == N_ITEMS
    line = again.stdout.strip().splitlines()[-1].split()
    assert line[0] == run_dir.name and line[1] == str(run_dir) and line[2] == f"n={N_ITEMS}/{N_ITEMS}"
    traj = [r for r in rows(run_dir, "trajectories")]
    acc = sum(r["is_correct"] for r in traj if r["is_final"]) / N_ITEMS
    assert line[3] == f"accuracy={acc:.3f}" and line[4] == f"tokens={sum(r['total_tokens'] for r in traj)}"


def test_ctrl_c_keeps_finished_samples_and_says_how_to_resume(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    args = ["--data", str(bench), "--model", "greedy-reader", "--out", str(out), "--flush-every", "2", "--no-progress"]
    proc = start(args)
    wait_for("*/trajectories-00000.parquet", out, proc)
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "rerun the same command to resume" in stderr and "Traceback" not in stderr
    run_dir = only_run_dir(out)
    assert f"{run_dir.name}  {run_dir}  n=" in stdout and "[interrupted]" in stdout
    assert not (run_dir / "_SUCCESS").exists()
    kept = check_consistent(run_dir)
    assert 0 < len(kept) < N_ITEMS
    assert pq.read_table(run_dir / "runs-00000.parquet").column("finished_at")[0].as_py() is None

    again = subprocess.run([*harness(), "run", *args], capture_output=True, text=True, env=clean_env())
    assert again.returncode == 0, again.stderr
    assert len(check_consistent(run_dir)) == N_ITEMS and (run_dir / "_SUCCESS").exists()


def test_ctrl_c_during_a_panel_in_the_process_pool(bench: Path, tmp_path: Path) -> None:
    panel = tmp_path / "panel.yaml"
    panel.write_text(
        "models:\n"
        "  - {name: over-searcher, sim: {archetype: over_searcher}}\n"
        "  - {name: greedy-reader, sim: {archetype: greedy_reader}}\n"
        "  - {name: verifier, sim: {archetype: verifier}}\n"
    )
    out = tmp_path / "runs"
    args = ["--data", str(bench), "--panel", str(panel), "--out", str(out), "--processes", "2",
            "--flush-every", "2", "--no-progress"]
    proc = start(args)
    wait_for("*/trajectories-00000.parquet", out, proc)
    os.killpg(proc.pid, signal.SIGINT)  # like Ctrl-C in a terminal: the parent and the pool's processes
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "rerun the same command to resume" in stderr and "Traceback" not in stderr
    assert len(stdout.strip().splitlines()) == 3
    assert not list(out.glob("*/_SUCCESS")) or len(list(out.glob("*/_SUCCESS"))) < 3
    for run_dir in out.iterdir():
        check_consistent(run_dir)
    again = subprocess.run([*harness(), "run", *args], capture_output=True, text=True, env=clean_env())
    assert again.returncode == 0, again.stderr
    assert len(list(out.glob("*/_SUCCESS"))) == 3
    for run_dir in out.iterdir():
        assert len(check_consistent(run_dir)) == N_ITEMS


def test_ablation_runs_get_their_own_directory(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "runs"
    base = ["run", "--data", str(bench), "--model", "balanced", "--out", str(out), "--limit", "3", "--no-progress"]
    runner = CliRunner()
    full = runner.invoke(cli_main, base)
    ns = runner.invoke(cli_main, [*base, "--condition", "no_search"])
    cb = runner.invoke(cli_main, [*base, "--condition", "closed_book", "--budget", "10"])
    assert full.exit_code == ns.exit_code == cb.exit_code == 0, (full.output, ns.output, cb.output)
    dirs = [r.output.split()[1] for r in (full, ns, cb)]
    assert len(set(dirs)) == 3 and "__full__r0__" in dirs[0] and "__no_search__r0__" in dirs[1]
    assert sorted(p.name for p in out.iterdir()) == sorted(Path(d).name for d in dirs)
    again = runner.invoke(cli_main, base)
    assert again.output.split()[1] == dirs[0]  # the same configuration resumes into the same directory



def test_api_key_never_reaches_any_output(bench: Path, tmp_path: Path) -> None:
    key = f"sk-agenthop-FAKE-{secrets.token_hex(12)}"
    replies = [completion(tool_calls=[tool_call(f"c{i}", "submit_answer", {"answer": "A", "reasoning": "r"})],
                          prompt_tokens=120, completion_tokens=8) for i in range(3)]
    out = tmp_path / "runs"
    with OpenAIServer(replies) as srv:
        proc = subprocess.run(
            [*harness(), "run", "--data", str(bench), "--model", "my-api-model", "--backend", "openai",
             "--model-id", "provider/model-x", "--base-url", srv.base_url, "--api-key-env", "AGENTHOP_TEST_KEY",
             "--limit", "3", "--workers", "2", "--out", str(out), "--no-progress"],
            capture_output=True, text=True, env=clean_env(AGENTHOP_TEST_KEY=key), timeout=120,
        )
        auth = [r.headers.get("Authorization") or r.headers.get("authorization") for r in srv.requests]
    assert proc.returncode == 0, proc.stderr
    assert auth == [f"Bearer {key}"] * 3  # the key was used ...
    run_dir = only_run_dir(out)
    assert (run_dir / "_SUCCESS").exists() and list(run_dir.glob("messages-*.parquet"))  # real: messages kept
    written = written_bytes(out)
    assert key.encode() not in written and key[8:].encode() not in written  # ... and written nowhere
    assert key not in proc.stdout and key not in proc.stderr
    cfg = json.loads(pq.read_table(run_dir / "runs-00000.parquet").column("config_json")[0].as_py())
    assert cfg["api_key_env"] == "AGENTHOP_TEST_KEY" and cfg["model_id"] == "provider/model-x"
    assert cfg["custom_base_url"] is True
    assert f"127.0.0.1:{srv.port}".encode() not in written and srv.base_url.encode() not in written
    finals = [r for r in rows(run_dir, "trajectories") if r["is_final"]]
    assert len(finals) == 3 and all(r["terminated_by"] == "answer" and r["total_tokens"] == 128 for r in finals)


def test_missing_api_key_is_a_clear_error(bench: Path, tmp_path: Path) -> None:
    env = clean_env()
    env.pop("AGENTHOP_TEST_KEY", None)
    res = CliRunner().invoke(cli_main, ["run", "--data", str(bench), "--model", "x", "--backend", "openai",
                                        "--api-key-env", "AGENTHOP_TEST_KEY", "--out", str(tmp_path)], env=env)
    assert res.exit_code == 2 and "AGENTHOP_TEST_KEY is not set" in res.output
    assert not any(tmp_path.iterdir())  # nothing was created


@pytest.mark.parametrize(("text", "expected"), [
    ("models: [{name: a, sim: {archetype: balanced}, backnd: sim}]", ":1: models[0] (a).backnd: unknown key"),
    ("models:\n  - name: a\n    backend: simm\n", ":3: models[0] (a).backend: 'simm' is not one of sim, openai"),
    ("models:\n  - name: a\n    sim: {archetype: nope}\n", ":3: models[0] (a): sim.archetype: unknown archetype"),
    ("models:\n  - name: a\n    sim: {archetype: balanced}\n    conditions: [full, oracle]\n",
     ":4: models[0] (a).conditions: 'oracle' is not one of"),
    ("models:\n  - {name: a, sim: {archetype: balanced}}\n  - {name: a, sim: {archetype: verifier}}\n",
     ":3: models[1] (a).name: duplicate model name"),
    ("defaults: {replicates: 0}\nmodels: [{name: a, sim: {archetype: balanced}}]\n",
     ":1: models[0] (a).replicates: must be a positive integer"),
    ("models:\n  - name: gpt-4o\n    sim: {archetype: balanced}\n", ":2: models[0] (gpt-4o).name: 'gpt-4o' looks like"),
    ("models:\n  - name: m\n    backend: openai\n    sampling: {api_key: sk-123}\n",
     ":4: models[0] (m).sampling.api_key: credentials"),
    ("models:\n  - name: m\n    backend: openai\n    sampling: {temprature: 0.1}\n",
     ":4: models[0] (m).sampling: openai backend: unknown sampling parameter 'temprature'"),
    ("models:\n  - name: m\n    backend: openai\n    api_key_env: sk-live-123\n", ":4: models[0] (m).api_key_env: must be"),
    ("models:\n  - name: a\n    sim: {archetype: balanced}\n    tier: frontier\n", ":4: models[0] (a).tier: 'frontier'"),
    ("models:\n  - {name: a, sim: {archetype: balanced}}\n  - name: b\n  name: c\n", "invalid YAML"),
    ("models: []\n", ":1: models: must be a non-empty list"),
    ("modles: []\n", ":1: modles: unknown key"),
])
def test_panel_errors_name_file_line_and_key(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad_panel.yaml"
    path.write_text(text)
    with pytest.raises(AgentHopError) as info:
        load_panel(path)
    msg = str(info.value)
    assert msg.startswith(str(path)) and expected in msg, msg


def test_panel_error_through_the_cli(bench: Path, tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("models:\n  - name: a\n    sim: {archetype: balanced, navigation_skil: 0.3}\n")
    res = CliRunner().invoke(cli_main, ["run", "--data", str(bench), "--panel", str(path), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert f"{path}:3: models[0] (a): sim: unknown policy parameter(s) navigation_skil" in res.output
    res = CliRunner().invoke(cli_main, ["run", "--data", str(bench), "--panel", str(path), "--model", "x"])
    assert res.exit_code == 2 and "exactly one of --model NAME or --panel FILE" in res.output
    res = CliRunner().invoke(cli_main, ["run", "--data", str(bench), "--model", "mystery"])
    assert res.exit_code == 2 and "unknown archetype 'mystery'" in res.output


def test_limit_zero_and_hyphenated_archetype(bench: Path, tmp_path: Path) -> None:
    # --limit 0 used to write an empty *finished* run under the full run's id, which replaced the
    # full run in the warehouse on the next ingest
    res = CliRunner().invoke(cli_main, ["run", "--data", str(bench), "--model", "verifier", "--limit", "0",
                                        "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "'--limit': 0 is not in the range x>=1" in res.output
    assert not (tmp_path / "o").exists()
    # --sim-archetype takes the same spelling as --model (early-committer = early_committer)
    res = CliRunner().invoke(cli_main, ["run", "--data", str(bench), "--model", "x", "--sim-archetype",
                                        "early-committer", "--limit", "1", "--out", str(tmp_path / "p"),
                                        "--no-progress"])
    assert res.exit_code == 0, res.output
    run_dir = only_run_dir(tmp_path / "p")
    assert '"archetype": "early_committer"' in rows(run_dir, "runs")[0]["config_json"]


def test_shipped_panels_are_valid() -> None:
    repo = Path(__file__).resolve().parents[1]
    for path in sorted((repo / "panels").glob("*.yaml")) + sorted((repo / "tests" / "fixtures").glob("panel*.yaml")):
        panel = load_panel(path)
        # *.real.yaml panels name real providers (checked by tests/test_providers.py); the others simulate
        assert panel.models and all((m.backend == "sim") != path.name.endswith(".real.yaml") for m in panel.models)
    assert len(load_panel(repo / "panels" / "paper19.yaml").models) == 19


def test_messages_flag_records_sim_transcripts(bench: Path, tmp_path: Path) -> None:
    res = CliRunner().invoke(cli_main, ["run", "--data", str(bench), "--model", "verifier", "--limit", "2",
                                        "--messages", "--out", str(tmp_path), "--no-progress"])
    assert res.exit_code == 0, res.output
    run_dir = only_run_dir(tmp_path)
    msgs = rows(run_dir, "messages")
    assert {m["sample_id"] for m in msgs} == finished_samples(run_dir) and msgs[0]["role"] == "system"
    shutil.rmtree(run_dir)


def test_bad_release_in_a_pool_panel_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    (bad / "qa").mkdir(parents=True)
    (bad / "qa" / "full.jsonl").write_text('{"id": "x1"}\n')
    panel = tmp_path / "p.yaml"
    panel.write_text("models:\n  - {name: a, sim: {archetype: balanced}}\n  - {name: b, sim: {archetype: verifier}}\n")
    res = CliRunner().invoke(cli_main, ["run", "--data", str(bad), "--panel", str(panel), "--processes", "2",
                                        "--out", str(tmp_path / "o"), "--no-progress"])
    assert res.exit_code == 2, res.output
    assert "qa/full.jsonl:1: field 'question_type': missing required field" in res.output
    assert "Traceback" not in res.output
