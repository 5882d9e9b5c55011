-- Paired counts behind the exact McNemar tests of the paper's panel tables (Tables 2 and 12): for every
-- condition and ordered pair of panel members (model_a <> model_b), on three axes:
--   accuracy       all items both runs have;
--   conversion_st  ST items both runs recalled (paper_recall in both);
--   conversion_mt  MT items both runs recalled.
-- n = items in the test, a_only = items A got right and B wrong, b_only = the reverse. The p-values are
-- computed in the report layer (reports/stats.py, scipy's binomial test on a_only of a_only + b_only).
with members as (
    select condition, model, run_id from {{ ref('panel_members') }}
),
traj as (
    select m.condition, m.model, t.sample_id, t.question_type, t.is_correct, t.paper_recall
    from members as m
    join {{ ref('fct_trajectory') }} as t on t.run_id = m.run_id
),
pairs as (
    select
        a.condition, a.model as model_a, b.model as model_b, a.question_type,
        a.is_correct as ca, b.is_correct as cb, a.paper_recall and b.paper_recall as both_recalled
    from traj as a
    join traj as b on b.condition = a.condition and b.sample_id = a.sample_id and b.model <> a.model
),
axes as (
    select * from (values ('accuracy', 1), ('conversion_st', 2), ('conversion_mt', 3)) as t(axis, axis_order)
),
model_pairs as (
    select a.condition, a.model as model_a, b.model as model_b
    from members as a join members as b on b.condition = a.condition and b.model <> a.model
),
counts as (
    select condition, model_a, model_b, 'accuracy' as axis,
           count(*) as n, count_if(ca and not cb) as a_only, count_if(cb and not ca) as b_only
    from pairs group by all
    union all
    select condition, model_a, model_b, 'conversion_st',
           count(*), count_if(ca and not cb), count_if(cb and not ca)
    from pairs where question_type = 'ST' and both_recalled group by all
    union all
    select condition, model_a, model_b, 'conversion_mt',
           count(*), count_if(ca and not cb), count_if(cb and not ca)
    from pairs where question_type = 'MT' and both_recalled group by all
)
select
    model_pairs.condition::varchar as condition,
    model_pairs.model_a::varchar as model_a,
    model_pairs.model_b::varchar as model_b,
    axes.axis::varchar as axis,
    axes.axis_order::integer as axis_order,
    coalesce(counts.n, 0)::integer as n,
    coalesce(counts.a_only, 0)::integer as a_only,
    coalesce(counts.b_only, 0)::integer as b_only
from model_pairs
cross join axes
left join counts
    on counts.condition = model_pairs.condition and counts.model_a = model_pairs.model_a
    and counts.model_b = model_pairs.model_b and counts.axis = axes.axis
