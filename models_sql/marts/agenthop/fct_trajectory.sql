{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- One row per (run_id, sample_id): the final attempt with every per-trajectory metric of docs/metrics.md#definitions.
select
    traj.run_id::varchar as run_id,
    traj.sample_id::varchar as sample_id,
    traj.model::varchar as model,
    traj.backend::varchar as backend,
    traj.condition::varchar as condition,
    traj.replicate::integer as replicate,
    traj.is_simulated::boolean as is_simulated,
    traj.is_partial::boolean as is_partial_run,
    traj.attempt::integer as attempt,
    traj.n_attempts::integer as n_attempts,
    traj.question_type::varchar as question_type,
    traj.depth::integer as depth,
    traj.cell::varchar as cell,
    traj.reasoning_type::varchar as reasoning_type,
    traj.predicted_answer::varchar as predicted_answer,
    traj.predicted_index::integer as predicted_index,
    traj.is_correct::boolean as is_correct,
    traj.terminated_by::varchar as terminated_by,
    traj.n_gold::integer as n_gold,
    coverage.n_gold_read::integer as n_gold_read,
    coverage.paper_recall::boolean as paper_recall,
    coverage.section_recall::boolean as section_recall,
    coverage.evidence_contact::varchar as evidence_contact,
    coverage.any_gold_read::boolean as any_gold_read,
    coalesce(ref_hits.section_hit_soft, false)::boolean as section_hit_soft,
    coalesce(ref_hits.section_hit_hard, false)::boolean as section_hit_hard,
    coverage.first_gold_read_seq::integer as first_gold_read_seq,
    coverage.coverage_complete_seq::integer as coverage_complete_seq,
    stopping.scope::varchar as stopping_scope,
    stopping.category::varchar as stopping_category,
    stats.early_submit_after_wrong::boolean as early_submit_after_wrong,
    traj.total_tokens::bigint as total_tokens,
    (traj.prompt_tokens + traj.cache_read_tokens + traj.cache_creation_tokens + traj.completion_tokens)::bigint
        as all_tokens,
    traj.prompt_tokens::bigint as prompt_tokens,
    traj.completion_tokens::bigint as completion_tokens,
    traj.cache_read_tokens::bigint as cache_read_tokens,
    traj.cache_creation_tokens::bigint as cache_creation_tokens,
    traj.total_turns::integer as total_turns,
    traj.budget_used::integer as budget_used,
    stats.n_tool_calls::integer as n_tool_calls,
    stats.n_tool_turns::integer as n_tool_turns,
    stats.n_assistant_turns::integer as n_assistant_turns,
    stats.n_error_turns::integer as n_error_turns,
    stats.n_delivered_reads::integer as n_delivered_reads,
    stats.n_wrong_paper_reads::integer as n_wrong_paper_reads,
    stats.n_failed_calls::integer as n_failed_calls,
    traj.tool_errors::integer as tool_errors,
    traj.api_error_count::integer as api_error_count,
    traj.transient_retry_count::integer as transient_retry_count,
    traj.wall_time_s::double as wall_time_s,
    traj.wait_s::double as wait_s,
    traj.repaired_chars::integer as repaired_chars
from {{ ref('int_trajectories_final') }} as traj
join {{ ref('int_trajectory_coverage') }} as coverage
    on coverage.run_id = traj.run_id and coverage.sample_id = traj.sample_id
join {{ ref('int_trajectory_call_stats') }} as stats
    on stats.run_id = traj.run_id and stats.sample_id = traj.sample_id
left join {{ ref('int_reference_section_hits') }} as ref_hits
    on ref_hits.run_id = traj.run_id and ref_hits.sample_id = traj.sample_id
left join {{ ref('int_stopping_categories') }} as stopping
    on stopping.run_id = traj.run_id and stopping.sample_id = traj.sample_id
where {{ runs_to_build(plan, 'traj.run_id') }}
