-- docs/metrics.md#imported-run-summary: one row per run imported without trajectories (a benchmark's
-- benchmark_imported_run_models() without a raw.runs row, e.g. SciExplore's responses files), with the
-- columns of run_summary the shared pages read: items with an outcome (n), how they ended, tokens and cost.
-- all_tokens = total_tokens = prompt + completion (such files record no cache tokens); total_usd = prompt
-- and completion tokens times the price of model_prices' first prefix the model name starts with (rounded
-- to 6 decimals), NULL for an unknown or simulated model.
{%- set usage = benchmark_imported_usage_models() %}
with usage as (
{%- for m in usage %}
    select * from {{ ref(m) }}
    {%- if not loop.last %}
    union all
    {%- endif %}
{%- endfor %}
{%- if not usage %}
    select null::varchar as run_id, null::boolean as is_simulated, 0 as n, 0 as n_answer, 0 as n_limit, 0 as n_error,
        0 as prompt_tokens, 0 as completion_tokens
    where false
{%- endif %}
),
imported as (
    select runs.*, usage.* exclude (run_id)
    from {{ ref('int_core_runs') }} as runs
    join usage on usage.run_id = runs.run_id
    where runs.run_id not in (select run_id from {{ ref('stg_harness__runs') }})
),
priced as (
    select imported.run_id, prices.input_per_m, prices.output_per_m
    from imported
    join {{ ref('model_prices') }} as prices on starts_with(imported.model, prices.prefix)
    where not coalesce(imported.is_simulated, false)
    qualify row_number() over (partition by imported.run_id order by prices.price_order) = 1
)
select
    imported.run_id::varchar as run_id,
    imported.benchmark::varchar as benchmark,
    imported.model::varchar as model,
    imported.backend::varchar as backend,
    imported.condition::varchar as condition,
    imported.replicate::integer as replicate,
    imported.run_group::varchar as run_group,
    imported.is_simulated::boolean as is_simulated,
    imported.n::integer as n,
    (imported.prompt_tokens + imported.completion_tokens)::bigint as total_tokens,
    (imported.prompt_tokens + imported.completion_tokens)::bigint as all_tokens,
    round(imported.prompt_tokens * priced.input_per_m / 1e6 + imported.completion_tokens * priced.output_per_m / 1e6, 6)::double
        as total_usd,
    imported.n_answer::integer as n_answer,
    imported.n_limit::integer as n_limit,
    imported.n_error::integer as n_error
from imported
left join priced on priced.run_id = imported.run_id
