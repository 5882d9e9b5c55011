{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- docs/metrics.md#accuracy-slices per run and reasoning type: n, correct, accuracy, Wilson 95% interval (z = 1.959964).
with counts as (
    select run_id, reasoning_type, count(*) as n, count_if(is_correct) as correct
    from {{ ref('fct_trajectory') }}
    where {{ runs_to_build(plan, 'run_id') }}
    group by all
)
select
    run_id::varchar as run_id,
    reasoning_type::varchar as reasoning_type,
    n::integer as n,
    correct::integer as correct,
    (correct::double / n)::double as accuracy,
    ({{ wilson_bound('correct', 'n', '-') }})::double as wilson_lo,
    ({{ wilson_bound('correct', 'n', '+') }})::double as wilson_hi
from counts
