-- Per run and terminated_by value (all five values, zero rows included): n, share of the run's final
-- trajectories, and accuracy within the value (NULL when n = 0).
with terminations as (
    select * from (values ('answer', 1), ('max_turns', 2), ('budget', 3), ('token_limit', 4), ('error', 5))
        as t(terminated_by, termination_order)
),
counts as (
    select run_id, terminated_by, count(*) as n, count_if(is_correct) as correct
    from {{ ref('fct_trajectory') }}
    group by all
),
totals as (
    select run_id, sum(n) as n_total from counts group by run_id
)
select
    totals.run_id::varchar as run_id,
    terminations.terminated_by::varchar as terminated_by,
    terminations.termination_order::integer as termination_order,
    coalesce(counts.n, 0)::integer as n,
    totals.n_total::integer as n_total,
    (coalesce(counts.n, 0)::double / totals.n_total)::double as share,
    (counts.correct::double / nullif(counts.n, 0))::double as accuracy
from totals
cross join terminations
left join counts on counts.run_id = totals.run_id and counts.terminated_by = terminations.terminated_by
