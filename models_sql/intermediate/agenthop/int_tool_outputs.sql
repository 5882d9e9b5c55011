{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- The recorded output text of each executed call of a final attempt, when the run recorded messages
-- (real backends by default; simulated runs do not). The transcript holds one `tool` message per
-- executed call, in execution order, and none for calls that were not executed, so the k-th tool
-- message of an attempt is the output of its k-th executed call. A pair whose message names another
-- tool is dropped rather than shown against the wrong call.
with messages as (
    select
        run_id, sample_id, attempt, name, content,
        row_number() over (partition by run_id, sample_id, attempt order by idx) as k
    from {{ ref('stg_harness__messages') }}
    where role = 'tool' and {{ runs_to_build(plan, 'run_id') }}
),
executed as (
    select
        run_id, sample_id, attempt, seq, tool,
        row_number() over (partition by run_id, sample_id, attempt order by seq) as k
    from {{ ref('int_tool_calls_final') }}
    where status <> 'not_executed' and {{ runs_to_build(plan, 'run_id') }}
)
select executed.run_id, executed.sample_id, executed.seq, messages.content as output_text
from executed
join messages
    on messages.run_id = executed.run_id and messages.sample_id = executed.sample_id
    and messages.attempt = executed.attempt and messages.k = executed.k
where messages.name is null or messages.name = executed.tool
