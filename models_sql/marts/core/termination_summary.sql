{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- Per run of any benchmark and terminated_by value: n, share of the run's final trajectories, and the
-- accuracy and mean score within the value (NULL when n = 0). The harness's five terminations are listed for every run (zero rows
-- included), the other limits of the shared vocabulary (imported runs) where they occur. Display order:
-- the harness's five (answer first, error fifth), then the others in vocabulary order.
{%- set harness = harness_terminations() %}
{%- set others = terminated_by_values() | reject('in', harness) | list %}
with terminations as (
    select * from (values
        {%- for t in harness %} ('{{ t }}', {{ loop.index }}, true),{% endfor %}
        {%- for t in others %} ('{{ t }}', {{ harness | length + loop.index }}, false){{ "," if not loop.last }}{% endfor %}
    ) as t(terminated_by, termination_order, always_listed)
),
counts as (
    select run_id, terminated_by, count(*) as n, count_if(is_correct) as correct,
           avg(score order by sample_id) as mean_score  -- ordered: the same bits on every build
    from {{ ref('int_core_trajectories_final') }}
    where {{ runs_to_build(plan, 'run_id') }}
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
    (counts.correct::double / nullif(counts.n, 0))::double as accuracy,
    counts.mean_score::double as mean_score
from totals
cross join terminations
left join counts on counts.run_id = totals.run_id and counts.terminated_by = terminations.terminated_by
where terminations.always_listed or counts.n > 0
