{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- docs/metrics.md#cost cost per run: tokens of ALL attempts (failed attempts were billed too) times the seed price
-- table model_prices (the reference harness's price table): the first prefix in list order that the provider model id
-- (config_json.model_id; else the model name) starts with (case-sensitive). Unknown models, and every simulated model (backend 'sim', whatever its name),
-- have pricing_found = false and NULL costs. Each part is rounded to 6 decimals; total_usd is the
-- rounded sum of the unrounded parts, as in the reference's compute_cost.
with tokens as (
    select
        run_id,
        count(*) as n_attempts,
        count_if(is_final) as n_items,
        sum(prompt_tokens) as prompt_tokens,
        sum(completion_tokens) as completion_tokens,
        sum(cache_read_tokens) as cache_read_tokens,
        sum(cache_creation_tokens) as cache_creation_tokens
    from {{ ref('stg_harness__trajectories') }}
    where {{ runs_to_build(plan, 'run_id') }}
    group by run_id
),
matched_price as (
    select runs.run_id, prices.*
    from {{ ref('stg_harness__runs') }} as runs
    join {{ ref('model_prices') }} as prices
        -- the provider's model id when the run recorded one (a display name such as `my-model` need not
        -- be priceable), else the model name (reference-JSON imports, whose folder is the model id)
        on starts_with(coalesce(json_extract_string(runs.config_json, '$.model_id'), runs.model), prices.prefix)
    where not runs.is_simulated and {{ runs_to_build(plan, 'runs.run_id') }}
    qualify row_number() over (partition by runs.run_id order by prices.price_order) = 1
),
costed as (
    select
        runs.run_id,
        runs.model,
        runs.backend,
        runs.condition,
        runs.replicate,
        runs.is_simulated,
        matched_price.run_id is not null as pricing_found,
        matched_price.prefix as price_prefix,
        matched_price.provider,
        matched_price.input_per_m,
        matched_price.output_per_m,
        matched_price.cache_read_mult,
        matched_price.cache_write_mult,
        coalesce(tokens.n_attempts, 0) as n_attempts,
        coalesce(tokens.n_items, 0) as n_items,
        coalesce(tokens.prompt_tokens, 0) as prompt_tokens,
        coalesce(tokens.completion_tokens, 0) as completion_tokens,
        coalesce(tokens.cache_read_tokens, 0) as cache_read_tokens,
        coalesce(tokens.cache_creation_tokens, 0) as cache_creation_tokens,
        coalesce(tokens.prompt_tokens, 0) * matched_price.input_per_m / 1e6 as regular_input_raw,
        coalesce(tokens.cache_read_tokens, 0) * matched_price.input_per_m * matched_price.cache_read_mult / 1e6
            as cache_read_raw,
        coalesce(tokens.cache_creation_tokens, 0) * matched_price.input_per_m * matched_price.cache_write_mult / 1e6
            as cache_creation_raw,
        coalesce(tokens.completion_tokens, 0) * matched_price.output_per_m / 1e6 as output_raw
    from {{ ref('stg_harness__runs') }} as runs
    left join matched_price on matched_price.run_id = runs.run_id
    left join tokens on tokens.run_id = runs.run_id
    where {{ runs_to_build(plan, 'runs.run_id') }}
)
select
    run_id::varchar as run_id,
    model::varchar as model,
    backend::varchar as backend,
    condition::varchar as condition,
    replicate::integer as replicate,
    is_simulated::boolean as is_simulated,
    pricing_found::boolean as pricing_found,
    price_prefix::varchar as price_prefix,
    provider::varchar as provider,
    input_per_m::double as input_per_m,
    output_per_m::double as output_per_m,
    cache_read_mult::double as cache_read_mult,
    cache_write_mult::double as cache_write_mult,
    n_attempts::integer as n_attempts,
    n_items::integer as n_items,
    prompt_tokens::bigint as prompt_tokens,
    completion_tokens::bigint as completion_tokens,
    cache_read_tokens::bigint as cache_read_tokens,
    cache_creation_tokens::bigint as cache_creation_tokens,
    (prompt_tokens + cache_read_tokens + cache_creation_tokens)::bigint as total_input_tokens,
    (cache_read_tokens::double / nullif(prompt_tokens + cache_read_tokens + cache_creation_tokens, 0))::double
        as cache_hit_rate,
    round(regular_input_raw, 6)::double as regular_input_usd,
    round(cache_read_raw, 6)::double as cache_read_usd,
    round(cache_creation_raw, 6)::double as cache_creation_usd,
    round(output_raw, 6)::double as output_usd,
    round(regular_input_raw + cache_read_raw + cache_creation_raw + output_raw, 6)::double as total_usd,
    ((regular_input_raw + cache_read_raw + cache_creation_raw + output_raw) / nullif(n_items, 0))::double
        as usd_per_item
from costed
