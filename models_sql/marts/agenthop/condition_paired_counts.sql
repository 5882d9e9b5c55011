-- Paired counts behind the exact McNemar p of the condition ablations (paper Tables 4 and 18): per model
-- and condition pair (closed_book -> no_search, no_search -> full, closed_book -> full), the model's
-- panel run under each condition (lowest replicate, panel_members) compared on the items both have:
-- n, from_only (right under condition_from, wrong under condition_to), to_only (the reverse), and each
-- run's accuracy on those shared items.
with pairs as (
    select * from (values
        ('closed_book', 'no_search', 1),
        ('no_search', 'full', 2),
        ('closed_book', 'full', 3)
    ) as t(condition_from, condition_to, pair_order)
),
runs as (
    select pairs.*, a.model, a.run_id as run_from, b.run_id as run_to
    from pairs
    join {{ ref('panel_members') }} as a on a.condition = pairs.condition_from
    join {{ ref('panel_members') }} as b on b.condition = pairs.condition_to and b.model = a.model
),
joined as (
    select runs.model, runs.condition_from, runs.condition_to, runs.pair_order, runs.run_from, runs.run_to,
           ta.is_correct as c_from, tb.is_correct as c_to
    from runs
    join {{ ref('fct_trajectory') }} as ta on ta.run_id = runs.run_from
    join {{ ref('fct_trajectory') }} as tb on tb.run_id = runs.run_to and tb.sample_id = ta.sample_id
)
select
    model::varchar as model,
    condition_from::varchar as condition_from,
    condition_to::varchar as condition_to,
    pair_order::integer as pair_order,
    run_from::varchar as run_from,
    run_to::varchar as run_to,
    count(*)::integer as n,
    count_if(c_from and not c_to)::integer as from_only,
    count_if(c_to and not c_from)::integer as to_only,
    avg(c_from::integer)::double as accuracy_from_shared,
    avg(c_to::integer)::double as accuracy_to_shared
from joined
group by all
