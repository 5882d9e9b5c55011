-- Closed-book accuracy by item slice (paper Table 19): over the closed_book panel runs (panel_members),
-- per tier (and 'all' for the whole panel), slice (seed_year = publication year of the item's seed paper,
-- venue) and value: n_models, n (trajectories), correct, accuracy. Models without a tier count as
-- 'untiered'.
with traj as (
    select
        coalesce(m.tier, 'untiered') as tier, m.model, t.sample_id, t.is_correct,
        items.venue, seed.year as seed_year
    from {{ ref('panel_members') }} as m
    join {{ ref('fct_trajectory') }} as t on t.run_id = m.run_id
    join {{ ref('stg_benchmark__items') }} as items on items.sample_id = t.sample_id
    left join {{ ref('stg_benchmark__graph_nodes') }} as seed
        on seed.sample_id = items.sample_id and seed.paper_id = items.seed_paper_id
    where m.condition = 'closed_book'
),
long as (
    select tier, model, is_correct, 'seed_year' as slice, 1 as slice_order, coalesce(seed_year::varchar, 'unknown') as value
    from traj
    union all
    select tier, model, is_correct, 'venue', 2, coalesce(venue, 'unknown') from traj
),
tiered as (
    select tier, model, is_correct, slice, slice_order, value from long
    union all
    select 'all', model, is_correct, slice, slice_order, value from long
)
select
    tier::varchar as tier,
    slice::varchar as slice,
    min(slice_order)::integer as slice_order,
    value::varchar as value,
    count(distinct model)::integer as n_models,
    count(*)::integer as n,
    count_if(is_correct)::integer as correct,
    (count_if(is_correct)::double / count(*))::double as accuracy
from tiered
group by tier, slice, value
