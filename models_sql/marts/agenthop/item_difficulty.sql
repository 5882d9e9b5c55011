-- Item difficulty across the panel (paper Figure 4): per condition and item, how many panel members
-- (panel_members) have a trajectory for it (n_models) and how many answered it correctly (n_correct).
select
    m.condition::varchar as condition,
    t.sample_id::varchar as sample_id,
    any_value(t.cell)::varchar as cell,
    any_value(items.consensus_tier)::varchar as consensus_tier,
    any_value(t.reasoning_type)::varchar as reasoning_type,
    count(*)::integer as n_models,
    count_if(t.is_correct)::integer as n_correct,
    (count_if(t.is_correct)::double / count(*))::double as share_correct
from {{ ref('panel_members') }} as m
join {{ ref('fct_trajectory') }} as t on t.run_id = m.run_id
join {{ ref('stg_benchmark__items') }} as items on items.sample_id = t.sample_id
group by m.condition, t.sample_id
