-- docs/sciexplore.md#judge-agreement: for every pair of judges (judge_a < judge_b) and unit kind, over
-- the units both judged: n_units, n_agree, observed agreement p_o, chance agreement
-- p_e = sum over verdicts v of share_a(v) * share_b(v), and Cohen's kappa = (p_o - p_e) / (1 - p_e)
-- (NULL when p_e = 1: both judges gave one and the same verdict to every unit).
with pairs as (
    select * from {{ ref('int_sciexplore_judge_pairs') }}
),
totals as (
    select judge_a, judge_b, unit, count(*) as n_units, count(*) filter (where verdict_a = verdict_b) as n_agree
    from pairs
    group by judge_a, judge_b, unit
),
marg_a as (
    select judge_a, judge_b, unit, verdict_a as verdict, count(*) as n from pairs group by all
),
marg_b as (
    select judge_a, judge_b, unit, verdict_b as verdict, count(*) as n from pairs group by all
),
chance as (
    select marg_a.judge_a, marg_a.judge_b, marg_a.unit, sum(marg_a.n * marg_b.n) as n_ab
    from marg_a
    join marg_b using (judge_a, judge_b, unit, verdict)
    group by all
),
scored as (
    select totals.*,
        totals.n_agree::double / totals.n_units as p_observed,
        coalesce(chance.n_ab, 0)::double / (totals.n_units * totals.n_units) as p_expected
    from totals
    left join chance using (judge_a, judge_b, unit)
)
select
    judge_a::varchar as judge_a,
    judge_b::varchar as judge_b,
    unit::varchar as unit,
    n_units::integer as n_units,
    n_agree::integer as n_agree,
    p_observed::double as p_observed,
    p_expected::double as p_expected,
    (case when p_expected >= 1.0 then null else (p_observed - p_expected) / (1.0 - p_expected) end)::double as kappa
from scored
