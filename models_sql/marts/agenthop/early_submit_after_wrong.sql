{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- Early submit after a wrong paper (docs/metrics.md#early-submit), per run: a final trajectory qualifies when it has a
-- delivered non-gold read at call position k and a submit_answer call (any status) at a position in
-- (k, k+3] (positions = 0-based order by seq, calls of the same turn included).
select
    run_id::varchar as run_id,
    count(*)::integer as n_items,
    count_if(n_wrong_paper_reads > 0)::integer as n_with_wrong_read,
    count_if(early_submit_after_wrong)::integer as n_early_submit,
    avg(early_submit_after_wrong::integer)::double as share,
    (count_if(early_submit_after_wrong)::double / nullif(count_if(n_wrong_paper_reads > 0), 0))::double
        as share_of_wrong_read,
    count_if(early_submit_after_wrong and is_correct)::integer as n_early_submit_correct,
    avg(case when early_submit_after_wrong then is_correct::integer end)::double as accuracy_early_submit,
    avg(case when not early_submit_after_wrong then is_correct::integer end)::double as accuracy_other
from {{ ref('fct_trajectory') }}
where {{ runs_to_build(plan, 'run_id') }}
group by run_id
