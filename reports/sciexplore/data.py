"""What the SciExplore report reads from the marts (one query per need) and its freshness check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agenthop.harness.errors import AgentHopError

from ..warehouse import Warehouse

MARTS = ("sciexplore_summary", "sciexplore_task_outcome", "sciexplore_hop_accuracy", "sciexplore_search_effort",
         "sciexplore_rerun_variance", "sciexplore_judge_agreement", "sciexplore_judge_disagreements",
         "sciexplore_build_info")
PARADIGM_ORDER = ("foundation", "search", "deep_research")
#: group headers of the paper's tables, per paradigm
PARADIGM_TITLES = {"foundation": "Foundation LLMs", "search": "LLMs with Search Tools",
                   "deep_research": "Deep Research Agents"}
_SUFFIX = {"foundation": "", "search": " w/ search", "deep_research": " (deep research)"}


def check_fresh(wh: Warehouse) -> None:
    """Exit-2 user error when the SciExplore marts are missing, empty or older than the last ingest."""
    wh.require(MARTS)
    info = wh.rows("SELECT built_at, last_load_id, n_runs FROM sciexplore_build_info")
    if not info or not info[0]["n_runs"]:
        raise AgentHopError(f"warehouse {wh.path} holds no SciExplore runs: load a release and responses with "
                            "agenthop-ingest --benchmark DIR --responses FILE, then run dbt build")
    later = wh.rows("SELECT load_id FROM raw.ingest_log WHERE load_id > ? AND action <> 'unchanged' "
                    "ORDER BY load_id DESC LIMIT 1", [info[0]["last_load_id"]])
    if later:
        raise AgentHopError(f"marts are stale: run dbt build (warehouse {wh.path}: ingest load {later[0]['load_id']} "
                            f"came after the dbt build at {info[0]['built_at']:%Y-%m-%d %H:%M:%S})")


@dataclass(frozen=True)
class System:
    """A (model, paradigm): its replicates' runs, in replicate order."""

    model: str
    paradigm: str
    label: str
    runs: tuple[dict[str, Any], ...]
    simulated: bool = False  # its responses file says a simulated system wrote it

    @property
    def first_run(self) -> str:
        return self.runs[0]["run_id"]


def simulated_models(wh: Warehouse) -> list[str]:
    """Models whose responses files say a simulated system wrote them."""
    return [r["model"] for r in wh.rows("SELECT DISTINCT model FROM raw.sciexplore_runs WHERE simulated ORDER BY model")]


def judges(wh: Warehouse) -> list[str]:
    return [r["judge"] for r in wh.rows("SELECT DISTINCT judge FROM sciexplore_summary ORDER BY judge")]


def systems(wh: Warehouse, judge: str) -> list[System]:
    """Every system with its runs' summary rows under `judge`, paradigm by paradigm, best mean overall first."""
    rows = wh.rows("SELECT * FROM sciexplore_summary WHERE judge = ? ORDER BY model, paradigm, replicate", [judge])
    if not rows:
        raise AgentHopError(f"--judge {judge!r}: no verdicts of that judge; judges in the warehouse: "
                            f"{', '.join(judges(wh)) or 'none'}")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["model"], r["paradigm"]), []).append(r)
    paradigms_of: dict[str, set[str]] = {}
    for model, paradigm in groups:
        paradigms_of.setdefault(model, set()).add(paradigm)
    sim = set(simulated_models(wh))
    out = [System(m, p, m + (_SUFFIX[p] if len(paradigms_of[m]) > 1 else ""), tuple(rs), m in sim)
           for (m, p), rs in groups.items()]

    def key(s: System) -> tuple:
        overall = sum(r["overall"] for r in s.runs) / len(s.runs)
        return (PARADIGM_ORDER.index(s.paradigm) if s.paradigm in PARADIGM_ORDER else 9, -overall, s.label)

    return sorted(out, key=key)


def hop_rows(wh: Warehouse, judge: str) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM sciexplore_hop_accuracy WHERE judge = ? ORDER BY run_id, hops", [judge])


def effort_rows(wh: Warehouse, judge: str) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM sciexplore_search_effort WHERE judge = ? ORDER BY run_id, type", [judge])


def variance_rows(wh: Warehouse, judge: str) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM sciexplore_rerun_variance WHERE judge = ? ORDER BY model, paradigm, metric_order",
                   [judge])


def outcomes(wh: Warehouse, judge: str, run_ids: list[str]) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM sciexplore_task_outcome WHERE judge = ? AND list_contains(?, run_id) "
                   "ORDER BY run_id, task_id", [judge, run_ids])


def agreement_rows(wh: Warehouse) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM sciexplore_judge_agreement ORDER BY judge_a, judge_b, unit")


def disagreement_rows(wh: Warehouse) -> list[dict[str, Any]]:
    return wh.rows("SELECT * FROM sciexplore_judge_disagreements ORDER BY run_id, task_id, unit, slot, ref_index, "
                   "row_key, column_name, judge_a, judge_b")


def release_sha(wh: Warehouse) -> str | None:
    rows = wh.rows("SELECT sha256 FROM raw.sciexplore_release")
    return rows[0]["sha256"] if rows else None


def audit_rows(wh: Warehouse) -> list[dict[str, Any]]:
    """`normalized-match`'s T1/T2 verdicts with the answer each judged and the task's ground truth (the judge
    audit's input, audit.audit)."""
    return wh.rows("SELECT j.run_id, j.verdict, r.status, r.answer_text, t.answer, t.aliases "
                   "FROM raw.judgments j JOIN raw.sciexplore_responses r USING (run_id, task_id) "
                   "JOIN raw.sciexplore_tasks t USING (task_id) "
                   "WHERE j.judge = 'normalized-match' AND j.unit = 'answer' ORDER BY j.run_id, j.task_id")
