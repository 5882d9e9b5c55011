-- docs/metrics.md#reruns (paper Table 17): runs sharing model and condition with at least two distinct replicates
-- form a rerun group. Per group and metric (accuracy, section_recall = overall mean, conversion =
-- mean(is_correct | paper_recall) over all items, avg_tokens_k): n_runs, mean, std (ddof = 0),
-- range = max - min. A run whose metric is NULL (conversion without recalled items) is counted in
-- n_runs but not in n_values / mean / std / range.
with groups as (
    select model, condition
    from {{ ref('model_summary') }}
    group by model, condition
    having count(distinct replicate) >= 2
),
runs as (
    select summary.*
    from {{ ref('model_summary') }} as summary
    semi join groups on groups.model = summary.model and groups.condition = summary.condition
),
long as (
    select model, condition, run_id, 'accuracy' as metric, 1 as metric_order, accuracy as value from runs
    union all
    select model, condition, run_id, 'section_recall', 2, section_recall from runs
    union all
    select model, condition, run_id, 'conversion', 3, conversion from runs
    union all
    select model, condition, run_id, 'avg_tokens_k', 4, avg_tokens_k from runs
)
select
    model::varchar as model,
    condition::varchar as condition,
    metric::varchar as metric,
    min(metric_order)::integer as metric_order,
    count(*)::integer as n_runs,
    count(value)::integer as n_values,
    -- ordered aggregates: float sums in a fixed order give the same bits on every rebuild
    avg(value order by run_id)::double as mean,
    stddev_pop(value order by run_id)::double as std,
    (max(value) - min(value))::double as range,
    min(value)::double as min_value,
    max(value)::double as max_value
from long
group by model, condition, metric
