-- docs/sciexplore.md#t3-citation-f: one row per (run, judge, T3 citation group). correct / incorrect =
-- the judge's verdicts on the system's predicted references for the slot; n_gt = ground-truth
-- references of the group; P = correct / (correct + incorrect), R = correct / n_gt (at most 1: another
-- judge may accept more predictions than the group has references),
-- F = 2PR / (P + R), each 0 where its denominator is 0 (a group without predictions has F = 0).
with groups as (
    select task_id, slot, count(*) as n_gt
    from {{ ref('stg_sciexplore__t3_references') }}
    group by task_id, slot
),
counts as (
    select run_id, judge, task_id, slot,
        count(*) filter (where verdict = 'correct') as n_correct,
        count(*) filter (where verdict = 'incorrect') as n_incorrect
    from {{ ref('stg_sciexplore__judgments') }}
    where unit = 'citation'
    group by run_id, judge, task_id, slot
),
pr as (
    select
        rj.run_id, rj.judge, groups.task_id, groups.slot, groups.n_gt,
        coalesce(counts.n_correct, 0) as n_correct,
        coalesce(counts.n_incorrect, 0) as n_incorrect
    from {{ ref('int_sciexplore_run_judges') }} as rj
    cross join groups
    left join counts
        on counts.run_id = rj.run_id and counts.judge = rj.judge
        and counts.task_id = groups.task_id and counts.slot = groups.slot
),
scored as (
    select *,
        case when n_correct + n_incorrect = 0 then 0.0 else n_correct::double / (n_correct + n_incorrect) end as p,
        case when n_gt = 0 then 0.0 else least(1.0, n_correct::double / n_gt) end as r
    from pr
)
select
    run_id::varchar as run_id,
    judge::varchar as judge,
    task_id::varchar as task_id,
    slot::varchar as slot,
    n_gt::integer as n_gt,
    n_correct::integer as n_correct,
    n_incorrect::integer as n_incorrect,
    p::double as p,
    r::double as r,
    (case when p + r = 0 then 0.0 else 2 * p * r / (p + r) end)::double as f
from scored
