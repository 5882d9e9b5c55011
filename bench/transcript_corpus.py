"""A seeded corpus of transcripts of realistic shapes, written straight into a warehouse's raw tables.

Per transcript (one attempt of one item): a system and a user message, nine assistant turns (a few
hundred characters each), ten tool calls (two in the first turn) from five tools, each answered by a
tool message of a few hundred to a few thousand characters: 21 messages, about 28,000 characters.
Runs are models x epochs (4 models x 2 epochs by default), each run an equal share of the items.
Texts are sentences drawn from a fixed pool of 4,000 (words of a 3,000-word vocabulary with a skewed
frequency, plus a few words search benchmarks look for: "timeout", "error 404"); calls repeat an
identical earlier call about one time in eight and fail about one time in twenty.

Every random choice is a hash of (seed, position), so the corpus is the same on every machine and
whatever DuckDB's thread count. The rows go through the warehouse's own DDL (ingest/ddl.py) with one
``raw.ingest_log`` row per run, as an ingest would write them; ``--index`` builds the search index.

    python bench/transcript_corpus.py --db out/corpus.duckdb --transcripts 100000 --index
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import duckdb

TOOLS = ("search_papers", "list_sections", "read_section", "get_paper", "submit_answer")
SPECIAL = ("timeout", "error 404", "rate limit", "retrying", "not found", "the answer is")


def _u(seed: int, *parts: str) -> str:
    """SQL for a deterministic uniform number in [0, 1) from the seed and the given SQL expressions."""
    return f"(hash({seed}, {', '.join(parts)}) % 1000003) / 1000003.0"


#: SQL for the vocabulary (a list, in order) and the sentence pool, once make_text_pool has run
VOCAB = "(SELECT list(w ORDER BY i) FROM words)"


def make_text_pool(con: duckdb.DuckDBPyConnection, seed: int) -> None:
    """Temp tables ``words`` (the 3,000-word vocabulary) and ``sentences`` (the pool of 4,000) on ``con``."""
    con.execute(f"""
        CREATE TEMP TABLE words AS
        SELECT i, CASE WHEN i < {len(SPECIAL)} THEN ({list(SPECIAL)})[i + 1]
                       ELSE chr(97 + (hash({seed}, i, 1) % 26)::INT) || chr(97 + (hash({seed}, i, 2) % 26)::INT)
                            || repeat(chr(97 + (hash({seed}, i, 3) % 26)::INT), (hash({seed}, i, 4) % 3)::INT)
                            || chr(97 + (hash({seed}, i, 5) % 26)::INT) || 'e' || chr(97 + (hash({seed}, i, 6) % 26)::INT)
                  END AS w
        FROM range(3000) t(i)""")
    vocab = VOCAB
    # a sentence: 8-20 words, skewed towards the first words of the vocabulary (u^2), the special ones rarer
    con.execute(f"""
        CREATE TEMP TABLE sentences AS
        SELECT s, upper(left(t, 1)) || substr(t, 2) || '.' AS text FROM (
            SELECT s, CASE WHEN s % 97 = 0 THEN t0 || ' ' || v[1 + s % {len(SPECIAL)}] ELSE t0 END AS t FROM (
                SELECT s, v, array_to_string(list_transform(range(8 + (hash({seed}, s, 7) % 13)::INT),
                       lambda k: v[1 + {len(SPECIAL)} + floor(pow({_u(seed, 's', 'k', '8')}, 2) * {3000 - len(SPECIAL)})::INT]
                       ), ' ') AS t0
                FROM range(4000) r(s), (SELECT {vocab} AS v)))""")


def sentence_pool(seed: int = 0) -> list[str]:
    """The 4,000 sentences transcripts are made of (the same on every machine for one seed)."""
    con = duckdb.connect()
    try:
        make_text_pool(con, seed)
        return [r[0] for r in con.execute("SELECT text FROM sentences ORDER BY s").fetchall()]
    finally:
        con.close()


def build(db: Path, transcripts: int, *, models: int = 4, epochs: int = 2, seed: int = 0, index: bool = False,
          threads: int | None = None) -> dict[str, float]:
    """Write the corpus into a new warehouse ``db``; return the seconds each step took."""
    from agenthop.ingest import ddl

    if db.exists():
        raise SystemExit(f"{db} exists: give a new path")
    db.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(db), config={"zstd_min_string_length": 512})
    if threads:
        con.execute(f"SET threads = {threads}")
    times: dict[str, float] = {}
    t0 = time.perf_counter()
    for stmt in ddl.ddl_statements():
        con.execute(stmt)
    n_runs = models * epochs
    per_run = max(1, transcripts // n_runs)
    make_text_pool(con, seed)
    vocab = VOCAB
    pool = "(SELECT list(text ORDER BY s) FROM sentences)"
    con.execute(f"""
        INSERT INTO raw.runs (run_id, model, backend, condition, replicate, benchmark_sha256, budget_total, max_turns,
            max_total_tokens, harness_version, config_json, family, tier, started_at, finished_at, generation,
            benchmark, paradigm, _partial, _source)
        SELECT 'corpus-m' || m || '-e' || e, 'model-' || m, 'sim', 'full', e, 'corpus', 30, 20, 200000, 'corpus',
               '{{}}', 'fam', NULL, TIMESTAMPTZ '2026-01-01 00:00:00+00', TIMESTAMPTZ '2026-01-01 00:00:00+00',
               NULL, 'corpus', NULL, false, 'corpus'
        FROM range({models}) a(m), range({epochs}) b(e)""")
    con.execute(f"""
        CREATE TEMP TABLE att AS
        SELECT r.run_id, r.model, printf('item-%06d', i) AS sample_id, row_number() OVER () AS t
        FROM raw.runs r, range({per_run}) s(i)""")
    con.execute(f"""
        INSERT INTO raw.trajectories
        SELECT run_id, sample_id, 0, true, 'A', 0, {_u(seed, 't', "'ok'")} < 0.5,
               CASE WHEN t % 10 = 0 THEN 'max_turns' ELSE 'answer' END, 9, 0, 9000, 900, 0, 0, 9900, 0, 0, 0, 12.5,
               NULL, NULL, NULL, NULL, NULL
        FROM att""")
    con.execute("""
        INSERT INTO raw.turns
        SELECT run_id, sample_id, 0, k, 'assistant', CASE WHEN k = 0 THEN 2 ELSE 1 END, 1000, 100, 0, 0, 1100 * (k + 1),
               30, 30, 400, k * 1.0, NULL
        FROM att, range(9) x(k)""")
    # ten calls: seq 0 and 1 in turn 0, seq c in turn c - 1 after that; one in eight repeats the call before it
    con.execute(f"""
        INSERT INTO raw.tool_calls
        SELECT run_id, sample_id, 0, greatest(c - 1, 0), CASE WHEN c = 1 THEN 1 ELSE 0 END, c, tool,
               CASE WHEN tool = 'submit_answer' THEN '{{"answer": "A"}}'
                    ELSE '{{"paper_id": "p' || (hash({seed}, t, src, 9) % 5000) || '", "query": "'
                         || v[1 + {len(SPECIAL)} + (hash({seed}, t, src, 10) % 500)::INT] || '"}}' END,
               NULL, NULL, NULL, NULL, NULL, NULL, 0,
               CASE WHEN {_u(seed, 't', 'c', '11')} < 0.05 THEN 'tool_error' ELSE 'ok' END, 1000, 30, NULL
        FROM (
            SELECT *, CASE WHEN c = 9 THEN 'submit_answer'
                           ELSE ({list(TOOLS[:4])})[1 + (hash({seed}, t, src, 12) % 4)::INT] END AS tool
            FROM (SELECT att.*, c, CASE WHEN c > 0 AND c < 9 AND {_u(seed, 't', 'c', '13')} < 0.125 THEN c - 1 ELSE c END AS src
                  FROM att, range(10) y(c))
        ), (SELECT {vocab} AS v)""")
    times["calls"] = time.perf_counter() - t0
    # messages: system, user, then per turn k the assistant's text and its calls' outputs
    con.execute(f"""
        INSERT INTO raw.messages
        WITH shape AS (
            SELECT 0 AS idx, 'system' AS role, NULL AS call, 3 AS lo, 4 AS span UNION ALL
            SELECT 1, 'user', NULL, 4, 6 UNION ALL
            SELECT 2, 'assistant', NULL, 2, 6 UNION ALL SELECT 3, 'tool', 0, 3, 40 UNION ALL SELECT 4, 'tool', 1, 3, 40
            UNION ALL
            SELECT 5 + 2 * (k - 1), 'assistant', NULL, 2, 6 FROM range(1, 9) z(k) UNION ALL
            SELECT 6 + 2 * (k - 1), 'tool', k + 1, 3, 40 FROM range(1, 9) z(k)
        )
        SELECT att.run_id, att.sample_id, 0, shape.idx, shape.role,
               CASE WHEN shape.role = 'tool' THEN c.tool END, CASE WHEN shape.role = 'tool' THEN 'call-' || shape.call END,
               array_to_string(list_transform(range(shape.lo + (hash({seed}, att.t, shape.idx, 14) % shape.span)::INT),
                   lambda j: p[1 + (hash({seed}, att.t, shape.idx, j) % 4000)::INT]), ' ')
        FROM att CROSS JOIN shape CROSS JOIN (SELECT {pool} AS p)
        LEFT JOIN raw.tool_calls c ON shape.role = 'tool' AND c.run_id = att.run_id AND c.sample_id = att.sample_id
             AND c.attempt = 0 AND c.seq = shape.call""")
    con.execute("""
        INSERT INTO raw.ingest_log
        SELECT 1, TIMESTAMPTZ '2026-01-01 00:00:00+00', 'runs', 'corpus', run_id, 'corpus', 'inserted', '{}'
        FROM raw.runs""")
    con.execute("CHECKPOINT")
    times["raw_tables"] = time.perf_counter() - t0
    if index:
        from agenthop.ingest.transcripts.index import rebuild_index

        t1 = time.perf_counter()
        con.execute("BEGIN TRANSACTION")
        rebuild_index(con)
        con.execute("COMMIT")
        con.execute("CHECKPOINT")
        times["index"] = time.perf_counter() - t1
    con.close()
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, type=Path)
    ap.add_argument("--transcripts", type=int, default=100_000)
    ap.add_argument("--models", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--index", action="store_true", help="also build the search index")
    args = ap.parse_args()
    times = build(args.db, args.transcripts, models=args.models, epochs=args.epochs, seed=args.seed, index=args.index)
    print(" ".join(f"{k}={v:.1f}s" for k, v in times.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
