"""Data and fixtures of the SciExplore tests: a hand-built four-task release and responses lines for it.

Not a conftest.py: a second top-level ``conftest`` module would shadow tests/conftest.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agenthop.ingest.cli import main as ingest_main

TASKS = [
    {"id": "a1", "type": "T1", "domain": "genomics", "question": "Which accession?", "answer": "ACC-1",
     "aliases": ["ACC1"], "hops": 2, "databases": ["PDB"]},
    {"id": "b1", "type": "T2", "domain": "ecology", "question": "Which paper?", "answer": "Birds of Kalo",
     "aliases": ["10.1/bk"], "year": 2020},
    {"id": "c1", "type": "T3", "domain": "chemistry", "question": "Fill [CITE_1] and [CITE_2].",
     "paragraph": "x [CITE_1] y [CITE_2].",
     "groups": [{"slot": "CITE_1", "references": [{"title": "Paper One", "year": 2019, "authors": ["A. B"],
                                                   "venue": "V", "doi": "10.1/one"},
                                                  {"title": "Paper Two", "year": 2021, "authors": [], "venue": None,
                                                   "doi": None}]},
                {"slot": "CITE_2", "references": [{"title": "Paper Three", "year": 2018, "authors": [],
                                                   "venue": None, "doi": None}]}]},
    {"id": "d1", "type": "T4", "domain": "materials", "question": "Table of | Material | Gap |",
     "columns": ["Material", "Gap"], "primary_key": "Material",
     "rows": [{"Material": "Kalo", "Gap": "1.2"}, {"Material": "Mira", "Gap": "3.4"}]},
]


def response(task_id: str, answer, *, model: str = "m", paradigm: str = "search", replicate: int = 0,
             status: str = "answered", trace: list | None = None) -> dict:
    return {"model": model, "paradigm": paradigm, "replicate": replicate, "task_id": task_id, "status": status,
            "answer": answer, "trace": trace or [], "prompt_tokens": 10, "completion_tokens": 5, "wall_time_s": 1.5}


GOOD = [
    response("a1", "It is ACC-1.", trace=[{"tool": "db_search", "query": "q", "result_chars": 10},
                                          {"tool": "open_page", "target": "doc_1", "result_chars": 99}]),
    response("b1", "I don't know"),
    response("c1", {"CITE_1": [{"title": "paper one", "year": 2019}, {"title": "Nope"}], "CITE_2": []}),
    response("d1", "Table:\n\n| Material | Gap |\n|---|---|\n| Kalo | 1.2 |\n| Mira | 9 |\n"),
]


def write_jsonl(path: Path, lines: list) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def release(tmp_path: Path) -> Path:
    root = tmp_path / "release"
    root.mkdir()
    write_jsonl(root / "tasks.jsonl", TASKS)
    return root


@pytest.fixture
def ingest() -> Callable[..., Result]:
    def run(*args: str | Path) -> Result:
        return CliRunner().invoke(ingest_main, [str(a) for a in args], catch_exceptions=False)
    return run


#: the tasks the small synthetic release keeps: two of each type
SMALL_TASKS = ("_001", "_002")
N_SMALL = 8


def harness() -> list[str]:
    """The installed ``agenthop-harness`` command (as a user runs it)."""
    exe = Path(sys.executable).parent / "agenthop-harness"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "agenthop.harness.cli"]


def clean_env() -> dict[str, str]:
    """The environment without provider variables or proxies: loopback servers only."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "ANTHROPIC_", "GOOGLE_", "GEMINI_"))
           and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    return env


@pytest.fixture(scope="module")
def small_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``make-benchmark --benchmark sciexplore``'s release cut to two tasks of each type (its whole corpus)."""
    root = tmp_path_factory.mktemp("sx_small") / "release"
    made = subprocess.run([*harness(), "make-benchmark", "--benchmark", "sciexplore", "--out", str(root)],
                          capture_output=True, text=True, env=clean_env(), timeout=120)
    assert made.returncode == 0, made.stderr
    tasks = (root / "tasks.jsonl").read_text().splitlines()
    keep = [line for line in tasks if json.loads(line)["id"].endswith(SMALL_TASKS)]
    (root / "tasks.jsonl").write_text("\n".join(keep) + "\n")
    assert len(keep) == N_SMALL
    return root


def simulated_release(work: Path):  # type: ignore[no-untyped-def]
    """The synthetic release (seed 0) under work/release and the simulated systems' responses to it
    (work/responses.jsonl): (release directory, loaded release, responses file)."""
    from agenthop.harness.benchmarks.sciexplore.generator import write_release
    from agenthop.harness.benchmarks.sciexplore.release import load_release
    from agenthop.harness.benchmarks.sciexplore.simulate import write_responses

    rel = work / "release"
    write_release(rel, seed=0)
    release = load_release(rel)
    resp = work / "responses.jsonl"
    write_responses(resp, release, seed=0)
    return rel, release, resp


def ingest_and_build(work: Path, rel: Path, responses: Path) -> Path:
    """A new warehouse work/w.duckdb with the release at ``rel`` and the responses file, and its
    everyday `dbt build` (no unit tests); returns its path."""
    from conftest import run_dbt_build

    db = work / "w.duckdb"
    r = CliRunner().invoke(ingest_main, ["--db", str(db), "--benchmark", str(rel), "--responses", str(responses)])
    assert r.exit_code == 0, r.output
    proc = run_dbt_build(db, work, "--exclude", "resource_type:unit_test")
    assert proc.returncode == 0, proc.stdout[-3000:]
    return db


def sciexplore_report(db: Path, work: Path) -> Path:
    """dbt build of the SciExplore models on `db`, then `agenthop-report sciexplore` into work/report."""
    from conftest import run_dbt_build

    from agenthop.reports.cli import main as report_main

    proc = run_dbt_build(db, work, "--select", "path:models_sql/staging/sciexplore",
                         "path:models_sql/intermediate/sciexplore", "path:models_sql/marts/sciexplore")
    assert proc.returncode == 0, proc.stdout[-3000:]
    out = work / "report"
    r = CliRunner().invoke(report_main, ["sciexplore", "--db", str(db), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out
