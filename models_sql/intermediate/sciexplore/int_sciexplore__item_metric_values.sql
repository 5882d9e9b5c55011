-- docs/sciexplore.md#per-task-metrics: every judge's metrics per task a run answered (has a response to),
-- named '<judge>.<metric>' (the catalogue rows: harness/benchmarks/sciexplore/metrics.py):
--   answer_correct  T1/T2: the judge's answer verdict is correct (1/0; no verdict: 0)
--   t3_f            T3: mean F of the task's citation groups (int_sciexplore_group_f; none: 0)
--   t4_item_recall  T4: correct cells / ground-truth cells of the task (0 when it has none)
--   task_score      every task: the one of the three its type has
with per_task as (
    select
        rj.run_id,
        rj.judge,
        tasks.task_id,
        case when tasks.type in ('T1', 'T2') then (coalesce(verdicts.verdict, '') = 'correct')::integer::double end
            as answer_correct,
        case when tasks.type = 'T3' then coalesce(verdicts.t3_f, 0.0) end as t3_f,
        case when tasks.type = 'T4'
            then {{ sciexplore_ratio('coalesce(verdicts.cells_correct, 0)', 'coalesce(verdicts.cells_total, 0)') }} end
            as t4_item_recall
    from {{ ref('int_sciexplore_run_judges') }} as rj
    join {{ ref('stg_sciexplore__responses') }} as responses on responses.run_id = rj.run_id
    join {{ ref('stg_sciexplore__tasks') }} as tasks on tasks.task_id = responses.task_id
    left join {{ ref('int_sciexplore_task_verdicts') }} as verdicts
        on verdicts.run_id = rj.run_id and verdicts.judge = rj.judge and verdicts.task_id = tasks.task_id
),
long as (
    select run_id, judge, task_id, 'task_score' as metric, coalesce(answer_correct, t3_f, t4_item_recall) as value
    from per_task
    union all
    select run_id, judge, task_id, 'answer_correct', answer_correct from per_task where answer_correct is not null
    union all
    select run_id, judge, task_id, 't3_f', t3_f from per_task where t3_f is not null
    union all
    select run_id, judge, task_id, 't4_item_recall', t4_item_recall from per_task where t4_item_recall is not null
)
select
    run_id::varchar as run_id,
    task_id::varchar as sample_id,
    (judge || '.' || metric)::varchar as metric,
    value::double as value
from long
