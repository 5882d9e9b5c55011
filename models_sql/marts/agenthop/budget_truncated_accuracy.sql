{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- Accuracy as if the run had been stopped at a lower budget (docs/metrics.md "budget-truncated
-- accuracy"): per run, axis and cap b, a final trajectory counts as correct when it is correct, ended by
-- submitting an answer (terminated_by = 'answer') and had used at most b at that point; otherwise wrong.
-- Axes and grids, up to the run's caps: points (budget_used; b = 0 .. budget_total), turns (total_turns;
-- b = 1 .. max_turns), tokens (total_tokens; b = max_total_tokens / 20 .. max_total_tokens in 20 steps).
-- At the caps the value is the run's accuracy minus correct trajectories that did not end by answering.
-- The counting is the shared budget_truncated() macro (docs/metrics.md#budget-curves), as for every benchmark.
with runs as (
    select run_id, budget_total, max_turns, max_total_tokens from {{ ref('stg_harness__runs') }}
    where {{ runs_to_build(plan, 'run_id') }}
),
grid as (
    select run_id, 'points' as axis, 1 as axis_order, b::bigint as b
    from runs, range(0, budget_total + 1) as t(b)
    union all
    select run_id, 'turns', 2, b::bigint from runs, range(1, max_turns + 1) as t(b)
    union all
    select run_id, 'tokens', 3, (max_total_tokens * k // 20)::bigint from runs, range(1, 21) as t(k)
),
traj as (
    select t.run_id, t.sample_id, t.is_correct and t.terminated_by = 'answer' as counts_correct,
           t.budget_used, t.total_turns, t.total_tokens
    from {{ ref('fct_trajectory') }} as t
    join runs on runs.run_id = t.run_id
    where {{ runs_to_build(plan, 't.run_id') }}
),
-- per trajectory and axis: what it had used; it counts (value 1) when correct and ended by answering
usage as (
    select run_id, sample_id, 'points' as axis, budget_used as u, case when counts_correct then 1.0 end as value
    from traj
    union all
    select run_id, sample_id, 'turns', total_turns, case when counts_correct then 1.0 end from traj
    union all
    select run_id, sample_id, 'tokens', total_tokens, case when counts_correct then 1.0 end from traj
),
curve as (
    {{ budget_truncated('grid', 'usage') | indent(4) }}
)
select
    run_id::varchar as run_id,
    axis::varchar as axis,
    axis_order::integer as axis_order,
    b::bigint as b,
    n_items::integer as n_items,
    n_counted::integer as n_correct,
    (n_counted / n_items)::double as accuracy
from curve
