{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- Per final trajectory: call and turn counts for calls/turn (docs/metrics.md#per-run-metrics) and the early-submit flag (docs/metrics.md#early-submit).
--   n_tool_calls  every emitted call of the final attempt (all tools, any status, not_executed included).
--   n_tool_turns  turns with role 'assistant' that carry at least one call (a call row with that turn):
--                 the turn that crossed the token cap counts when it carried calls; error turns and
--                 text-only turns do not.
with call_turns as (
    select
        run_id,
        sample_id,
        attempt,
        turn,
        count(*) as n_calls,
        count_if(is_delivered_read) as n_delivered_reads,
        count_if(is_delivered_read and not is_gold_paper) as n_wrong_paper_reads,
        count_if(status <> 'ok') as n_failed_calls,
        bool_or(submit_within_3_after) as early_submit_after_wrong
    from {{ ref('int_tool_calls_final') }}
    where {{ runs_to_build(plan, 'run_id') }}
    group by run_id, sample_id, attempt, turn
),
final_turns as (
    select turns.run_id, turns.sample_id, turns.attempt, turns.turn, turns.role
    from {{ ref('stg_harness__turns') }} as turns
    semi join (
        select run_id, sample_id, attempt from {{ ref('int_trajectories_final') }} where {{ runs_to_build(plan, 'run_id') }}
    ) as traj
        on traj.run_id = turns.run_id and traj.sample_id = turns.sample_id and traj.attempt = turns.attempt
    where {{ runs_to_build(plan, 'turns.run_id') }}
),
per_turn as (
    -- full join: calls whose turn has no turn row still count as calls (dq_trajectory_accounting flags them)
    select
        coalesce(call_turns.run_id, final_turns.run_id) as run_id,
        coalesce(call_turns.sample_id, final_turns.sample_id) as sample_id,
        final_turns.role,
        coalesce(call_turns.n_calls, 0) as n_calls,
        coalesce(call_turns.n_delivered_reads, 0) as n_delivered_reads,
        coalesce(call_turns.n_wrong_paper_reads, 0) as n_wrong_paper_reads,
        coalesce(call_turns.n_failed_calls, 0) as n_failed_calls,
        coalesce(call_turns.early_submit_after_wrong, false) as early_submit_after_wrong
    from call_turns
    full join final_turns
        on final_turns.run_id = call_turns.run_id and final_turns.sample_id = call_turns.sample_id
        and final_turns.attempt = call_turns.attempt and final_turns.turn = call_turns.turn
),
per_traj as (
    select
        run_id,
        sample_id,
        sum(n_calls) as n_tool_calls,
        count_if(role = 'assistant' and n_calls > 0) as n_tool_turns,
        count_if(role = 'assistant') as n_assistant_turns,
        count_if(role = 'error') as n_error_turns,
        sum(n_delivered_reads) as n_delivered_reads,
        sum(n_wrong_paper_reads) as n_wrong_paper_reads,
        sum(n_failed_calls) as n_failed_calls,
        bool_or(early_submit_after_wrong) as early_submit_after_wrong
    from per_turn
    group by run_id, sample_id
)
select
    traj.run_id,
    traj.sample_id,
    coalesce(per_traj.n_tool_calls, 0) as n_tool_calls,
    coalesce(per_traj.n_tool_turns, 0) as n_tool_turns,
    coalesce(per_traj.n_assistant_turns, 0) as n_assistant_turns,
    coalesce(per_traj.n_error_turns, 0) as n_error_turns,
    coalesce(per_traj.n_delivered_reads, 0) as n_delivered_reads,
    coalesce(per_traj.n_wrong_paper_reads, 0) as n_wrong_paper_reads,
    coalesce(per_traj.n_failed_calls, 0) as n_failed_calls,
    coalesce(per_traj.early_submit_after_wrong, false) as early_submit_after_wrong
from {{ ref('int_trajectories_final') }} as traj
left join per_traj on per_traj.run_id = traj.run_id and per_traj.sample_id = traj.sample_id
where {{ runs_to_build(plan, 'traj.run_id') }}
