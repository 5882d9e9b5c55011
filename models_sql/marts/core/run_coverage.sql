-- docs/metrics.md#coverage: one row per run of any benchmark (int_core_runs). n_scope = items of the run's
-- benchmark in the loaded catalogue (raw.benchmarks.n_items: AgentHop's and SciExplore's releases, an
-- Inspect task's samples), at least n_final; n_final = items with a final outcome (a final trajectory, a
-- response); n_scored = of them, items with a value of the benchmark's primary metric (metric_defs);
-- n_error = items that ended with an error; n_missing = n_scope - n_final.
with finals as (
    select run_id, count(*) as n_final, count_if(is_error) as n_error
    from {{ ref('int_core_items_final') }}
    group by run_id
),
primary_metric as (
    select benchmark, metric from {{ ref('metric_defs') }} where is_primary
),
scored as (
    select v.run_id, count(distinct v.sample_id) as n_scored
    from {{ ref('item_metric_values') }} as v
    join primary_metric on primary_metric.benchmark = v.benchmark and primary_metric.metric = v.metric
    where v.value is not null
    group by v.run_id
),
counted as (
    select
        runs.run_id,
        runs.benchmark,
        runs.model,
        greatest(coalesce(releases.n_items, 0), coalesce(finals.n_final, 0)) as n_scope,
        coalesce(finals.n_final, 0) as n_final,
        coalesce(scored.n_scored, 0) as n_scored,
        coalesce(finals.n_error, 0) as n_error
    from {{ ref('int_core_runs') }} as runs
    left join {{ ref('stg_ingest__benchmarks') }} as releases on releases.benchmark = runs.benchmark
    left join finals on finals.run_id = runs.run_id
    left join scored on scored.run_id = runs.run_id
)
select
    run_id::varchar as run_id,
    benchmark::varchar as benchmark,
    model::varchar as model,
    n_scope::integer as n_scope,
    n_final::integer as n_final,
    n_scored::integer as n_scored,
    n_error::integer as n_error,
    (n_scope - n_final)::integer as n_missing
from counted
