{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- Bigram effect (docs/metrics.md#bigram-effects), per run and each of the 49 ordered pairs of the seven tools (zero rows
-- included): accuracy of final trajectories containing the bigram (consecutive calls, any status)
-- minus accuracy of those that do not, in percentage points. Fisher's exact p-value and the Bonferroni
-- flag (family = 49) are computed in the report layer (reports/, scipy.stats.fisher_exact) from the
-- 2x2 counts here: [[correct_with, n_with - correct_with], [correct_without, n_without - correct_without]].
with tools as (
    select unnest({{ known_tools() }}) as tool
),
pairs as (
    select a.tool as prev_tool, b.tool as next_tool from tools as a cross join tools as b
),
runs as (
    select run_id, count(*) as n_items, count_if(is_correct) as n_correct
    from {{ ref('fct_trajectory') }}
    where {{ runs_to_build(plan, 'run_id') }}
    group by run_id
),
containing as (
    select distinct calls.run_id, calls.sample_id, calls.prev_tool, calls.tool as next_tool, traj.is_correct
    from {{ ref('int_tool_calls_final') }} as calls
    join {{ ref('fct_trajectory') }} as traj
        on traj.run_id = calls.run_id and traj.sample_id = calls.sample_id
    where calls.prev_tool is not null and {{ runs_to_build(plan, 'calls.run_id') }} and {{ runs_to_build(plan, 'traj.run_id') }}
),
with_counts as (
    select run_id, prev_tool, next_tool, count(*) as n_with, count_if(is_correct) as correct_with
    from containing
    group by all
),
grid as (
    select
        runs.run_id,
        pairs.prev_tool,
        pairs.next_tool,
        coalesce(with_counts.n_with, 0) as n_with,
        coalesce(with_counts.correct_with, 0) as correct_with,
        runs.n_items - coalesce(with_counts.n_with, 0) as n_without,
        runs.n_correct - coalesce(with_counts.correct_with, 0) as correct_without
    from runs
    cross join pairs
    left join with_counts
        on with_counts.run_id = runs.run_id
        and with_counts.prev_tool = pairs.prev_tool
        and with_counts.next_tool = pairs.next_tool
)
select
    run_id::varchar as run_id,
    (prev_tool || '>' || next_tool)::varchar as bigram,
    prev_tool::varchar as prev_tool,
    next_tool::varchar as next_tool,
    n_with::integer as n_with,
    correct_with::integer as correct_with,
    n_without::integer as n_without,
    correct_without::integer as correct_without,
    (correct_with::double / nullif(n_with, 0))::double as acc_with,
    (correct_without::double / nullif(n_without, 0))::double as acc_without,
    (100.0 * (correct_with::double / nullif(n_with, 0) - correct_without::double / nullif(n_without, 0)))::double
        as effect_pp
from grid
