"""The simulated search archetypes: they use the offline tools, and their panel shows the paper's findings."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from conftest import run_dbt_build
from sx_fixtures import file_sha, ingest  # noqa: F401 (fixture)

from agenthop.harness.benchmarks.sciexplore import SEARCH_TOOLS
from agenthop.harness.benchmarks.sciexplore.generator import write_release
from agenthop.harness.benchmarks.sciexplore.release import load_release
from agenthop.harness.benchmarks.sciexplore.search_tools import CorpusTools
from agenthop.harness.benchmarks.sciexplore.sim_agents import (
    ARCHETYPES, CapReached, Session, run_task, write_archetype_responses,
)

SELECT = ("--select", "path:models_sql/staging/sciexplore", "path:models_sql/intermediate/sciexplore",
          "path:models_sql/marts/sciexplore")
BY_BEHAVIOUR = {a.behaviour: a for a in ARCHETYPES}


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("sx") / "release"
    write_release(root, seed=0)
    return load_release(root)


def test_policies_read_the_corpus_through_the_tools(synthetic) -> None:
    t1 = next(t for t in synthetic.tasks if t.type == "T1" and t.hops >= 4)
    deep = run_task(BY_BEHAVIOUR["deep_researcher"], synthetic, t1, 0, 0)
    tools = [c["tool"] for c in deep["trace"]]
    # one db_search and one open_page per hop, then a cross-check on the web
    assert tools[: 2 * t1.hops] == ["db_search", "open_page"] * t1.hops and tools[-1] == "web_search"
    assert all(c["result_chars"] > 0 for c in deep["trace"])
    assert deep["status"] == "answered" and deep["answer"] == t1.answer
    assert run_task(BY_BEHAVIOUR["foundation_guesser"], synthetic, t1, 0, 0)["trace"] == []
    assert run_task(BY_BEHAVIOUR["shallow_searcher"], synthetic, t1, 0, 0)["status"] == "not_attempted"


def test_the_tool_call_cap_ends_a_task(synthetic) -> None:
    s = Session(max_calls=1)
    tools = CorpusTools.for_release(synthetic)
    step = s.call("web_search", query="kinase")
    name, args = next(step)  # the policy asks for the call; the driver runs it and sends the result back
    with pytest.raises(StopIteration):
        step.send(tools.call(name, args))
    with pytest.raises(CapReached):
        next(s.call("open_page", id="doc_00001"))
    assert len(s.calls) == 1 and s.n_searches == 1


def test_seeded_and_reproducible(synthetic, tmp_path: Path) -> None:
    a = write_archetype_responses(tmp_path / "a.jsonl", synthetic, seed=1, replicates=1)
    b = write_archetype_responses(tmp_path / "b.jsonl", synthetic, seed=1, replicates=1)
    assert a == b == len(ARCHETYPES) * len(synthetic.tasks)
    assert file_sha(tmp_path / "a.jsonl") == file_sha(tmp_path / "b.jsonl")
    write_archetype_responses(tmp_path / "c.jsonl", synthetic, seed=2, replicates=1)
    assert file_sha(tmp_path / "c.jsonl") != file_sha(tmp_path / "a.jsonl")


def test_marts_show_the_papers_findings(synthetic, tmp_path: Path, ingest) -> None:  # noqa: F811
    responses = tmp_path / "responses.jsonl"
    write_archetype_responses(responses, synthetic, seed=0, replicates=2)
    db = tmp_path / "w.duckdb"
    result = ingest("--db", db, "--benchmark", synthetic.root, "--responses", responses)
    assert result.exit_code == 0, result.output
    proc = run_dbt_build(db, tmp_path, *SELECT)
    assert proc.returncode == 0, proc.stdout[-3000:]
    search = ", ".join(f"'{t}'" for t in SEARCH_TOOLS)
    with duckdb.connect(str(db), read_only=True) as con:
        per_model = dict(con.execute(
            "SELECT s.model, avg(s.overall) FROM main.sciexplore_summary AS s WHERE judge = 'normalized-match' "
            "GROUP BY s.model").fetchall())
        effort = dict(con.execute(
            "SELECT s.model, sum(e.search_calls) / sum(e.n_tasks) FROM main.sciexplore_search_effort AS e "
            "JOIN main.sciexplore_summary AS s USING (run_id, judge) WHERE judge = 'normalized-match' "
            "GROUP BY s.model").fetchall())
        abandoned = dict(con.execute(
            "SELECT s.model, count(*) FILTER (WHERE o.status = 'not_attempted') || '/' || "
            "coalesce(max(o.n_search_calls) FILTER (WHERE o.status = 'not_attempted'), 0) "
            "FROM main.sciexplore_task_outcome AS o JOIN main.sciexplore_summary AS s USING (run_id, judge) "
            "WHERE judge = 'normalized-match' GROUP BY s.model").fetchall())
        raw_searches = con.execute(f"SELECT count(*) FROM raw.sciexplore_trace WHERE tool IN ({search})").fetchone()
        mart_searches = con.execute("SELECT sum(search_calls) FROM main.sciexplore_search_effort "
                                    "WHERE judge = 'normalized-match'").fetchone()
    deep, shallow = BY_BEHAVIOUR["deep_researcher"].model, BY_BEHAVIOUR["shallow_searcher"].model
    foundation = BY_BEHAVIOUR["foundation_guesser"].model
    # the deep researcher searches most and scores highest
    assert max(effort, key=effort.get) == deep and max(per_model, key=per_model.get) == deep
    # the foundation guesser does not search
    assert effort[foundation] == 0
    # premature abandonment: the shallow searcher's not-attempted tasks came after at most two searches
    n_abandoned, most_searches = (int(x) for x in abandoned[shallow].split("/"))
    assert n_abandoned > 0 and most_searches <= 2
    # every search the policies made reached the marts
    assert raw_searches == mart_searches and raw_searches[0] > 0


def test_a_products_report_becomes_a_loadable_responses_line(synthetic, tmp_path: Path, ingest) -> None:  # noqa: F811
    """The recipe of docs/sciexplore.md#deep-research-products: final_answer, nulls where a product shows nothing."""
    import json

    from agenthop.harness.benchmarks.sciexplore.answers import final_answer

    t4 = next(t for t in synthetic.tasks if t.type == "T4")
    table = "| " + " | ".join(t4.columns) + " |\n|" + "---|" * len(t4.columns) + "\n" + "| " + " | ".join(
        t4.rows[0][c] for c in t4.columns) + " |"
    lines = []
    for task, report in ((t4, f"# Report\n\nFindings below.\n\n{table}\n\nSources: 3 papers."),
                         (synthetic.tasks[0], "After a long search I could not find the answer.")):
        status, answer = final_answer(task, "answer", report)
        lines.append({"model": "acme-deep-research", "paradigm": "deep_research", "replicate": 0, "task_id": task.id,
                      "status": status, "answer": answer,
                      "trace": [{"tool": "web_search", "query": "q", "result_chars": None}],
                      "prompt_tokens": None, "completion_tokens": None, "wall_time_s": 412.0})
    path = tmp_path / "product.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    result = ingest("--db", db, "--benchmark", synthetic.root, "--responses", path)
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(db), read_only=True) as con:
        got = con.execute("SELECT task_id, status, format_ok FROM raw.sciexplore_responses ORDER BY task_id").fetchall()
        verdicts = con.execute("SELECT count(*) FILTER (WHERE verdict = 'correct') FROM raw.judgments "
                               f"WHERE task_id = '{t4.id}'").fetchone()[0]
    assert sorted(got) == sorted([(t4.id, "answered", True), (synthetic.tasks[0].id, "not_attempted", None)])
    assert verdicts == len(t4.columns)
