{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- docs/metrics.md#accuracy-slices per run and cell (st_d1, st_d2, mt_d1, mt_d2; cells with at least one item): n, correct,
-- accuracy and the Wilson 95% interval (z = 1.959964). The paper prints accuracy ± (wilson_hi - accuracy).
with counts as (
    select run_id, cell, question_type, depth, count(*) as n, count_if(is_correct) as correct
    from {{ ref('fct_trajectory') }}
    where {{ runs_to_build(plan, 'run_id') }}
    group by all
)
select
    run_id::varchar as run_id,
    cell::varchar as cell,
    question_type::varchar as question_type,
    depth::integer as depth,
    n::integer as n,
    correct::integer as correct,
    (correct::double / n)::double as accuracy,
    ({{ wilson_bound('correct', 'n', '-') }})::double as wilson_lo,
    ({{ wilson_bound('correct', 'n', '+') }})::double as wilson_hi
from counts
