"""Runner: run identity, resume, attempts, run-wide token cap, panels (in-process, real loop + sim)."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from agenthop.harness import loop as loop_mod
from agenthop.harness.backends.base import BackendError
from agenthop.harness.backends.sim import SimBackend
from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.benchmarks.agenthop.loader import load_release
from agenthop.harness.benchmarks.agenthop.model import Release
from agenthop.harness.panel import ModelSpec, RunSpec, parse_panel
from agenthop.harness.benchmarks.agenthop.policies.archetypes import policy_from_spec
from agenthop.harness.run_identity import RunCaps, model_slug, run_id_for
from agenthop.harness.runner import COMPLETE, TOKEN_CAP, RunOptions, run_model, run_panel

N_ITEMS = 12
EC = ModelSpec("early-committer", sim={"archetype": "early_committer"})
OPTS = RunOptions(progress=False)


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    root = tmp_path_factory.mktemp("bench") / "release"
    make_benchmark(root, N_ITEMS, seed=5)
    return load_release(root)


def rows(run_dir: Path, table: str, columns: list[str] | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in sorted(run_dir.glob(f"{table}-*.parquet")):
        out.extend(pq.read_table(p, columns=columns).to_pylist())
    return out


def finals(run_dir: Path) -> list[str]:
    return [r["sample_id"] for r in rows(run_dir, "trajectories") if r["is_final"]]


def count_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the sample ids the runner hands to the real loop."""
    seen: list[str] = []
    real = loop_mod.run_sample

    async def wrapped(item: Any, *args: Any, **kw: Any) -> Any:
        seen.append(item.id)
        return await real(item, *args, **kw)

    monkeypatch.setattr(loop_mod, "run_sample", wrapped)
    return seen


def test_run_id_identity() -> None:
    caps = RunCaps()
    rid = run_id_for(RunSpec(EC, "full", 0), caps, "abc", 0)
    assert rid.startswith("early-committer__full__r0__") and len(rid.rsplit("__", 1)[1]) == 8
    assert rid == run_id_for(RunSpec(EC, "full", 0), caps, "abc", 0)
    others = {
        run_id_for(RunSpec(EC, "no_search", 0), caps, "abc", 0),
        run_id_for(RunSpec(EC, "closed_book", 0), caps, "abc", 0),
        run_id_for(RunSpec(EC, "full", 1), caps, "abc", 0),
        run_id_for(RunSpec(EC, "full", 0), RunCaps(budget=20), "abc", 0),
        run_id_for(RunSpec(EC, "full", 0), RunCaps(max_total_tokens=100_000), "abc", 0),
        run_id_for(RunSpec(EC, "full", 0), caps, "abd", 0),
        run_id_for(RunSpec(EC, "full", 0), caps, "abc", 1),
        run_id_for(RunSpec(ModelSpec("early-committer", sim={"archetype": "early_committer",
                                                             "synthesis_skill": 0.5}), "full", 0), caps, "abc", 0),
    }
    assert rid not in others and len(others) == 8
    # an override equal to the archetype's default resolves to the same policy: same identity
    same = ModelSpec("early-committer", sim={"archetype": "early_committer",
                                             "navigation_skill": policy_from_spec({"archetype": "early_committer"})
                                             .navigation_skill})
    assert run_id_for(RunSpec(same, "full", 0), caps, "abc", 0) == rid
    api = ModelSpec("my-api", backend="openai", model_id="m1", sampling={"temperature": 0.7})
    assert run_id_for(RunSpec(api, "full", 0), caps, "abc", 0) != run_id_for(
        RunSpec(ModelSpec("my-api", backend="openai", model_id="m1", sampling={"temperature": 0.2}), "full", 0),
        caps, "abc", 0)
    # base URLs and key variables are not part of the identity
    assert run_id_for(RunSpec(api, "full", 0), caps, "abc", 0) == run_id_for(
        RunSpec(ModelSpec("my-api", backend="openai", model_id="m1", sampling={"temperature": 0.7},
                          base_url="http://other:1/v1", api_key_env="OTHER_KEY"), "full", 0), caps, "abc", 0)
    assert model_slug("Org/Model 7B:Instruct") == "org-model-7b-instruct"


def test_resume_runs_only_unfinished_samples(release: Release, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    seen = count_calls(monkeypatch)
    first = run_model(RunSpec(EC, "full", 0), release, tmp_path, OPTS, limit=5, flush_every=2)
    ids = [it.id for it in release.items]
    assert first.status == COMPLETE and first.n_done == 5 and first.n_new == 5 and seen == ids[:5]
    run_dir = Path(first.run_dir)
    assert run_dir == tmp_path / first.run_id and (run_dir / "_SUCCESS").exists()
    # written in three parts (2 + 2 + 1 samples), compacted into one per table when the run finished
    assert sorted(p.name for p in run_dir.glob("*-0*.parquet")) == [
        "runs-00000.parquet", "tool_calls-00003.parquet", "trajectories-00003.parquet", "turns-00003.parquet"]

    seen.clear()
    again = run_model(RunSpec(EC, "full", 0), release, tmp_path, OPTS, limit=5)
    assert again.status == COMPLETE and again.n_new == 0 and seen == []  # nothing to do, nothing rewritten

    more = run_model(RunSpec(EC, "full", 0), release, tmp_path, OPTS)
    assert more.run_id == first.run_id and seen == ids[5:] and more.n_new == N_ITEMS - 5
    got = finals(run_dir)
    assert sorted(got) == sorted(ids) and len(got) == len(set(got))
    success = json.loads((run_dir / "_SUCCESS").read_text())
    assert success["n_samples"] == N_ITEMS and success["n_items_requested"] == N_ITEMS
    keys = [(r["run_id"], r["sample_id"], r["attempt"]) for r in rows(run_dir, "trajectories")]
    assert len(keys) == len(set(keys))
    turn_keys = [(r["sample_id"], r["attempt"], r["turn"]) for r in rows(run_dir, "turns")]
    assert len(turn_keys) == len(set(turn_keys))
    # the runs row and the result line agree with the data
    traj = [r for r in rows(run_dir, "trajectories") if r["is_final"]]
    assert more.n_correct == sum(r["is_correct"] for r in traj)
    assert more.tokens == sum(r["total_tokens"] for r in rows(run_dir, "trajectories"))
    run_row = rows(run_dir, "runs")[0]
    assert run_row["model"] == "early-committer" and run_row["backend"] == "sim" and run_row["replicate"] == 0
    assert run_row["benchmark_sha256"] == release.benchmark_sha256 and run_row["budget_total"] == 30
    cfg = json.loads(run_row["config_json"])
    assert cfg["condition"] == "full" and cfg["sim"]["navigation_skill"] == policy_from_spec(
        {"archetype": "early_committer"}).navigation_skill and cfg["record_messages"] is False
    assert not list(run_dir.glob("messages-*"))  # sim default: no messages table


def test_results_do_not_depend_on_how_the_run_was_split(release: Release, tmp_path: Path) -> None:
    a = run_model(RunSpec(EC, "full", 0), release, tmp_path / "a", OPTS)
    run_model(RunSpec(EC, "full", 0), release, tmp_path / "b", OPTS, limit=4)
    b = run_model(RunSpec(EC, "full", 0), release, tmp_path / "b", OPTS)
    assert a.run_id == b.run_id

    def table(root: Path, name: str) -> list[tuple[Any, ...]]:
        got = rows(root / a.run_id, name)
        return sorted(tuple(v for k, v in r.items() if k not in ("wall_time_s", "t_offset_s")) for r in got)

    for name in ("trajectories", "turns", "tool_calls"):
        assert table(tmp_path / "a", name) == table(tmp_path / "b", name)


def test_ablations_get_their_own_directories(release: Release, tmp_path: Path) -> None:
    full = run_model(RunSpec(EC, "full", 0), release, tmp_path, OPTS, limit=3)
    before = {p.name: p.read_bytes() for p in Path(full.run_dir).iterdir() if p.is_file()}
    ns = run_model(RunSpec(EC, "no_search", 0), release, tmp_path, OPTS, limit=3)
    cb = run_model(RunSpec(EC, "closed_book", 0), release, tmp_path, OPTS, limit=3)
    capped = run_model(RunSpec(EC, "full", 0), release, tmp_path, OPTS, limit=3, caps=RunCaps(budget=10))
    dirs = {full.run_dir, ns.run_dir, cb.run_dir, capped.run_dir}
    assert len(dirs) == 4 and ns.n_new == cb.n_new == capped.n_new == 3
    assert "__no_search__" in ns.run_id and "__closed_book__" in cb.run_id
    after = {p.name: p.read_bytes() for p in Path(full.run_dir).iterdir() if p.is_file()}
    assert after == before  # the full run was neither resumed from nor overwritten
    assert rows(Path(cb.run_dir), "runs")[0]["condition"] == "closed_book"
    assert rows(Path(capped.run_dir), "runs")[0]["budget_total"] == 10
    # closed_book never navigates: only think / submit_answer calls
    assert {r["tool"] for r in rows(Path(cb.run_dir), "tool_calls")} <= {"think", "submit_answer"}
    assert "search_papers" not in {r["tool"] for r in rows(Path(ns.run_dir), "tool_calls")
                                   if r["status"] != "rejected_disabled"}


class FlakySim:
    """The real sim backend, except that every model call of chosen samples fails (non-transient)."""

    name = "sim"

    def __init__(self, inner: SimBackend, failing: set[str]) -> None:
        self.inner, self.failing = inner, failing

    def start(self, ctx: Any) -> Any:
        conv = self.inner.start(ctx)
        if ctx.item.id not in self.failing:
            return conv

        class Broken:
            async def complete(self) -> Any:
                raise BackendError("HTTP 400: scripted failure")

            def __getattr__(self, name: str) -> Any:
                return getattr(conv, name)

        return Broken()


def test_error_attempts_are_kept_and_retried_on_resume(release: Release, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import agenthop.harness.backends as backends

    real_make = backends.make_backend
    bad = release.items[1].id
    failing = {bad}
    monkeypatch.setattr(backends, "make_backend", lambda spec, **kw: FlakySim(real_make(spec, **kw), failing))
    res = run_model(RunSpec(EC, "full", 0), release, tmp_path, OPTS, limit=3)
    run_dir = Path(res.run_dir)
    traj = [r for r in rows(run_dir, "trajectories") if r["sample_id"] == bad]
    assert [(r["attempt"], r["is_final"], r["terminated_by"]) for r in traj] == [
        (0, False, "error"), (1, False, "error"), (2, True, "error")]
    assert all(r["api_error_count"] == 5 and r["total_tokens"] == 0 for r in traj)
    assert res.status == COMPLETE and res.n_done == 3

    failing.clear()  # the provider recovered
    seen = count_calls(monkeypatch)
    res2 = run_model(RunSpec(EC, "full", 0), release, tmp_path, OPTS, limit=3)
    assert seen == [bad] and res2.n_done == 3
    traj = sorted((r for r in rows(run_dir, "trajectories") if r["sample_id"] == bad), key=lambda r: r["attempt"])
    # the failed attempts stay (their tokens were spent), the new attempt continues the numbering
    assert [(r["attempt"], r["is_final"], r["terminated_by"]) for r in traj] == [
        (0, False, "error"), (1, False, "error"), (2, False, "error"), (3, True, "answer")]
    assert sorted(finals(run_dir)) == sorted(it.id for it in release.items[:3])
    turn_keys = [(r["sample_id"], r["attempt"], r["turn"]) for r in rows(run_dir, "turns")]
    assert len(turn_keys) == len(set(turn_keys))  # keys unique across old and new parts
    assert {r["attempt"] for r in rows(run_dir, "tool_calls") if r["sample_id"] == bad} == {3}
    # --keep-errors: nothing is rerun
    failing.add(release.items[2].id)
    run_model(RunSpec(EC, "no_search", 0), release, tmp_path, OPTS, limit=3)
    seen.clear()
    failing.clear()
    kept = run_model(RunSpec(EC, "no_search", 0), release, tmp_path, OPTS, limit=3, retry_errors=False)
    assert seen == [] and kept.n_new == 0


def test_run_wide_token_cap_cancels_workers_without_hanging(release: Release, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Four concurrent workers (a real-backend run, played by the sim policy) and a run-wide cap."""
    import agenthop.harness.backends as backends

    api = ModelSpec("api-model", backend="openai", model_id="m", base_url="http://127.0.0.1:9/v1")
    sim = backends.make_backend(EC)
    monkeypatch.setattr(backends, "make_backend", lambda spec, **kw: sim)
    real = loop_mod.run_sample
    first = release.items[0].id

    async def slow(item: Any, *args: Any, **kw: Any) -> Any:
        # the first sample finishes soon and crosses the cap; the others would take 30 s each
        await asyncio.sleep(0.05 if item.id == first else 30)
        return await real(item, *args, **kw)

    monkeypatch.setattr(loop_mod, "run_sample", slow)
    out: dict[str, Any] = {}

    def go() -> None:
        out["res"] = run_model(RunSpec(api, "full", 0), release, tmp_path, OPTS, workers=4, max_run_tokens=1,
                               handle_signals=False)

    t = threading.Thread(target=go)
    t.start()
    t.join(timeout=20)
    assert not t.is_alive(), "in-flight samples were not cancelled after the token cap"
    res = out["res"]
    assert res.status == TOKEN_CAP
    # the first finished sample crosses the cap; the three others in flight are cancelled, not written
    assert res.n_done == 1 and res.n_new == 1
    run_dir = Path(res.run_dir)
    assert not (run_dir / "_SUCCESS").exists() and len(finals(run_dir)) == 1
    assert rows(run_dir, "runs")[0]["finished_at"] is None
    # resumed samples count toward the cap: a rerun with the same cap starts nothing
    again = run_model(RunSpec(api, "full", 0), release, tmp_path, OPTS, workers=4, max_run_tokens=1,
                      handle_signals=False)
    assert again.status == TOKEN_CAP and again.n_new == 0 and again.n_done == 1


PANEL = """
defaults: {backend: sim, conditions: [full]}
models:
  - {name: early-committer, sim: {archetype: early_committer}, family: sim-demo, tier: closed_frontier}
  - {name: looper, sim: {archetype: metadata_looper}, conditions: [full, closed_book]}
  - {name: verifier, sim: {archetype: verifier}, replicates: 2}
"""


def test_panel_in_a_process_pool(release: Release, tmp_path: Path) -> None:
    import yaml

    from agenthop.harness.panel import _loader

    panel = parse_panel(yaml.load(PANEL, Loader=_loader()), "panel.yaml")
    results = run_panel(panel, release.root, tmp_path, OPTS, processes=2, limit=6)
    assert [(r.model, r.condition, r.replicate) for r in results] == [
        ("early-committer", "full", 0), ("looper", "full", 0), ("looper", "closed_book", 0),
        ("verifier", "full", 0), ("verifier", "full", 1)]
    assert all(r.status == COMPLETE and r.n_done == 6 for r in results)
    assert len({r.run_id for r in results}) == 5
    for r in results:
        assert sorted(finals(Path(r.run_dir))) == sorted(it.id for it in release.items[:6])
    row = rows(Path(results[0].run_dir), "runs")[0]
    assert (row["family"], row["tier"]) == ("sim-demo", "closed_frontier")
    # replicates differ in their draws; the looper never reads
    v0, v1 = (rows(Path(r.run_dir), "tool_calls", ["sample_id", "seq", "tool"]) for r in results[3:])
    assert v0 != v1
    assert "read_section" not in {c["tool"] for c in rows(Path(results[1].run_dir), "tool_calls")}
    # the same panel again: every run is already finished
    again = run_panel(panel, release.root, tmp_path, OPTS, processes=2, limit=6)
    assert [r.n_new for r in again] == [0] * 5 and [r.run_id for r in again] == [r.run_id for r in results]


def test_a_crashing_run_keeps_finished_samples_and_the_panel_goes_on(
        release: Release, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    real = loop_mod.run_sample
    boom = release.items[3].id

    async def buggy(item: Any, graph: Any, papers: Any, labels: Any, backend: Any, cfg: Any, seed: int,
                    first_attempt: int = 0) -> Any:
        if item.id == boom and cfg.condition == "full":
            raise RuntimeError("bug in the loop")
        return await real(item, graph, papers, labels, backend, cfg, seed, first_attempt)

    monkeypatch.setattr(loop_mod, "run_sample", buggy)
    results = run_panel([RunSpec(EC, "full", 0), RunSpec(EC, "no_search", 0)], release, tmp_path, OPTS,
                        processes=1, limit=6, flush_every=2)  # in this process, where the patch applies
    assert [r.status for r in results] == ["failed", COMPLETE]
    assert "RuntimeError: bug in the loop" in (results[0].error or "")
    assert "run early-committer__full__r0__" in capsys.readouterr().err
    run_dir = tmp_path / results[0].run_id
    assert sorted(finals(run_dir)) == sorted(it.id for it in release.items[:3])  # finished before the crash
    assert not (run_dir / "_SUCCESS").exists() and (tmp_path / results[1].run_id / "_SUCCESS").exists()


def test_real_backends_write_every_finished_sample_at_once() -> None:
    """docs/formats.md#trajectory-store: a crash loses at most the samples in flight. Real samples cost money, so each is
    flushed as it finishes; simulated runs batch (docs/running.md)."""
    opts = RunOptions()
    assert opts.flush_for("openai")[0] == 1 and opts.flush_for("anthropic")[0] == 1
    assert opts.flush_for("sim")[0] > 1
    assert RunOptions(flush_every=5).flush_for("openai")[0] == 5  # --flush-every overrides
