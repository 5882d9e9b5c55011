-- docs/sciexplore.md#hop-accuracy: T1 per hop length: n tasks, C, I, N and F_em = 2C / (2C + 2I + N).
with counts as (
    select run_id, judge, hops,
        count(*) as n,
        count(*) filter (where verdict = 'correct') as correct,
        count(*) filter (where verdict = 'incorrect') as incorrect,
        count(*) filter (where verdict = 'not_attempted') as not_attempted
    from {{ ref('sciexplore_task_outcome') }}
    where type = 'T1'
    group by run_id, judge, hops
)
select
    run_id::varchar as run_id,
    judge::varchar as judge,
    hops::integer as hops,
    n::integer as n,
    correct::integer as correct,
    incorrect::integer as incorrect,
    not_attempted::integer as not_attempted,
    {{ sciexplore_fem('correct', 'incorrect', 'not_attempted') }}::double as f_em
from counts
