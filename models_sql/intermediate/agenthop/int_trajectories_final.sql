{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- A table, incremental by run (docs/ingest.md#incremental-builds): almost every other model joins it.
-- AgentHop's trajectories: the final attempts of its runs (int_core_trajectories_final, docs/metrics.md#definitions)
-- joined to their item and with AgentHop's own columns; trajectories whose item is not loaded are
-- excluded here and reported in dq_trajectory_accounting.
with gold_counts as (
    select sample_id, count(*) as n_gold
    from {{ ref('int_gold_papers') }}
    group by sample_id
)
select
    final.run_id,
    final.sample_id,
    final.attempt,
    final.n_attempts,
    final.model,
    final.backend,
    final.condition,
    final.replicate,
    final.is_simulated,
    final.is_partial,
    items.question_type,
    items.depth,
    items.cell,
    items.reasoning_type,
    coalesce(gold_counts.n_gold, 0) as n_gold,
    final.predicted_answer,
    own.predicted_index,
    final.is_correct,
    {{- trajectory_measures('final') }}
from {{ ref('int_core_trajectories_final') }} as final
join {{ ref('stg_harness__trajectories') }} as own
    on own.run_id = final.run_id and own.sample_id = final.sample_id and own.attempt = final.attempt
join {{ ref('stg_benchmark__items') }} as items on items.sample_id = final.sample_id
left join gold_counts on gold_counts.sample_id = final.sample_id
where final.benchmark = 'agenthop' and {{ runs_to_build(plan, 'final.run_id') }} and {{ runs_to_build(plan, 'own.run_id') }}
