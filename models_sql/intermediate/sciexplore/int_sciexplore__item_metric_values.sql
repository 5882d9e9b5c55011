-- docs/sciexplore.md#per-task-metrics: every judge's metrics per task a run answered (has a response to),
-- named '<judge>.<metric>' (the catalogue rows: harness/benchmarks/sciexplore/metrics.py):
--   answer_correct  T1/T2: the judge's answer verdict is correct (1/0; no verdict: 0)
--   t3_f            T3: mean F of the task's citation groups (int_sciexplore_group_f; none: 0)
--   t4_item_recall  T4: correct cells / ground-truth cells of the task (0 when it has none)
--   task_score      every task: the one of the three its type has
with responses as (
    select run_id, task_id from {{ ref('stg_sciexplore__responses') }}
),
answers as (
    select run_id, judge, task_id, verdict
    from {{ ref('stg_sciexplore__judgments') }}
    where unit = 'answer'
),
t3 as (
    select run_id, judge, task_id, avg(f order by slot) as t3_f
    from {{ ref('int_sciexplore_group_f') }}
    group by run_id, judge, task_id
),
t4 as (
    select run_id, judge, task_id, sum(n_correct) as cells_correct, sum(n_cells) as cells_total
    from {{ ref('int_sciexplore_t4_rows') }}
    group by run_id, judge, task_id
),
per_task as (
    select
        rj.run_id,
        rj.judge,
        tasks.task_id,
        case when tasks.type in ('T1', 'T2') then (coalesce(answers.verdict, '') = 'correct')::integer::double end
            as answer_correct,
        case when tasks.type = 'T3' then coalesce(t3.t3_f, 0.0) end as t3_f,
        case when tasks.type = 'T4'
            then {{ sciexplore_ratio('coalesce(t4.cells_correct, 0)', 'coalesce(t4.cells_total, 0)') }} end
            as t4_item_recall
    from {{ ref('int_sciexplore_run_judges') }} as rj
    join responses on responses.run_id = rj.run_id
    join {{ ref('stg_sciexplore__tasks') }} as tasks on tasks.task_id = responses.task_id
    left join answers on answers.run_id = rj.run_id and answers.judge = rj.judge and answers.task_id = tasks.task_id
    left join t3 on t3.run_id = rj.run_id and t3.judge = rj.judge and t3.task_id = tasks.task_id
    left join t4 on t4.run_id = rj.run_id and t4.judge = rj.judge and t4.task_id = tasks.task_id
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
