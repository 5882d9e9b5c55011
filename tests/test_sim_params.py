"""Policy parameters, archetypes, panel files and label resolution of the simulated agents."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from agenthop.harness.backends import make_backend
from agenthop.harness.backends.sim import SimBackend
from agenthop.harness.benchmarks.agenthop import labels as shared_labels
from agenthop.harness.benchmarks.agenthop.model import Paper, Section
from agenthop.harness.errors import AgentHopError
from agenthop.harness.panel import load_panel
from agenthop.harness.benchmarks.agenthop.policies import evidence
from agenthop.harness.benchmarks.agenthop.policies.archetypes import ARCHETYPES, policy_from_spec
from agenthop.harness.benchmarks.agenthop.policies.params import PARAM_NAMES, PolicyParams

REPO = Path(__file__).resolve().parents[1]
REQUIRED_ARCHETYPES = {"early_committer", "verifier", "over_searcher", "balanced", "metadata_looper", "greedy_reader"}


def test_archetypes_cover_the_six_families() -> None:
    assert REQUIRED_ARCHETYPES <= set(ARCHETYPES)
    a = ARCHETYPES
    # the habits that define each family, relative to balanced
    assert a["early_committer"].parallel_calls > a["balanced"].parallel_calls
    assert a["early_committer"].submit_after_gold > a["balanced"].submit_after_gold
    assert a["verifier"].deliberation > 0.8 and a["verifier"].submit_after_gold < 0.1
    assert a["over_searcher"].extra_reads_after_gold > 0.9
    assert a["metadata_looper"].metadata_loop == 1.0
    assert a["greedy_reader"].read_greed > 0.9


def test_policy_from_spec_archetype_plus_overrides() -> None:
    p = policy_from_spec({"archetype": "verifier", "navigation_skill": 0.5, "verbosity": 900.0})
    assert p.navigation_skill == 0.5 and p.verbosity == 900 and isinstance(p.verbosity, int)
    assert p.deliberation == ARCHETYPES["verifier"].deliberation
    assert policy_from_spec({}) == ARCHETYPES["balanced"]
    assert policy_from_spec({"archetype": "greedy_reader"}) == ARCHETYPES["greedy_reader"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"archetype": "wizard"}, "unknown archetype 'wizard'"),
        ({"archetype": "balanced", "navigation": 0.5}, "unknown policy parameter(s) navigation"),
        ({"archetype": "balanced", "navigation_skill": 1.5}, "navigation_skill: expected a number in [0, 1]"),
        ({"archetype": "balanced", "parametric_prior": 0.1}, "parametric_prior: must be >= 0.25"),
        ({"archetype": "balanced", "parallel_calls": 0.5}, "parallel_calls: expected a number in [1, 6]"),
        ({"archetype": "balanced", "verbosity": "lots"}, "verbosity: expected an integer"),
        ({"archetype": "balanced", "deliberation": True}, "deliberation: expected a number in [0, 1]"),
        ({"archetype": 3}, "archetype: expected a name"),
    ],
)
def test_policy_from_spec_errors_name_the_field(spec: dict, message: str) -> None:
    with pytest.raises(AgentHopError) as exc:
        policy_from_spec(spec, where="panels/x.yaml: models[0].sim")
    assert message in str(exc.value)
    assert str(exc.value).startswith("panels/x.yaml: models[0].sim")


def test_params_are_small_and_documented() -> None:
    assert len(PARAM_NAMES) <= 16
    doc = (REPO / "docs" / "simulated_agents.md").read_text()
    for name in PARAM_NAMES:
        assert f"`{name}`" in doc, name
    for name in ARCHETYPES:
        assert f"`{name}`" in doc, name
    assert "backend = 'sim'" in doc


def test_sim_backend_rejects_non_params() -> None:
    with pytest.raises(TypeError):
        SimBackend({"archetype": "balanced"}, "x", 0)  # type: ignore[arg-type]
    assert SimBackend(PolicyParams(), "x", 0).name == "sim"


def test_demo_panel() -> None:
    panel = load_panel(REPO / "panels" / "demo.yaml")
    by_name = {m.name: m for m in panel.models}
    assert set(by_name) == {
        "early-committer", "verifier", "over-searcher", "balanced", "metadata-looper", "greedy-reader",
        "verifier-parallel", "balanced-strong", "early-committer-weak",
    }
    for name in ("early-committer", "verifier", "over-searcher", "balanced", "metadata-looper", "greedy-reader"):
        assert by_name[name].sim["archetype"] == name.replace("-", "_")
    assert by_name["verifier"].replicates == 2
    assert by_name["balanced"].replicates == 2
    assert by_name["balanced"].conditions == ("full", "no_search", "closed_book")
    assert all(m.backend == "sim" for m in panel.models)
    for m in panel.models:
        backend = make_backend(m)
        assert isinstance(backend, SimBackend) and backend.name == "sim"
        assert backend.params.empty_response_rate == 0.0, "the demo panel must not inject transient errors"


def test_simulated_transient_errors_are_opt_in_per_panel_entry() -> None:
    assert PolicyParams().empty_response_rate == 0.0
    paper19 = load_panel(REPO / "panels" / "paper19.yaml").models
    assert {policy_from_spec(m.sim).empty_response_rate for m in paper19} == {0.003}


def test_paper19_panel() -> None:
    panel = load_panel(REPO / "panels" / "paper19.yaml")
    models = panel.models
    assert len(models) == 19 and len(panel.runs()) == 19
    tiers = Counter(m.tier for m in models)
    assert tiers == {"closed_frontier": 7, "open_frontier": 7, "compute_efficient": 5}
    assert all(m.family for m in models)
    assert len({m.family for m in models}) >= 10
    prefix = {"closed_frontier": "sim-cf-", "open_frontier": "sim-of-", "compute_efficient": "sim-ce-"}
    assert all(m.name.startswith(prefix[m.tier]) for m in models)
    params = {m.name: policy_from_spec(m.sim) for m in models}
    frontier = [params[m.name] for m in models if m.tier != "compute_efficient"]
    efficient = [params[m.name] for m in models if m.tier == "compute_efficient"]
    assert min(p.synthesis_skill for p in frontier) > max(p.synthesis_skill for p in efficient)
    kinds = Counter(m.sim["archetype"] for m in models if m.tier == "compute_efficient")
    assert set(kinds) <= {"metadata_looper", "greedy_reader", "balanced"} and kinds["metadata_looper"] >= 1
    assert kinds["greedy_reader"] >= 1


def _paper() -> Paper:
    return Paper(
        "2401.00001",
        "T",
        (
            Section("1 Introduction", "We study things."),
            Section("Method", "Overview.  3.1 Retrieval   Module\nThe retriever ranks passages."),
            Section("Results", "Numbers. 3.1 retrieval module appears again here."),
            Section("Apdx_A: Extra", "Nothing."),
        ),
    )


def test_resolve_label_header_then_containment() -> None:
    paper = _paper()
    evidence.clear_cache()
    assert evidence.resolve_label(paper, "Introduction") == ((0,), True)  # leading number dropped
    assert evidence.resolve_label(paper, "  method ") == ((1,), True)
    # not a header: contained (after white-space collapsing) in sections 1 and 2
    assert evidence.resolve_label(paper, "3.1 Retrieval Module") == ((1, 2), False)
    assert evidence.resolve_label(paper, "Training") == ((), False)
    # cached per paper object: a different paper with the same arXiv id is resolved afresh
    other = Paper("2401.00001", "T", (Section("Training", "x"),))
    assert evidence.resolve_label(other, "Training") == ((0,), True)


def test_resolve_label_agrees_with_the_shared_rule() -> None:
    paper = _paper()
    for label in ("Introduction", "3.1 Retrieval Module", "retrieval module", "Training", "apdx_a: extra", ""):
        kind, idx = shared_labels.resolve_label(label, paper)
        got, by_header = evidence.resolve_label(paper, label)
        assert got == idx
        assert by_header == (kind == shared_labels.HEADER)
