{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- One row per emitted call of a final attempt, with its run's identity, the display columns from
-- staging (joined here: int_tool_calls_final carries only what the metrics need) and the per-call
-- metric flags of int_tool_calls_final.
select
    calls.run_id::varchar as run_id,
    calls.sample_id::varchar as sample_id,
    traj.model::varchar as model,
    traj.condition::varchar as condition,
    traj.replicate::integer as replicate,
    calls.attempt::integer as attempt,
    calls.seq::integer as seq,
    calls.pos::integer as pos,
    calls.turn::integer as turn,
    own.call_index::integer as call_index,
    calls.tool::varchar as tool,
    calls.tool_class::varchar as tool_class,
    own.args_json::varchar as args_json,
    calls.paper_id::varchar as paper_id,
    calls.is_gold_paper::boolean as is_gold_paper,
    calls.is_delivered_read::boolean as is_delivered_read,
    calls.status::varchar as status,
    calls.cost::integer as cost,
    own.output_chars::integer as output_chars,
    own.budget_after::integer as budget_after,
    calls.section_query::varchar as section_query,
    calls.resolved_header::varchar as resolved_header,
    calls.resolved_section_index::integer as resolved_section_index,
    own.search_query::varchar as search_query,
    own.answer::varchar as answer,
    calls.prev_tool::varchar as prev_tool,
    calls.next_tool::varchar as next_tool,
    calls.wrong_read_next_action::varchar as wrong_read_next_action,
    calls.submit_within_3_after::boolean as submit_within_3_after,
    outputs.output_text::varchar as output_text,
    turns.cumulative_tokens::bigint as tokens_after
from {{ ref('int_tool_calls_final') }} as calls
join {{ ref('stg_harness__tool_calls') }} as own
    on own.run_id = calls.run_id and own.sample_id = calls.sample_id and own.attempt = calls.attempt
    and own.seq = calls.seq
join {{ ref('int_trajectories_final') }} as traj
    on traj.run_id = calls.run_id and traj.sample_id = calls.sample_id
left join {{ ref('int_tool_outputs') }} as outputs
    on outputs.run_id = calls.run_id and outputs.sample_id = calls.sample_id and outputs.seq = calls.seq
left join {{ ref('stg_harness__turns') }} as turns
    on turns.run_id = calls.run_id and turns.sample_id = calls.sample_id
    and turns.attempt = calls.attempt and turns.turn = calls.turn
where {{ runs_to_build(plan, 'calls.run_id') }} and {{ runs_to_build(plan, 'own.run_id') }}
    and {{ runs_to_build(plan, 'traj.run_id') }}
