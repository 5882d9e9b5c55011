{{ config(materialized="table") }}
-- Materialized as a table (not a view): almost every other model joins it.
-- The trajectory of (run_id, sample_id) is its final attempt (docs/metrics.md#definitions). Joined to its run and item;
-- trajectories whose run or item is not loaded are excluded here and reported in dq_trajectory_accounting.
-- Should a (run, sample) carry several is_final rows, the highest attempt is used (also reported).
with attempt_counts as (
    select run_id, sample_id, count(*) as n_attempts
    from {{ ref('stg_harness__trajectories') }}
    group by run_id, sample_id
),
final as (
    select
        run_id, sample_id, attempt, predicted_answer, predicted_index, is_correct, terminated_by, total_turns,
        budget_used, prompt_tokens, completion_tokens, cache_read_tokens, cache_creation_tokens, total_tokens,
        tool_errors, api_error_count, transient_retry_count, wall_time_s, wait_s, repaired_chars
    from {{ ref('stg_harness__trajectories') }}
    where is_final
    qualify row_number() over (partition by run_id, sample_id order by attempt desc) = 1
),
gold_counts as (
    select sample_id, count(*) as n_gold
    from {{ ref('int_gold_papers') }}
    group by sample_id
)
select
    final.run_id,
    final.sample_id,
    final.attempt,
    attempt_counts.n_attempts,
    runs.model,
    runs.backend,
    runs.condition,
    runs.replicate,
    runs.is_simulated,
    runs.is_partial,
    items.question_type,
    items.depth,
    items.cell,
    items.reasoning_type,
    coalesce(gold_counts.n_gold, 0) as n_gold,
    final.predicted_answer,
    final.predicted_index,
    final.is_correct,
    final.terminated_by,
    final.total_turns,
    final.budget_used,
    final.prompt_tokens,
    final.completion_tokens,
    final.cache_read_tokens,
    final.cache_creation_tokens,
    final.total_tokens,
    final.tool_errors,
    final.api_error_count,
    final.transient_retry_count,
    final.wall_time_s,
    final.wait_s,
    final.repaired_chars
from final
join attempt_counts on attempt_counts.run_id = final.run_id and attempt_counts.sample_id = final.sample_id
join {{ ref('stg_harness__runs') }} as runs on runs.run_id = final.run_id
join {{ ref('stg_benchmark__items') }} as items on items.sample_id = final.sample_id
left join gold_counts on gold_counts.sample_id = final.sample_id
