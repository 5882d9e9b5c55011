-- The benchmark's yardstick for `dbt build` (issue: within 3x): one hand-written DuckDB script that
-- computes model_summary, stopping_behavior and tool_transitions directly over the harness's Parquet
-- files. Benchmark tables (gold papers, labels, section text) come from the warehouse, attached
-- read-only, as dbt reads them. Placeholders {runs} and {db} are filled by bench/run_bench.py.
ATTACH '{db}' AS wh (READ_ONLY);

CREATE TEMP TABLE traj AS
SELECT * FROM read_parquet('{runs}/*/trajectories-*.parquet', union_by_name = true) WHERE is_final;

CREATE TEMP TABLE calls AS
SELECT c.run_id, c.sample_id, c.seq, c.tool, c.paper_id, c.status, c.resolved_section_index
FROM read_parquet('{runs}/*/tool_calls-*.parquet', union_by_name = true) c
SEMI JOIN traj t ON c.run_id = t.run_id AND c.sample_id = t.sample_id AND c.attempt = t.attempt;

CREATE TEMP TABLE tool_turns AS
SELECT u.run_id, u.sample_id, count(*) FILTER (WHERE u.role = 'assistant' AND u.n_tool_calls > 0) AS n_tool_turns
FROM read_parquet('{runs}/*/turns-*.parquet', union_by_name = true) u
SEMI JOIN traj t ON u.run_id = t.run_id AND u.sample_id = t.sample_id AND u.attempt = t.attempt
GROUP BY ALL;

CREATE TEMP TABLE items AS
SELECT sample_id, CASE WHEN question_type = 'multi-target' THEN 'MT' ELSE 'ST' END AS qt FROM wh.raw.items;

CREATE TEMP TABLE gold AS
SELECT p.sample_id, p.paper_id, coalesce(n.arxiv_id, p.arxiv_id, '') AS arxiv_id
FROM wh.raw.item_papers p
LEFT JOIN wh.raw.graph_nodes n ON n.sample_id = p.sample_id AND n.paper_id = p.paper_id
WHERE p.role = 'gold';

-- label resolution (docs/metrics.md#label-resolution): header match, else containment in the section text
CREATE TEMP TABLE lab AS
SELECT l.sample_id, g.paper_id, g.arxiv_id, l.label_index,
       trim(regexp_replace(regexp_replace(lower(l.label_section), '^[0-9]+(\.[0-9]+)*\.?\s+', ''), '\s+', ' ', 'g')) AS nl
FROM wh.raw.recall_labels l
JOIN gold g ON g.sample_id = l.sample_id AND g.arxiv_id = l.arxiv_id AND g.arxiv_id <> ''
WHERE l.relevance = 'direct';

CREATE TEMP TABLE secs AS
SELECT s.arxiv_id, s.section_index,
       trim(regexp_replace(regexp_replace(lower(s.header), '^[0-9]+(\.[0-9]+)*\.?\s+', ''), '\s+', ' ', 'g')) AS nh,
       regexp_replace(lower(s.text), '\s+', ' ', 'g') AS nt
FROM wh.raw.sections s
WHERE s.arxiv_id IN (SELECT arxiv_id FROM gold);

CREATE TEMP TABLE by_header AS
SELECT lab.sample_id, lab.paper_id, lab.label_index, s.section_index
FROM lab JOIN secs s ON s.arxiv_id = lab.arxiv_id AND s.nh = lab.nl;

CREATE TEMP TABLE matched AS
SELECT sample_id, paper_id, section_index FROM by_header
UNION
SELECT lab.sample_id, lab.paper_id, s.section_index
FROM lab ANTI JOIN by_header b
  ON b.sample_id = lab.sample_id AND b.paper_id = lab.paper_id AND b.label_index = lab.label_index
JOIN secs s ON s.arxiv_id = lab.arxiv_id AND lab.nl <> '' AND contains(s.nt, lab.nl);

CREATE TEMP TABLE reads AS
SELECT run_id, sample_id, paper_id, resolved_section_index, seq
FROM calls WHERE tool = 'read_section' AND status = 'ok';

CREATE TEMP TABLE gold_cov AS
SELECT t.run_id, t.sample_id, g.paper_id,
       min(r.seq) AS first_read_seq,
       bool_or(r.seq IS NOT NULL) AS read_any,
       bool_or(m.section_index IS NOT NULL) AS read_labelled
FROM traj t
JOIN gold g ON g.sample_id = t.sample_id
LEFT JOIN reads r ON r.run_id = t.run_id AND r.sample_id = t.sample_id AND r.paper_id = g.paper_id
LEFT JOIN matched m ON m.sample_id = t.sample_id AND m.paper_id = g.paper_id
                   AND m.section_index = r.resolved_section_index
GROUP BY ALL;

CREATE TEMP TABLE per_traj AS
SELECT t.run_id, t.sample_id, i.qt, t.is_correct, t.terminated_by, t.predicted_index,
       t.total_tokens, t.total_turns, t.budget_used,
       coalesce(bool_and(gc.read_any), false) AND count(gc.paper_id) > 0 AS pr,
       coalesce(bool_and(gc.read_labelled), false) AND count(gc.paper_id) > 0 AS sr,
       bool_or(gc.read_any) AS any_gold,
       max(gc.first_read_seq) AS both_anchor,
       min(gc.first_read_seq) AS first_gold_seq,
       arg_min(gc.paper_id, gc.first_read_seq) AS first_gold_paper
FROM traj t
JOIN items i USING (sample_id)
LEFT JOIN gold_cov gc ON gc.run_id = t.run_id AND gc.sample_id = t.sample_id
GROUP BY ALL;

CREATE TEMP TABLE per_traj_calls AS
SELECT run_id, sample_id, count(*) AS n_calls FROM calls GROUP BY ALL;

CREATE TABLE hw_model_summary AS
SELECT p.run_id,
       count(*) AS n_items,
       avg(p.is_correct::int) AS accuracy,
       avg(p.pr::int) FILTER (WHERE qt = 'ST') AS recall_st,
       avg(p.pr::int) FILTER (WHERE qt = 'MT') AS recall_mt,
       avg(p.sr::int) FILTER (WHERE qt = 'ST') AS secrec_st,
       avg(p.sr::int) FILTER (WHERE qt = 'MT') AS secrec_mt,
       avg(p.is_correct::int) FILTER (WHERE qt = 'ST' AND p.pr) AS conversion_st,
       avg(p.is_correct::int) FILTER (WHERE qt = 'MT' AND p.pr) AS conversion_mt,
       sum(coalesce(c.n_calls, 0)) / nullif(sum(coalesce(tt.n_tool_turns, 0)), 0) AS calls_per_turn,
       avg(p.total_tokens) / 1000 AS avg_tokens_k,
       avg(p.total_turns) AS avg_turns,
       avg(p.budget_used) AS avg_budget,
       avg((p.terminated_by = 'token_limit')::int) AS max_tokens_rate,
       avg((p.terminated_by = 'max_turns')::int) AS max_turns_rate,
       avg((p.terminated_by = 'budget')::int) AS max_budget_rate,
       avg((p.terminated_by = 'error')::int) AS error_rate,
       avg((p.predicted_index = -1)::int) AS na_rate
FROM per_traj p
LEFT JOIN per_traj_calls c USING (run_id, sample_id)
LEFT JOIN tool_turns tt USING (run_id, sample_id)
GROUP BY p.run_id;

-- stopping behaviour (docs/metrics.md#stopping-behaviour)
CREATE TEMP TABLE anchored AS
SELECT run_id, sample_id,
       CASE WHEN qt = 'ST' AND pr THEN 'ST' WHEN qt = 'MT' AND pr THEN 'MT-both' WHEN qt = 'MT' THEN 'MT-fail' END AS scope,
       CASE WHEN qt = 'MT' AND pr THEN both_anchor ELSE first_gold_seq END AS anchor,
       first_gold_paper, any_gold
FROM per_traj
WHERE (qt = 'ST' AND pr) OR qt = 'MT';

CREATE TEMP TABLE after_anchor AS
SELECT a.run_id, a.sample_id, a.scope, a.any_gold,
       bool_or(c.tool = 'read_section') AS s_read,
       arg_min(c.tool, c.seq) AS s_first,
       bool_or(c.tool = 'think') AS s_think,
       bool_or(c.tool IN ('get_paper_info', 'get_references', 'list_sections', 'search_papers')) AS s_nav,
       bool_or(c.tool = 'read_section' AND c.paper_id IS DISTINCT FROM a.first_gold_paper) AS s_other_read
FROM anchored a
LEFT JOIN calls c ON c.run_id = a.run_id AND c.sample_id = a.sample_id AND c.seq > a.anchor
GROUP BY ALL;

CREATE TEMP TABLE stop_cat AS
SELECT run_id, scope,
       CASE
         WHEN scope IN ('ST', 'MT-both') THEN
           CASE WHEN coalesce(s_read, false) THEN 'read'
                WHEN s_first = 'submit_answer' THEN 'immediate'
                WHEN coalesce(s_think, false) AND NOT coalesce(s_nav, false) THEN 'think'
                ELSE 'other' END
         ELSE
           CASE WHEN NOT coalesce(any_gold, false) THEN 'zero_gold'
                WHEN coalesce(s_nav, false) OR coalesce(s_other_read, false) THEN 'explored'
                WHEN coalesce(s_read, false) THEN 'stayed'
                ELSE 'premature' END
       END AS category
FROM after_anchor;

CREATE TABLE hw_stopping_behavior AS
SELECT run_id, scope, category, n,
       sum(n) OVER (PARTITION BY run_id, scope) AS n_scope,
       n / sum(n) OVER (PARTITION BY run_id, scope) AS share
FROM (SELECT run_id, scope, category, count(*) AS n FROM stop_cat GROUP BY run_id, scope, category);

-- transitions (docs/metrics.md#transitions)
CREATE TABLE hw_tool_transitions AS
WITH pairs AS (
  SELECT run_id, tool AS prev_tool, lead(tool) OVER (PARTITION BY run_id, sample_id ORDER BY seq) AS next_tool
  FROM calls
)
SELECT run_id, prev_tool, next_tool, n, n / sum(n) OVER (PARTITION BY run_id, prev_tool) AS p_next
FROM (SELECT run_id, prev_tool, next_tool, count(*) AS n FROM pairs WHERE next_tool IS NOT NULL
      GROUP BY run_id, prev_tool, next_tool);
