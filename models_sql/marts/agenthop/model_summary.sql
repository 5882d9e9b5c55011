{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- One row per run (with at least one trajectory): docs/metrics.md#per-run-metrics columns plus reference-compatible extras.
with traj as (
    select * from {{ ref('fct_trajectory') }} where {{ runs_to_build(plan, 'run_id') }}
),
per_run as (
    select
        run_id,
        count(*) as n_items,
        count_if(is_correct) as n_correct,
        count_if(question_type = 'ST') as n_st,
        count_if(question_type = 'MT') as n_mt,
        count_if(question_type = 'ST' and paper_recall) as n_recalled_st,
        count_if(question_type = 'MT' and paper_recall) as n_recalled_mt,
        avg(is_correct::integer) as accuracy,
        avg(case when question_type = 'ST' then paper_recall::integer end) as recall_st,
        avg(case when question_type = 'MT' then paper_recall::integer end) as recall_mt,
        avg(case when question_type = 'ST' then section_recall::integer end) as secrec_st,
        avg(case when question_type = 'MT' then section_recall::integer end) as secrec_mt,
        avg(case when question_type = 'ST' and paper_recall then is_correct::integer end) as conversion_st,
        avg(case when question_type = 'MT' and paper_recall then is_correct::integer end) as conversion_mt,
        avg(paper_recall::integer) as paper_recall,
        avg(section_recall::integer) as section_recall,
        avg(case when paper_recall then is_correct::integer end) as conversion,
        sum(n_tool_calls) as n_tool_calls,
        sum(n_tool_turns) as n_tool_turns,
        avg(total_tokens) / 1000.0 as avg_tokens_k,
        avg(total_turns) as avg_turns,
        avg(budget_used) as avg_budget,
        avg((terminated_by = 'token_limit')::integer) as max_tokens_rate,
        avg((terminated_by = 'max_turns')::integer) as max_turns_rate,
        avg((terminated_by = 'budget')::integer) as max_budget_rate,
        avg((terminated_by = 'error')::integer) as error_rate,
        avg((terminated_by <> 'answer')::integer) as non_submission_rate,
        avg((predicted_index = -1)::integer) as na_rate,
        avg(any_gold_read::integer) as any_gold_read_rate,
        avg(section_hit_soft::integer) as section_hit_soft_rate,
        avg(section_hit_hard::integer) as section_hit_hard_rate,
        avg(case when any_gold_read then is_correct::integer end) as ref_conversion,
        avg(early_submit_after_wrong::integer) as early_submit_rate
    from traj
    group by run_id
),
trigram_concentration as (
    select run_id, max(share) as trigram_concentration
    from {{ ref('tool_trigrams') }}
    where {{ runs_to_build(plan, 'run_id') }}
    group by run_id
)
select
    runs.run_id::varchar as run_id,
    runs.model::varchar as model,
    runs.backend::varchar as backend,
    runs.condition::varchar as condition,
    runs.replicate::integer as replicate,
    runs.family::varchar as family,
    runs.tier::varchar as tier,
    runs.is_simulated::boolean as is_simulated,
    runs.is_partial::boolean as is_partial_run,
    runs.benchmark_sha256::varchar as benchmark_sha256,
    per_run.n_items::integer as n_items,
    per_run.n_correct::integer as n_correct,
    per_run.n_st::integer as n_st,
    per_run.n_mt::integer as n_mt,
    per_run.n_recalled_st::integer as n_recalled_st,
    per_run.n_recalled_mt::integer as n_recalled_mt,
    per_run.accuracy::double as accuracy,
    per_run.recall_st::double as recall_st,
    per_run.recall_mt::double as recall_mt,
    per_run.secrec_st::double as secrec_st,
    per_run.secrec_mt::double as secrec_mt,
    per_run.conversion_st::double as conversion_st,
    per_run.conversion_mt::double as conversion_mt,
    per_run.paper_recall::double as paper_recall,
    per_run.section_recall::double as section_recall,
    per_run.conversion::double as conversion,
    per_run.n_tool_calls::bigint as n_tool_calls,
    per_run.n_tool_turns::bigint as n_tool_turns,
    (per_run.n_tool_calls::double / nullif(per_run.n_tool_turns, 0))::double as calls_per_turn,
    per_run.avg_tokens_k::double as avg_tokens_k,
    per_run.avg_turns::double as avg_turns,
    per_run.avg_budget::double as avg_budget,
    per_run.max_tokens_rate::double as max_tokens_rate,
    per_run.max_turns_rate::double as max_turns_rate,
    per_run.max_budget_rate::double as max_budget_rate,
    per_run.error_rate::double as error_rate,
    per_run.na_rate::double as na_rate,
    per_run.non_submission_rate::double as non_submission_rate,
    per_run.any_gold_read_rate::double as any_gold_read_rate,
    per_run.section_hit_soft_rate::double as section_hit_soft_rate,
    per_run.section_hit_hard_rate::double as section_hit_hard_rate,
    per_run.ref_conversion::double as ref_conversion,
    per_run.early_submit_rate::double as early_submit_rate,
    trigram_concentration.trigram_concentration::double as trigram_concentration,
    runs.generation::varchar as generation
from per_run
join {{ ref('stg_harness__runs') }} as runs on runs.run_id = per_run.run_id
left join trigram_concentration on trigram_concentration.run_id = per_run.run_id
