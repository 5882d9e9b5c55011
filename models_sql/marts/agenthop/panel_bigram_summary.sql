-- Bigram effects pooled over the panel (paper Table 13): per condition and each of the 49 ordered tool
-- pairs, over the panel members (panel_members) whose bigram_effects row has the bigram in at least one
-- trajectory: models_present, and panel_mean_effect_pp = the mean of effect_pp over those of them whose
-- effect is defined (the bigram is absent from at least one trajectory), n_models_with_effect of them.
-- How many effects are significant after Bonferroni over the 49 pairs (sig_count) needs Fisher's exact
-- test and is computed in the report layer from bigram_effects' 2x2 counts.
select
    m.condition::varchar as condition,
    b.bigram::varchar as bigram,
    any_value(b.prev_tool)::varchar as prev_tool,
    any_value(b.next_tool)::varchar as next_tool,
    count(*)::integer as n_models,
    count_if(b.n_with > 0)::integer as models_present,
    count(case when b.n_with > 0 then b.effect_pp end)::integer as n_models_with_effect,
    avg(case when b.n_with > 0 then b.effect_pp end order by m.run_id)::double as panel_mean_effect_pp  -- ordered: the same bits on every rebuild
from {{ ref('panel_members') }} as m
join {{ ref('bigram_effects') }} as b on b.run_id = m.run_id
group by m.condition, b.bigram
