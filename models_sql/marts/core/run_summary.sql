{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- docs/metrics.md#run-summary: one row per run of any benchmark, over the shared columns of its final
-- trajectories: n, mean score (trajectories with a score), accuracy, tokens (total_tokens, the caps' quantity,
-- and all_tokens, every token the provider processed: docs/metrics.md#tokens), turns, cost, terminations.
with per_run as (
    select
        run_id,
        any_value(benchmark) as benchmark,
        any_value(model) as model,
        any_value(backend) as backend,
        any_value(condition) as condition,
        any_value(replicate) as replicate,
        any_value(is_simulated) as is_simulated,
        count(*) as n,
        count(score) as n_scored,
        avg(score order by sample_id) as mean_score,  -- ordered: the same bits on every build
        avg(is_correct::integer) as accuracy,
        sum(total_tokens) as total_tokens,
        sum(prompt_tokens + cache_read_tokens + cache_creation_tokens + completion_tokens) as all_tokens,
        avg(total_tokens) as avg_tokens,
        avg(total_turns) as avg_turns,
        count_if(terminated_by = 'answer') as n_answer,
        count_if(terminated_by = 'error') as n_error
    from {{ ref('int_core_trajectories_final') }}
    where {{ runs_to_build(plan, 'run_id') }}
    group by run_id
)
select
    per_run.run_id::varchar as run_id,
    per_run.benchmark::varchar as benchmark,
    per_run.model::varchar as model,
    per_run.backend::varchar as backend,
    per_run.condition::varchar as condition,
    per_run.replicate::integer as replicate,
    per_run.is_simulated::boolean as is_simulated,
    per_run.n::integer as n,
    per_run.n_scored::integer as n_scored,
    per_run.mean_score::double as mean_score,
    per_run.accuracy::double as accuracy,
    per_run.total_tokens::bigint as total_tokens,
    per_run.all_tokens::bigint as all_tokens,
    per_run.avg_tokens::double as avg_tokens,
    per_run.avg_turns::double as avg_turns,
    cost.total_usd::double as total_usd,
    per_run.n_answer::integer as n_answer,
    (per_run.n - per_run.n_answer - per_run.n_error)::integer as n_limit,
    per_run.n_error::integer as n_error,
    (per_run.n_answer::double / per_run.n)::double as answer_rate,
    ((per_run.n - per_run.n_answer - per_run.n_error)::double / per_run.n)::double as limit_rate,
    (per_run.n_error::double / per_run.n)::double as error_rate
from per_run
left join (select * from {{ ref('model_cost') }} where {{ runs_to_build(plan, 'run_id') }}) as cost on cost.run_id = per_run.run_id
