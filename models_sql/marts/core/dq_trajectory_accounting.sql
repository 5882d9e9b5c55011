{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- Impossible or inconsistent accounting in the loaded trajectories of every benchmark (all attempts, not only
-- final ones): the shared checks (int_core_trajectory_checks) and each benchmark's own (the models listed in
-- benchmark_trajectory_check_models(), dbt_support/macros/benchmarks.sql). One row per (run_id, sample_id,
-- attempt, check_name) that fails; expected_value is what the other tables imply, observed_value what the
-- trajectory row (or the check) says; column_name the column the check is about.
-- severity: 'error' for what agenthop-ingest refuses by default (data that got here only through
-- --accept-dq or around ingest): budget_used_vs_call_costs, total_tokens_vs_components,
-- unknown_call_status, invalid_terminated_by, a negative budget_used, final_attempt_count of a finished
-- run; 'warn' for the rest. The model's data tests fail `dbt build` on error rows and warn on the others.
{%- set models = ['int_core_trajectory_checks'] + benchmark_trajectory_check_models() %}
with checks as (
{%- for m in models %}
    select run_id, sample_id, attempt, is_final, check_name, column_name, expected_value, observed_value
    from {{ ref(m) }}
    where {{ runs_to_build(plan, 'run_id') }}
{%- if not loop.last %}
    union all
{%- endif %}
{%- endfor %}
)
select
    checks.run_id::varchar as run_id,
    checks.sample_id::varchar as sample_id,
    checks.attempt::integer as attempt,
    checks.is_final::boolean as is_final,
    checks.check_name::varchar as check_name,
    checks.expected_value::bigint as expected_value,
    checks.observed_value::bigint as observed_value,
    (case
        when checks.check_name in (
            'budget_used_vs_call_costs', 'total_tokens_vs_components', 'unknown_call_status', 'invalid_terminated_by'
        ) then 'error'
        when checks.check_name = 'budget_used_out_of_range' and checks.observed_value < 0 then 'error'
        when checks.check_name = 'final_attempt_count' and not coalesce(runs.is_partial, false) then 'error'
        else 'warn'
    end)::varchar as severity,
    checks.column_name::varchar as column_name
from checks
left join {{ ref('stg_harness__runs') }} as runs on runs.run_id = checks.run_id
