{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- docs/metrics.md#wrong-read-actions per run: what follows a delivered read on a non-gold paper (all six actions, zero rows
-- included, for runs with at least one such read); share = n / n_total.
with actions as (
    select * from (values ('recover', 1), ('stay', 2), ('think', 3), ('submit', 4), ('renav', 5), ('other', 6))
        as t(action, action_order)
),
counts as (
    select run_id, wrong_read_next_action as action, count(*) as n
    from {{ ref('int_tool_calls_final') }}
    where wrong_read_next_action is not null and {{ runs_to_build(plan, 'run_id') }}
    group by all
),
totals as (
    select run_id, sum(n) as n_total from counts group by run_id
)
select
    totals.run_id::varchar as run_id,
    actions.action::varchar as action,
    actions.action_order::integer as action_order,
    coalesce(counts.n, 0)::integer as n,
    totals.n_total::integer as n_total,
    (coalesce(counts.n, 0)::double / totals.n_total)::double as share
from totals
cross join actions
left join counts on counts.run_id = totals.run_id and counts.action = actions.action
