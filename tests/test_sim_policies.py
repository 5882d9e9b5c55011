"""Simulated agents through the real loop and sandbox on a generated benchmark (docs/simulated_agents.md).

Each archetype must show its signature in the quantities the marts compute (docs/metrics.md#definitions): the rates
below are recomputed here by hand from the loop's rows (final attempts, calls ordered by seq).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agenthop.harness.backends.base import SampleContext
from agenthop.harness.backends.sim import SimBackend, SimConversation, stable_seed
from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.benchmarks.agenthop.loader import load_release
from agenthop.harness.benchmarks.agenthop.model import Release
from agenthop.harness.loop import AttemptResult, LoopConfig, build_context, no_sleep, run_sample
from agenthop.harness.benchmarks.agenthop.policies.archetypes import ARCHETYPES
from agenthop.harness.benchmarks.agenthop.policies.params import PolicyParams
from agenthop.harness.benchmarks.agenthop import prompts

NAV = {"get_paper_info", "get_references", "search_papers", "list_sections"}
N_ITEMS = 120


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    out = tmp_path_factory.mktemp("sim_bench") / "release"
    make_benchmark(out, N_ITEMS, 11)
    return load_release(out)


def run_model(release: Release, params: PolicyParams, name: str = "sim-test", *, condition: str = "full",
              seed: int = 0, record: bool = False, limit: int | None = None) -> list[list[AttemptResult]]:
    backend = SimBackend(params, name, seed)
    cfg = LoopConfig(condition=condition, sleep=no_sleep, record_messages=record)
    items = release.items[:limit] if limit else release.items

    async def go() -> list[list[AttemptResult]]:
        return [
            await run_sample(it, release.graphs[it.id], release.papers, release.labels.get(it.id, []),
                             backend, cfg, seed)
            for it in items
        ]

    return asyncio.run(go())


def finals(results: list[list[AttemptResult]]) -> list[AttemptResult]:
    return [r[-1] for r in results]


def ordered_calls(r: AttemptResult) -> list[dict[str, Any]]:
    return sorted(r.tool_calls, key=lambda c: c["seq"])


def delivered(c: dict[str, Any]) -> bool:
    return c["tool"] == "read_section" and c["status"] == "ok"


def paper_recall(release: Release, r: AttemptResult) -> bool:
    golds = set(release.item(r.trajectory["sample_id"]).gold_paper_ids)
    return golds <= {c["paper_id"] for c in r.tool_calls if delivered(c)}


def calls_per_turn(rs: list[AttemptResult]) -> float:
    """docs/metrics.md#per-run-metrics: all emitted calls / assistant turns with at least one call."""
    calls = sum(len(r.tool_calls) for r in rs)
    turns = sum(1 for r in rs for t in r.turns if t["role"] == "assistant" and t["n_tool_calls"] > 0)
    return calls / turns


def st_stopping(release: Release, rs: list[AttemptResult]) -> Counter[str]:
    """docs/metrics.md#stopping-behaviour scope ST: anchor = first delivered gold read."""
    out: Counter[str] = Counter()
    for r in rs:
        item = release.item(r.trajectory["sample_id"])
        if item.is_multi_target or not paper_recall(release, r):
            continue
        calls = ordered_calls(r)
        golds = set(item.gold_paper_ids)
        k = next(i for i, c in enumerate(calls) if delivered(c) and c["paper_id"] in golds)
        s = calls[k + 1:]
        if any(c["tool"] == "read_section" for c in s):
            out["read"] += 1
        elif s and s[0]["tool"] == "submit_answer":
            out["immediate"] += 1
        elif any(c["tool"] == "think" for c in s) and not any(c["tool"] in NAV for c in s):
            out["think"] += 1
        else:
            out["other"] += 1
    return out


def bigrams(rs: list[AttemptResult]) -> Counter[tuple[str, str]]:
    out: Counter[tuple[str, str]] = Counter()
    for r in rs:
        seq = [c["tool"] for c in ordered_calls(r)]
        out.update(zip(seq, seq[1:]))
    return out


def p_next(big: Counter[tuple[str, str]], prev: str, nxt: str) -> float:
    total = sum(n for (a, _), n in big.items() if a == prev)
    return big[(prev, nxt)] / total if total else 0.0


def share(rs: list[AttemptResult], terminated_by: str) -> float:
    return sum(r.trajectory["terminated_by"] == terminated_by for r in rs) / len(rs)


def accuracy(rs: list[AttemptResult]) -> float:
    return sum(r.trajectory["is_correct"] for r in rs) / len(rs)


def rows_without_clock(results: list[list[AttemptResult]]) -> list[Any]:
    """Every row the loop produced, minus wall-clock columns."""
    out = []
    for attempts in results:
        for r in attempts:
            traj = {k: v for k, v in r.trajectory.items() if k != "wall_time_s"}
            turns = [{k: v for k, v in t.items() if k != "t_offset_s"} for t in r.turns]
            out.append((traj, turns, r.tool_calls))
    return out


# --------------------------------------------------------------------------------------------
# determinism


def test_same_seed_same_trajectories_and_other_seed_differs(release: Release) -> None:
    p = ARCHETYPES["balanced"]
    a = rows_without_clock(run_model(release, p, limit=40))
    b = rows_without_clock(run_model(release, p, limit=40))
    c = rows_without_clock(run_model(release, p, seed=1, limit=40))
    assert a == b
    assert a != c


def test_responses_identical_call_by_call(release: Release) -> None:
    """Two conversations from equal contexts emit equal responses (ids, args, token counts)."""
    item = release.items[3]
    cfg = LoopConfig(sleep=no_sleep)
    ctx = build_context(item, release.graphs[item.id], release.papers, release.labels[item.id], cfg, 5)
    backend = SimBackend(ARCHETYPES["verifier"], "sim-v", 9)
    convs = [backend.start(ctx), backend.start(ctx)]
    for _ in range(6):
        r1, r2 = (c.step() for c in convs)
        assert (r1.text, r1.prompt_tokens, r1.completion_tokens) == (r2.text, r2.prompt_tokens, r2.completion_tokens)
        assert [(t.id, t.name, t.args) for t in r1.tool_calls] == [(t.id, t.name, t.args) for t in r2.tool_calls]
        for conv, resp in zip(convs, (r1, r2)):
            conv.add_assistant(resp)
            conv.add_tool_results([(t, "Noted.") for t in resp.tool_calls])


def test_stable_seed_is_blake2b_of_the_parts() -> None:
    expected = int.from_bytes(hashlib.blake2b("1\x1fsim-a\x1fst_0001\x1f0".encode(), digest_size=8).digest(), "big")
    assert stable_seed(1, "sim-a", "st_0001", 0) == expected
    assert stable_seed(1, "sim-a", "st_0001", 1) != expected


def test_trajectories_do_not_depend_on_python_hash_seed(release: Release) -> None:
    root = Path(release.root)
    script = (
        "import asyncio, hashlib, json, sys\n"
        "from agenthop.harness.benchmarks.agenthop.loader import load_release\n"
        "from agenthop.harness.backends.sim import SimBackend\n"
        "from agenthop.harness.benchmarks.agenthop.policies.archetypes import ARCHETYPES\n"
        "from agenthop.harness.loop import LoopConfig, run_sample, no_sleep\n"
        "rel = load_release(sys.argv[1], limit=25)\n"
        "be = SimBackend(ARCHETYPES['early_committer'], 'sim-h', 3)\n"
        "cfg = LoopConfig(sleep=no_sleep)\n"
        "async def go():\n"
        "    out = []\n"
        "    for it in rel.items:\n"
        "        for r in await run_sample(it, rel.graphs[it.id], rel.papers, rel.labels.get(it.id, []), be, cfg, 0):\n"
        "            out.append([r.trajectory['terminated_by'], r.trajectory['total_tokens'],\n"
        "                        [(c['tool'], c['args_json'], c['status']) for c in r.tool_calls]])\n"
        "    return out\n"
        "print(hashlib.sha256(json.dumps(asyncio.run(go())).encode()).hexdigest())\n"
    )
    digests = set()
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        proc = subprocess.run([sys.executable, "-c", script, str(root)], env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        digests.add(proc.stdout.strip())
    assert len(digests) == 1


# --------------------------------------------------------------------------------------------
# archetype signatures


def test_early_committer_parallel_and_submits_right_after_gold(release: Release) -> None:
    rs = finals(run_model(release, ARCHETYPES["early_committer"]))
    assert calls_per_turn(rs) > 1.2
    stop = st_stopping(release, rs)
    assert stop["immediate"] / sum(stop.values()) >= 0.55
    assert share(rs, "answer") == 1.0


def test_verifier_thinks_after_reads_and_rarely_raw_submits(release: Release) -> None:
    rs = finals(run_model(release, ARCHETYPES["verifier"]))
    big = bigrams(rs)
    assert p_next(big, "read_section", "think") >= 0.7
    stop = st_stopping(release, rs)
    n = sum(stop.values())
    assert stop["think"] / n >= 0.5
    assert stop["immediate"] / n <= 0.1
    # the call before nearly every submit is a think
    before_submit = Counter(a for (a, b), k in big.items() if b == "submit_answer" for _ in range(k))
    assert before_submit["think"] / sum(before_submit.values()) >= 0.8
    assert 0.95 <= calls_per_turn(rs) <= 1.05


def test_over_searcher_reads_after_gold_and_hits_token_cap(release: Release) -> None:
    rs = finals(run_model(release, ARCHETYPES["over_searcher"]))
    stop = st_stopping(release, rs)
    assert stop["read"] / sum(stop.values()) >= 0.8
    assert share(rs, "token_limit") >= 0.2
    over = [r for r in rs if r.trajectory["terminated_by"] == "token_limit"]
    assert all(r.trajectory["total_tokens"] > 200_000 for r in over)
    assert all(r.tool_calls[-1]["status"] == "not_executed" for r in over if r.tool_calls)


def test_metadata_looper_never_reads_and_guesses(release: Release) -> None:
    rs = finals(run_model(release, ARCHETYPES["metadata_looper"]))
    assert not any(c["tool"] == "read_section" for r in rs for c in r.tool_calls)
    assert sum(paper_recall(release, r) for r in rs) == 0
    top = bigrams(rs).most_common(2)
    assert {pair for pair, _ in top} == {("get_paper_info", "get_references"), ("get_references", "get_paper_info")}
    assert accuracy(rs) <= 0.45  # guesses: the prior is 0.3
    assert share(rs, "answer") >= 0.6


def test_greedy_reader_read_chains_and_token_overflow(release: Release) -> None:
    rs = finals(run_model(release, ARCHETYPES["greedy_reader"]))
    big = bigrams(rs)
    assert big.most_common(1)[0][0] == ("read_section", "read_section")
    assert p_next(big, "read_section", "read_section") >= 0.5
    assert share(rs, "token_limit") >= 0.08
    assert share(rs, "token_limit") + share(rs, "budget") >= 0.2
    trigrams = Counter()
    for r in rs:
        seq = [c["tool"] for c in ordered_calls(r)]
        trigrams.update(zip(seq, seq[1:], seq[2:]))
    assert trigrams.most_common(1)[0][0] == ("read_section",) * 3


def test_balanced_sits_between(release: Release) -> None:
    rs = finals(run_model(release, ARCHETYPES["balanced"]))
    assert 1.0 < calls_per_turn(rs) < 1.4
    stop = st_stopping(release, rs)
    assert all(stop[k] > 0 for k in ("read", "immediate", "think"))
    assert accuracy(rs) >= 0.6
    assert sum(paper_recall(release, r) for r in rs) / len(rs) >= 0.75


def test_skill_orders_accuracy(release: Release) -> None:
    strong = finals(run_model(release, replace(ARCHETYPES["balanced"], navigation_skill=0.9, synthesis_skill=0.95)))
    weak = finals(run_model(release, replace(ARCHETYPES["balanced"], navigation_skill=0.3, synthesis_skill=0.5)))
    assert accuracy(strong) - accuracy(weak) >= 0.2


# --------------------------------------------------------------------------------------------
# conditions


def test_closed_book_accuracy_near_prior(release: Release) -> None:
    p = ARCHETYPES["balanced"]
    rs = [r for seed in range(4) for r in finals(run_model(release, p, condition="closed_book", seed=seed))]
    assert len(rs) == 4 * N_ITEMS
    tools = Counter(c["tool"] for r in rs for c in r.tool_calls)
    assert set(tools) <= {"think", "submit_answer"}
    assert abs(accuracy(rs) - p.parametric_prior) <= 0.07
    assert share(rs, "answer") >= 0.99


def test_no_search_never_calls_search(release: Release) -> None:
    p = replace(ARCHETYPES["balanced"], search_propensity=1.0)
    rs = finals(run_model(release, p, condition="no_search"))
    assert not any(c["tool"] == "search_papers" for r in rs for c in r.tool_calls)
    assert share(rs, "answer") == 1.0
    full = finals(run_model(release, p, limit=30))
    assert any(c["tool"] == "search_papers" for r in full for c in r.tool_calls)


def test_no_search_costs_recall_on_depth_two_items(release: Release) -> None:
    """Without search, an agent that lacks a sense of direction (1 - navigation_skill per item)
    explores references at random, so depth-2 gold papers are found less often than with search."""
    p = replace(ARCHETYPES["balanced"], navigation_skill=0.5)
    full = finals(run_model(release, p))
    blind = finals(run_model(release, p, condition="no_search"))
    d2 = {it.id for it in release.items if it.depth == 2}

    def recall(rs: list[AttemptResult]) -> float:
        got = [paper_recall(release, r) for r in rs if r.trajectory["sample_id"] in d2]
        return sum(got) / len(got)

    assert recall(blind) < recall(full) - 0.1


# --------------------------------------------------------------------------------------------
# tokens, failure modes, reactions, transcript


def test_prompt_tokens_grow_with_everything_received(release: Release) -> None:
    rs = finals(run_model(release, ARCHETYPES["balanced"], limit=30))
    for r in rs:
        turns = [t for t in r.turns if t["role"] == "assistant"]
        for prev, nxt in zip(turns, turns[1:]):
            received = sum(c["output_chars"] for c in r.tool_calls if c["turn"] == prev["turn"])
            assert nxt["prompt_tokens"] - prev["prompt_tokens"] >= received // 4
        assert all(t["cache_read_tokens"] == 0 and t["cache_creation_tokens"] == 0 for t in turns)
        # the first call re-sends the system prompt, the first message and the tool schemas
        assert turns[0]["prompt_tokens"] >= 3000 // 4


def test_empty_responses_take_the_error_path(release: Release) -> None:
    p = replace(ARCHETYPES["balanced"], empty_response_rate=1.0)
    results = run_model(release, p, limit=3)
    for attempts in results:
        assert [r.trajectory["terminated_by"] for r in attempts] == ["error"] * 3
        assert [r.trajectory["attempt"] for r in attempts] == [0, 1, 2]


def test_text_only_turns_get_nudged_until_max_turns(release: Release) -> None:
    p = replace(ARCHETYPES["balanced"], text_only_rate=1.0, empty_response_rate=0.0)
    rs = finals(run_model(release, p, limit=3))
    for r in rs:
        assert r.trajectory["terminated_by"] == "max_turns"
        assert r.trajectory["total_turns"] == 20 and not r.tool_calls


def test_invalid_section_names_are_retried_by_alias(release: Release) -> None:
    p = replace(ARCHETYPES["balanced"], bad_section_rate=0.3)
    rs = finals(run_model(release, p))
    retries = []
    for r in rs:
        calls = [c for c in ordered_calls(r) if c["tool"] == "read_section"]
        for i, c in enumerate(calls):
            if c["status"] == "section_not_found":
                nxt = next((d for d in calls[i + 1:] if d["paper_id"] == c["paper_id"]), None)
                if nxt is not None:
                    retries.append(nxt["section_query"])
    assert len(retries) >= 10
    # a retry may be another invented name ("Section N"); the others mostly use the listed aliases
    named = [q for q in retries if not re.fullmatch(r"Section \d+", q or "")]
    aliases = [q for q in named if re.fullmatch(r"\(?[A-Z]{1,3}\)?", q or "")]
    assert len(aliases) / len(named) >= 0.6


def _conv(release: Release, params: PolicyParams, condition: str = "full") -> tuple[SimConversation, SampleContext]:
    item = release.items[0]
    cfg = LoopConfig(condition=condition, sleep=no_sleep)
    ctx = build_context(item, release.graphs[item.id], release.papers, release.labels[item.id], cfg, 0)
    return SimBackend(params, "sim-r", 0).start(ctx), ctx


def test_budget_advisory_makes_it_submit(release: Release) -> None:
    p = replace(ARCHETYPES["over_searcher"], deliberation=0.0, empty_response_rate=0.0, text_only_rate=0.0)
    conv, _ = _conv(release, p)
    first = conv.step()
    assert first.tool_calls and first.tool_calls[0].name != "submit_answer"
    conv.add_assistant(first)
    conv.add_user(prompts.BUDGET_ADVISORY)
    resp = conv.step()
    assert [t.name for t in resp.tool_calls] == ["submit_answer"]
    assert resp.tool_calls[0].args["answer"] in ("A", "B", "C", "D")


def test_budget_rejection_makes_a_careful_agent_submit(release: Release) -> None:
    p = replace(ARCHETYPES["verifier"], deliberation=0.0, empty_response_rate=0.0, text_only_rate=0.0)
    conv, _ = _conv(release, p)
    resp = conv.step()
    conv.add_assistant(resp)
    call = resp.tool_calls[0]
    conv.add_tool_results([(call, prompts.rejected_budget_text(0, call.name, 1) + prompts.footer(1, 10, 30))])
    assert [t.name for t in conv.step().tool_calls] == ["submit_answer"]


def test_closed_book_conversation_answers_from_the_prior(release: Release) -> None:
    p = replace(ARCHETYPES["verifier"], empty_response_rate=0.0, text_only_rate=0.0)
    conv, ctx = _conv(release, p, "closed_book")
    names = []
    for _ in range(3):
        resp = conv.step()
        names.extend(t.name for t in resp.tool_calls)
        if "submit_answer" in names:
            break
        conv.add_assistant(resp)
        conv.add_tool_results([(t, "Noted.") for t in resp.tool_calls])
    assert names[-1] == "submit_answer"
    assert set(names) <= {"think", "submit_answer"}


def test_transcript_only_when_asked_and_consistent(release: Release) -> None:
    rs = finals(run_model(release, ARCHETYPES["balanced"], limit=5, record=True))
    for r in rs:
        msgs = r.messages
        assert [m["role"] for m in msgs[:2]] == ["system", "user"]
        assert msgs[0]["content"].startswith("You are a research assistant")
        ids_emitted = set(re.findall(r"\[tool_call (sim_\d+)\]", " ".join(m["content"] for m in msgs if m["role"] == "assistant")))
        tool_msgs = [m for m in msgs if m["role"] == "tool"]
        assert {m["tool_call_id"] for m in tool_msgs} <= ids_emitted
        executed = [c for c in r.tool_calls if c["status"] != "not_executed"]
        assert len(tool_msgs) == len(executed)
        assert [m["name"] for m in tool_msgs] == [c["tool"] for c in ordered_calls(r) if c["status"] != "not_executed"]
    rs = finals(run_model(release, ARCHETYPES["balanced"], limit=5, record=False))
    assert all(r.messages == [] for r in rs)


def test_disabled_tool_rejection_drops_the_tool(release: Release) -> None:
    p = replace(ARCHETYPES["balanced"], search_propensity=1.0, wrong_paper_rate=0.0, metadata_loop=0.0,
                empty_response_rate=0.0, text_only_rate=0.0)
    conv, _ = _conv(release, p)
    resp = conv.step()
    assert resp.tool_calls[0].name == "search_papers"
    conv.add_assistant(resp)
    conv.add_tool_results([(resp.tool_calls[0], prompts.rejected_disabled_text("search_papers"))])
    for _ in range(5):
        resp = conv.step()
        assert all(t.name != "search_papers" for t in resp.tool_calls)
        conv.add_assistant(resp)
        conv.add_tool_results([(t, "Noted.") for t in resp.tool_calls])


def test_answers_are_letters_and_reasoning_present(release: Release) -> None:
    rs = finals(run_model(release, ARCHETYPES["early_committer"], limit=40))
    for r in rs:
        subs = [c for c in r.tool_calls if c["tool"] == "submit_answer"]
        assert len(subs) == 1
        assert json.loads(subs[0]["args_json"])["answer"] in ("A", "B", "C", "D")
        assert r.trajectory["predicted_index"] in (0, 1, 2, 3)
        assert r.trajectory["reasoning"]


def test_tool_call_ids_unique_within_an_attempt(release: Release) -> None:
    item = release.items[0]
    cfg = LoopConfig(sleep=no_sleep)
    ctx = build_context(item, release.graphs[item.id], release.papers, release.labels[item.id], cfg, 0)
    conv = SimBackend(ARCHETYPES["early_committer"], "sim-ids", 0).start(ctx)
    ids: list[str] = []
    for _ in range(8):
        resp = conv.step()
        ids.extend(t.id for t in resp.tool_calls)
        conv.add_assistant(resp)
        conv.add_tool_results([(t, "Noted.") for t in resp.tool_calls])
    assert len(ids) == len(set(ids))
    assert all(isinstance(t, str) for t in ids)


def test_careful_agents_respect_the_budget_stated_in_the_prompt(release: Release) -> None:
    from agenthop.harness.loop import Caps

    def run(params: PolicyParams) -> list[AttemptResult]:
        backend = SimBackend(params, "sim-caps", 0)
        cfg = LoopConfig(caps=Caps(budget=12), sleep=no_sleep)

        async def go() -> list[AttemptResult]:
            return [
                (await run_sample(it, release.graphs[it.id], release.papers, release.labels.get(it.id, []),
                                  backend, cfg, 0))[-1]
                for it in release.items[:40]
            ]

        return asyncio.run(go())

    careful = run(ARCHETYPES["verifier"])
    assert not any(c["status"] == "rejected_budget" for r in careful for c in r.tool_calls)
    assert max(r.trajectory["budget_used"] for r in careful) <= 12
    assert share(careful, "answer") >= 0.95
    # budget-ignoring agents run into rejections, react by submitting (or end with 'budget')
    greedy = run(ARCHETYPES["greedy_reader"])
    rejected = [r for r in greedy if any(c["status"] == "rejected_budget" for c in r.tool_calls)]
    assert len(rejected) >= 10
    assert all(r.trajectory["terminated_by"] in ("answer", "budget", "token_limit") for r in rejected)
