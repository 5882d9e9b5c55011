{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- docs/metrics.md#trigrams: trigrams of consecutive calls (a>b>c) per run; share = n / all trigrams of the run.
-- Trigram concentration (model_summary) = the largest share.
with trigrams as (
    select
        run_id,
        prev_tool || '>' || tool || '>' || next_tool as trigram,
        count(*) as n
    from {{ ref('int_core_tool_calls_final') }}
    where prev_tool is not null and next_tool is not null and {{ runs_to_build(plan, 'run_id') }}
    group by all
)
select
    run_id::varchar as run_id,
    trigram::varchar as trigram,
    n::integer as n,
    (n::double / sum(n) over (partition by run_id))::double as share,
    (rank() over (partition by run_id order by n desc))::integer as rank_in_run
from trigrams
