{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- docs/metrics.md#transitions: transitions between consecutive calls of a final trajectory of any benchmark (all calls, any status, tool
-- names as emitted); p_next = P(next | prev), row-normalised per run and prev_tool.
with pairs as (
    select run_id, prev_tool, tool as next_tool, count(*) as n
    from {{ ref('int_core_tool_calls_final') }}
    where prev_tool is not null and {{ runs_to_build(plan, 'run_id') }}
    group by all
)
select
    run_id::varchar as run_id,
    prev_tool::varchar as prev_tool,
    next_tool::varchar as next_tool,
    (prev_tool || '>' || next_tool)::varchar as bigram,
    n::integer as n,
    (sum(n) over (partition by run_id, prev_tool))::integer as n_prev,
    (n::double / sum(n) over (partition by run_id, prev_tool))::double as p_next,
    (n::double / sum(n) over (partition by run_id))::double as share
from pairs
