"""docs/simulated_agents.md: a panel of simulated archetypes shows its signatures in the MARTS (not only in the
trajectories the policy tests look at): the pipeline fixture's panel, read through dbt's output."""

from __future__ import annotations

import duckdb
import pytest


@pytest.fixture(scope="module")
def con(built_warehouse):
    c = duckdb.connect(str(built_warehouse.db), read_only=True)
    yield c
    c.close()


def summary(con, model: str, condition: str = "full") -> dict:
    cur = con.execute("select * from model_summary where model = ? and condition = ? order by replicate limit 1",
                      [model, condition])
    cols = [d[0] for d in cur.description]
    return dict(zip(cols, cur.fetchone()))


def p_next(con, model: str, prev: str, nxt: str) -> float:
    row = con.execute(
        """select coalesce(sum(t.n) filter (where t.next_tool = ?), 0)::double / sum(t.n)
           from tool_transitions t join model_summary s using (run_id)
           where s.model = ? and s.condition = 'full' and t.prev_tool = ?""", [nxt, model, prev]).fetchone()
    return float(row[0] or 0.0)


def test_verifier_read_then_think_band(con) -> None:
    assert p_next(con, "verifier", "read_section", "think") > 0.6
    assert p_next(con, "verifier", "read_section", "think") > 2 * p_next(con, "early-committer", "read_section", "think")


def test_metadata_looper_never_finds_evidence(con) -> None:
    s = summary(con, "metadata-looper")
    assert s["recall_st"] == 0.0 and s["recall_mt"] == 0.0
    reads = con.execute("""select count(*) from tool_transitions t join model_summary s using (run_id)
                           where s.model = 'metadata-looper' and 'read_section' in (t.prev_tool, t.next_tool)""")
    assert reads.fetchone()[0] == 0
    assert p_next(con, "metadata-looper", "get_paper_info", "get_references") > 0.5


def test_early_committer_parallel_and_immediate(con) -> None:
    ec, ver = summary(con, "early-committer"), summary(con, "verifier")
    assert ec["calls_per_turn"] > 1.3 and ver["calls_per_turn"] < 1.1
    share = dict(con.execute(
        """select s.model, b.share from stopping_behavior b join model_summary s using (run_id)
           where b.scope = 'ST' and b.category = 'immediate' and s.condition = 'full' and s.replicate = 0""").fetchall())
    assert share["early-committer"] == max(share.values()) and share["early-committer"] > 0.5


def test_closed_book_uses_no_navigation(con) -> None:
    tools = {r[0] for r in con.execute(
        """select distinct t.prev_tool from tool_transitions t join model_summary s using (run_id)
           where s.model = 'balanced' and s.condition = 'closed_book'""").fetchall()}
    assert tools <= {"think", "submit_answer"}
    assert summary(con, "balanced", "closed_book")["recall_st"] == 0.0
