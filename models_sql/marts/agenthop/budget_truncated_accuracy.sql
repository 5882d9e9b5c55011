{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- Accuracy as if the run had been stopped at a lower budget (docs/metrics.md "budget-truncated
-- accuracy"): per run, axis and cap b, a final trajectory counts as correct when it is correct, ended by
-- submitting an answer (terminated_by = 'answer') and had used at most b at that point; otherwise wrong.
-- Axes and grids, up to the run's caps: points (budget_used; b = 0 .. budget_total), turns (total_turns;
-- b = 1 .. max_turns), tokens (total_tokens; b = max_total_tokens / 20 .. max_total_tokens in 20 steps).
-- At the caps the value is the run's accuracy minus correct trajectories that did not end by answering.
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
    select t.run_id, t.is_correct and t.terminated_by = 'answer' as counts_correct,
           t.budget_used, t.total_turns, t.total_tokens, runs.max_total_tokens
    from {{ ref('fct_trajectory') }} as t
    join runs on runs.run_id = t.run_id
    where {{ runs_to_build(plan, 't.run_id') }}
),
n_items as (
    select run_id, count(*) as n_items from traj group by run_id
),
-- each correct submission is counted once, at the smallest grid value that admits it, then accumulated
first_cap as (
    select run_id, 'points' as axis, budget_used::bigint as b from traj where counts_correct
    union all
    select run_id, 'turns', greatest(total_turns, 1)::bigint from traj where counts_correct
    union all
    select run_id, 'tokens',
           (max_total_tokens * greatest(ceil(total_tokens * 20.0 / max_total_tokens), 1)::bigint // 20)::bigint
    from traj where counts_correct
),
at_cap as (
    select run_id, axis, b, count(*) as n_new from first_cap group by all
)
select
    grid.run_id::varchar as run_id,
    grid.axis::varchar as axis,
    grid.axis_order::integer as axis_order,
    grid.b::bigint as b,
    n_items.n_items::integer as n_items,
    (sum(coalesce(at_cap.n_new, 0)) over (partition by grid.run_id, grid.axis order by grid.b))::integer
        as n_correct,
    (sum(coalesce(at_cap.n_new, 0)) over (partition by grid.run_id, grid.axis order by grid.b)
        / n_items.n_items)::double as accuracy
from grid
join n_items on n_items.run_id = grid.run_id
left join at_cap on at_cap.run_id = grid.run_id and at_cap.axis = grid.axis and at_cap.b = grid.b
