-- Within-family generation gap (paper Figure 2): per condition and family, over the panel members
-- (panel_members) with a generation, each pair of consecutive generations (ordered numerically when
-- every generation of the family is a number, else as text): the mean accuracy of the family's members
-- of each generation and delta_pp = 100 * (accuracy_to - accuracy_from).
with members as (
    select m.condition, m.family, m.generation, m.model, s.accuracy
    from {{ ref('panel_members') }} as m
    join {{ ref('model_summary') }} as s on s.run_id = m.run_id
    where m.family is not null and m.generation is not null
),
per_generation as (
    select condition, family, generation, count(*) as n_models, avg(accuracy order by model) as accuracy,  -- ordered: stable bits
           string_agg(model, ', ' order by model) as models
    from members
    group by all
),
numeric_families as (
    select condition, family, bool_and(try_cast(generation as double) is not null) as all_numeric
    from per_generation
    group by all
),
ordered as (
    select g.*,
           row_number() over (
               partition by g.condition, g.family
               order by case when f.all_numeric then try_cast(g.generation as double) end, g.generation
           ) as generation_rank
    from per_generation as g
    join numeric_families as f on f.condition = g.condition and f.family = g.family
)
select
    a.condition::varchar as condition,
    a.family::varchar as family,
    a.generation::varchar as generation_from,
    b.generation::varchar as generation_to,
    a.generation_rank::integer as step,
    a.models::varchar as models_from,
    b.models::varchar as models_to,
    a.n_models::integer as n_models_from,
    b.n_models::integer as n_models_to,
    a.accuracy::double as accuracy_from,
    b.accuracy::double as accuracy_to,
    (100.0 * (b.accuracy - a.accuracy))::double as delta_pp
from ordered as a
join ordered as b
    on b.condition = a.condition and b.family = a.family and b.generation_rank = a.generation_rank + 1
