-- Every run of any benchmark (raw.runs, and the runs benchmarks import without a raw.runs row:
-- benchmark_imported_run_models()) with the identity the shared marts pool by (docs/metrics.md#run-groups):
-- epoch = replicate + 1 (Inspect's epoch, a harness replicate counted from 1); run_group =
-- 'benchmark|model|condition|<hash8>', hash8 the first 8 hex digits of the MD5 of the backend, the caps
-- (budget, turns, tokens) and an Inspect task's arguments: runs that differ only in replicate or epoch.
with runs as (
    select
        run_id, benchmark, model, backend, condition, replicate,
        concat_ws('|', backend, budget_total, max_turns, max_total_tokens,
                  coalesce(json_extract(config_json, '$.task_args')::varchar, '')) as group_key
    from {{ ref('stg_harness__runs') }}
{%- for m in benchmark_imported_run_models() %}
    union all
    select run_id, benchmark, model, backend, condition, replicate, concat_ws('|', backend, '', '', '', '') as group_key
    from {{ ref(m) }}
    where run_id not in (select run_id from {{ ref('stg_harness__runs') }})
{%- endfor %}
)
select
    run_id::varchar as run_id,
    benchmark::varchar as benchmark,
    model::varchar as model,
    backend::varchar as backend,
    coalesce(condition, '')::varchar as condition,
    replicate::integer as replicate,
    (replicate + 1)::integer as epoch,
    concat_ws('|', benchmark, model, coalesce(condition, ''), left(md5(group_key), 8))::varchar as run_group
from runs
