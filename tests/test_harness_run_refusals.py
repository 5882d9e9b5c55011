"""Every usage error of ``agenthop-harness run`` is refused before anything is written: exit code 2, one
line, and nothing under ``--out`` (nor in the working directory) afterwards.

A refusal that came late (for example ``--search native`` on a backend with no search of its own, once
refused by the backend when the first sample started) left an empty run directory behind that a later
ingest or resume would trip over.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.benchmarks.sciexplore.generator import write_release
from agenthop.harness.cli import main as cli_main

NO_KEY = "AGENTHOP_TEST_SURELY_UNSET_KEY"


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("refusals")
    make_benchmark(root / "agenthop", 5, seed=3)
    write_release(root / "sciexplore", seed=0)
    (root / "empty").mkdir()
    return {"agenthop": root / "agenthop", "sciexplore": root / "sciexplore", "empty": root / "empty",
            "missing": root / "no-such-release"}


def _panel(path: Path, benchmark: str, model: str) -> Path:
    path.write_text(f"name: p\nbenchmark: {benchmark}\nmodels:\n  - {model}\n", encoding="utf-8")
    return path


NATIVE_OPENAI = ("{name: gpt-x, backend: openai, model_id: gpt-4o, api_key_env: HOME, conditions: [search], "
                 "options: {search: native}}")
NATIVE_SIM = "{name: skim, backend: sim, sim: {archetype: skim_search}, conditions: [search], options: {search: native}}"

#: (id, arguments with {agenthop}/{sciexplore}/{empty}/{missing}/{panel:BENCH:MODEL} placeholders, expected text)
REFUSALS: list[tuple[str, list[str], str]] = [
    ("native-search-openai", ["--data", "{sciexplore}", "--model", "x", "--backend", "openai", "--base-url",
                              "http://127.0.0.1:9", "--condition", "search", "--search", "native"],
     "backend 'openai' has no native search"),
    ("native-search-sim", ["--data", "{sciexplore}", "--model", "skim_search", "--paradigm", "deep_research",
                           "--search", "native"], "backend 'sim' has no native search"),
    ("native-search-panel-openai", ["--data", "{sciexplore}", "--panel", "{panel:sciexplore:" + NATIVE_OPENAI + "}"],
     "backend 'openai' has no native search"),
    ("native-search-panel-sim", ["--data", "{sciexplore}", "--panel", "{panel:sciexplore:" + NATIVE_SIM + "}"],
     "backend 'sim' has no native search"),
    ("native-search-foundation", ["--data", "{sciexplore}", "--model", "mnemo_guess", "--condition", "foundation",
                                  "--search", "native"], "foundation paradigm has no tools"),
    ("search-on-agenthop", ["--data", "{agenthop}", "--model", "early-committer", "--search", "corpus"],
     "takes no such option"),
    ("neither-model-nor-panel", ["--data", "{agenthop}"], "exactly one of --model"),
    ("model-and-panel", ["--data", "{agenthop}", "--model", "early-committer", "--panel",
                         "{panel:agenthop:{name: early-committer, sim: {archetype: early_committer}}}"], "exactly one of --model"),
    ("condition-and-paradigm", ["--data", "{sciexplore}", "--model", "skim_search", "--condition", "search",
                                "--paradigm", "deep_research"], "--condition and --paradigm"),
    ("strict-cap-without-cap", ["--data", "{agenthop}", "--model", "early-committer", "--strict-cost-cap"],
     "--strict-cost-cap needs --max-cost-usd"),
    ("model-option-with-panel", ["--data", "{agenthop}", "--backend", "sim", "--panel",
                                 "{panel:agenthop:{name: early-committer, sim: {archetype: early_committer}}}"], "not with --panel"),
    ("unknown-benchmark", ["--data", "{agenthop}", "--model", "early-committer", "--benchmark", "nope"],
     "unknown benchmark 'nope'"),
    ("benchmark-contradicts-panel", ["--data", "{agenthop}", "--benchmark", "sciexplore", "--panel",
                                     "{panel:agenthop:{name: early-committer, sim: {archetype: early_committer}}}"], "the panel is for benchmark"),
    ("unknown-condition", ["--data", "{agenthop}", "--model", "early-committer", "--condition", "bogus"],
     "'bogus' is not a condition of agenthop"),
    ("unknown-archetype", ["--data", "{agenthop}", "--model", "nobody"], "unknown archetype 'nobody'"),
    ("real-name-as-sim", ["--data", "{agenthop}", "--model", "gpt-4o", "--backend", "sim"],
     "looks like a real model"),
    ("model-id-with-sim", ["--data", "{agenthop}", "--model", "early-committer", "--model-id", "x"],
     "--model-id does not apply to --backend sim"),
    ("rpm-with-sim", ["--data", "{agenthop}", "--model", "early-committer", "--rpm", "5"], "--rpm/--tpm"),
    ("archetype-with-real-backend", ["--data", "{agenthop}", "--model", "x", "--backend", "openai",
                                     "--sim-archetype", "early_committer"], "--sim-archetype only applies"),
    ("missing-api-key", ["--data", "{agenthop}", "--model", "x", "--backend", "openai", "--api-key-env", NO_KEY],
     f"{NO_KEY} is not set"),
    ("no-data", ["--model", "early-committer"], "--data is required"),
    ("empty-release", ["--data", "{empty}", "--model", "early-committer"], "not a agenthop release"),
    ("missing-release", ["--data", "{missing}", "--model", "early-committer"], "not a agenthop release"),
    ("release-of-another-benchmark", ["--data", "{sciexplore}", "--benchmark", "agenthop", "--model",
                                      "early-committer"], "not a agenthop release"),
    ("bad-shard", ["--data", "{agenthop}", "--model", "early-committer", "--shard", "5/2"], "--shard"),
    ("limit-zero", ["--data", "{agenthop}", "--model", "early-committer", "--limit", "0"], "--limit"),
    ("bad-panel", ["--data", "{agenthop}", "--panel", "{panel:agenthop:{name: x, backend: nope}}"],
     "is not one of"),
]


def _expand(arg: str, releases: dict[str, Path], work: Path) -> str:
    if arg.startswith("{panel:"):
        bench, model = arg[len("{panel:"):-1].split(":", 1)
        return str(_panel(work / "panel.yaml", bench, model))
    for name, path in releases.items():
        arg = arg.replace("{" + name + "}", str(path))
    return arg


@pytest.mark.parametrize(("args", "expected"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS])
def test_refused_before_anything_is_created(args: list[str], expected: str, releases: dict[str, Path],
                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(NO_KEY, raising=False)
    work = tmp_path / "work"
    cwd = tmp_path / "cwd"
    work.mkdir()
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    out = tmp_path / "out" / "runs"
    argv = ["run", *(_expand(a, releases, work) for a in args), "--out", str(out)]
    result = CliRunner().invoke(cli_main, argv)
    assert result.exit_code == 2, result.output
    assert expected in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists(), sorted(p.name for p in (tmp_path / "out").rglob("*"))
    assert list(cwd.iterdir()) == []


def test_the_same_command_with_a_backend_that_searches_gets_past_planning(releases: dict[str, Path]) -> None:
    """The refusal is about the backend, not the option: a native-search backend plans the same run."""
    from agenthop.harness.panel import ModelSpec, RunSpec
    from agenthop.harness.run_plan import plan_run

    for backend in ("responses", "google", "anthropic"):
        run = RunSpec(ModelSpec(name="m", backend=backend), "search", 0, benchmark="sciexplore")
        assert plan_run(run, {}, {"search": "native"}).options == {"search": "native"}
