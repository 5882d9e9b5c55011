{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- Calls of every benchmark's final attempts in execution order (seq), with their neighbours: the input
-- of the shared tool-sequence marts (docs/metrics.md#transitions) and of each benchmark's own call models.
-- Tool names as emitted, any status. Incremental by run (docs/ingest.md#incremental-builds).
select
    calls.run_id,
    calls.sample_id,
    calls.attempt,
    calls.turn,
    calls.seq,
    calls.tool,
    calls.status,
    calls.cost,
    row_number() over w - 1 as pos,
    lag(calls.tool) over w as prev_tool,
    lead(calls.tool) over w as next_tool
from {{ ref('stg_harness__tool_calls') }} as calls
semi join (
    select run_id, sample_id, attempt from {{ ref('int_core_trajectories_final') }} where {{ runs_to_build(plan, 'run_id') }}
) as traj
    on traj.run_id = calls.run_id and traj.sample_id = calls.sample_id and traj.attempt = calls.attempt
where {{ runs_to_build(plan, 'calls.run_id') }}
window w as (partition by calls.run_id, calls.sample_id order by calls.seq)
