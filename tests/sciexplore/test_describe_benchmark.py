"""``agenthop-harness describe-benchmark`` on a SciExplore release: the registry detects the benchmark
(the command once called a valid SciExplore release "an invalid AgentHop release"), ``--benchmark NAME``
names it, and ``make-benchmark --help`` shows every benchmark's options, grouped by benchmark."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from sx_fixtures import release  # noqa: F401 (fixture)

from agenthop.harness.cli import main as harness_main


def _describe(*args: str | Path) -> tuple[int, str, str]:
    res = CliRunner().invoke(harness_main, ["describe-benchmark", *map(str, args)])
    return res.exit_code, res.stdout, res.stderr


def test_describe_detects_a_sciexplore_release(release: Path) -> None:  # noqa: F811
    """The hand-built release of four tasks: a T1 of 2 hops over PDB, a T2 of 2020, a T3 of two slots
    holding 2 + 1 references, a T4 of 2 rows x 2 columns; no corpus (a warning says so)."""
    code, out, err = _describe("--json", release)
    assert code == 0, err
    stats = json.loads(out)
    assert stats["benchmark"] == "sciexplore" and stats["tasks"] == 4
    assert stats["task_types"] == {"T1": 1, "T2": 1, "T3": 1, "T4": 1}
    assert stats["t1_hops"] == {"2": 1} and stats["t1_databases"] == {"PDB": 1}
    assert stats["t2_years"] == {"min": 2020, "max": 2020}
    assert (stats["t3_slots"], stats["t3_references"], stats["t4_rows"], stats["t4_cells"]) == (2, 3, 2, 4)
    assert stats["documents"] == 0 and "no corpus/documents.jsonl" in err and "invalid" not in err
    code, out, _ = _describe(release)
    assert code == 0 and "tasks            4: T1 1, T2 1, T3 1, T4 1" in out
    assert "T3 citations     2 slots, 3 references" in out
    code, out, _ = _describe("--json", "--limit", "2", release)
    assert code == 0 and json.loads(out)["task_types"] == {"T1": 1, "T2": 1}


def test_describe_benchmark_option_names_the_benchmark(release: Path, tmp_path: Path) -> None:  # noqa: F811
    code, out, _ = _describe("--benchmark", "sciexplore", "--json", release)
    assert code == 0 and json.loads(out)["tasks"] == 4
    code, _, err = _describe("--benchmark", "agenthop", release)
    assert code == 2 and err.strip() == f"error: {release}: not a release of benchmark agenthop (qa/full.jsonl is missing)"
    code, _, err = _describe("--benchmark", "nope", release)
    assert code == 2 and "unknown benchmark 'nope'; known benchmarks: agenthop, sciexplore" in err
    code, _, err = _describe(tmp_path)  # neither benchmark's release file: each is named
    assert code == 2 and "qa/full.jsonl is missing" in err and "tasks.jsonl is missing" in err


def test_describe_names_a_bad_sciexplore_line(release: Path) -> None:  # noqa: F811
    tasks = release / "tasks.jsonl"
    lines = tasks.read_text().splitlines()
    row = json.loads(lines[1])
    del row["question"]
    tasks.write_text("\n".join([lines[0], json.dumps(row), *lines[2:]]) + "\n")
    code, _, err = _describe(release)
    assert code == 2 and "tasks.jsonl:2" in err and "question" in err and "Traceback" not in err


def test_make_benchmark_help_shows_every_benchmarks_options() -> None:
    res = CliRunner().invoke(harness_main, ["make-benchmark", "--help"])
    assert res.exit_code == 0, res.output
    out = res.stdout
    agenthop, sciexplore = out.index("Options with --benchmark agenthop"), out.index("Options with --benchmark sciexplore")
    examples = out.index("Examples (on the demo")
    assert agenthop < sciexplore < examples
    assert "--items" in out[agenthop:sciexplore] and "--items" not in out[sciexplore:examples]
    assert "--responses" in out[sciexplore:examples] and "--judgments" in out[sciexplore:examples]
    assert "--responses" not in out[:sciexplore]
    assert out.count("--out DIRECTORY") == 2 and "--benchmark NAME" in out
    # one benchmark's help, with its examples, as before
    res = CliRunner().invoke(harness_main, ["make-benchmark", "--benchmark", "sciexplore", "--help"])
    assert res.exit_code == 0 and "--responses" in res.stdout and "--items" not in res.stdout
