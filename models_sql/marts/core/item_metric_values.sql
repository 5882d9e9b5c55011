-- docs/metrics.md#item-metric-values: one row per final item of every run and every metric it has a row of:
-- every raw.scores row of a final trajectory (metric 'scorer.key'), each benchmark's own metrics
-- (benchmark_item_metric_models(): AgentHop's `correct`, SciExplore's judges' metrics), and, for the runs of
-- any other benchmark, trajectories.score as `score` where the item has no raw.scores row. value is NULL
-- for a score that is not a number. Runs, run groups and epochs: int_core_runs.
{%- set own = benchmark_item_metric_models() %}
with scores as (
    select scores.run_id, scores.sample_id, scores.scorer || '.' || scores.score_key as metric, scores.value_num as value
    from {{ ref('stg_harness__scores') }} as scores
    semi join {{ ref('int_core_trajectories_final') }} as final
        on final.run_id = scores.run_id and final.sample_id = scores.sample_id
),
own as (
{%- for benchmark, m in own.items() %}
    select run_id, sample_id, metric, value from {{ ref(m) }}
    {%- if not loop.last %}
    union all
    {%- endif %}
{%- endfor %}
),
fallback as (
    select final.run_id, final.sample_id, 'score' as metric, final.score as value
    from {{ ref('int_core_trajectories_final') }} as final
    where final.score is not null
    {%- if own %}
        and final.benchmark not in {{ sql_values(own.keys() | list) }}
    {%- endif %}
        and not exists (
            select 1 from {{ ref('stg_harness__scores') }} as s where s.run_id = final.run_id and s.sample_id = final.sample_id
        )
),
all_values as (
    select * from scores
    union all
    select * from own
    union all
    select * from fallback
)
select
    runs.benchmark::varchar as benchmark,
    all_values.run_id::varchar as run_id,
    runs.model::varchar as model,
    runs.condition::varchar as condition,
    runs.run_group::varchar as run_group,
    runs.epoch::integer as epoch,
    all_values.sample_id::varchar as sample_id,
    all_values.metric::varchar as metric,
    all_values.value::double as value
from all_values
join {{ ref('int_core_runs') }} as runs on runs.run_id = all_values.run_id
