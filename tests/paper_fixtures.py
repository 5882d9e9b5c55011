"""The simulated paper19 panel for the `paper` report tests, built once per session.

panels/paper19.yaml (19 models, families, tiers, generations) with closed-book and no-search runs for
three models and three replicates of one, on a small synthetic benchmark, through the real pipeline
(make-benchmark -> harness run -> ingest -> dbt build).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from conftest import REPO, _check, cli, dbt_env, run_dbt_build

#: models that also run closed_book and no_search, and the model with three replicates
ABLATED = ("sim-cf-atlas", "sim-of-birch", "sim-ce-cedar")
REPLICATED = "sim-cf-beacon"
N_ITEMS = 48


@dataclass(frozen=True)
class PaperWarehouse:
    db: Path
    benchmark: Path
    work: Path


def paper_panel(dst: Path) -> Path:
    """panels/paper19.yaml with the ablations and replicates above."""
    panel = yaml.safe_load((REPO / "panels" / "paper19.yaml").read_text())
    for m in panel["models"]:
        if m["name"] in ABLATED:
            m["conditions"] = ["full", "no_search", "closed_book"]
        if m["name"] == REPLICATED:
            m["replicates"] = 3
    dst.write_text(yaml.safe_dump(panel, sort_keys=False))
    return dst


def build_paper_warehouse(work: Path) -> PaperWarehouse:
    bench, runs, db = work / "benchmark", work / "runs", work / "warehouse.duckdb"
    env = dbt_env(db)
    _check(subprocess.run([cli("agenthop-harness"), "make-benchmark", "--out", str(bench), "--items", str(N_ITEMS),
                           "--seed", "13"], env=env, capture_output=True, text=True), "make-benchmark")
    panel = paper_panel(work / "panel.yaml")
    _check(subprocess.run([cli("agenthop-harness"), "run", "--panel", str(panel), "--data", str(bench),
                           "--out", str(runs), "--no-progress"], env=env, capture_output=True, text=True),
           "harness run")
    _check(subprocess.run([cli("agenthop-ingest"), "--db", str(db), "--benchmark", str(bench), "--runs", str(runs)],
                          env=env, capture_output=True, text=True), "ingest")
    _check(run_dbt_build(db, work), "dbt build")
    return PaperWarehouse(db=db, benchmark=bench, work=work)
