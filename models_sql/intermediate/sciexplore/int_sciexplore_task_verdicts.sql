-- What each judge found per (run, task) with any verdict (docs/sciexplore.md#task-outcome): the T1/T2
-- answer verdict, the T3 task's mean citation F (int_sciexplore_group_f) and the T4 task's counts
-- (int_sciexplore_t4_rows). The task outcome mart and the per-task metrics read it.
with answers as (
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
    select run_id, judge, task_id,
        sum(n_correct) as cells_correct, sum(n_cells) as cells_total,
        count(*) filter (where row_correct) as rows_correct, count(*) as rows_total,
        count(*) filter (where pk_matched) as pk_matched
    from {{ ref('int_sciexplore_t4_rows') }}
    group by run_id, judge, task_id
)
select
    run_id::varchar as run_id,
    judge::varchar as judge,
    task_id::varchar as task_id,
    any_value(verdict)::varchar as verdict,
    any_value(t3_f)::double as t3_f,
    any_value(cells_correct)::integer as cells_correct,
    any_value(cells_total)::integer as cells_total,
    any_value(rows_correct)::integer as rows_correct,
    any_value(rows_total)::integer as rows_total,
    any_value(pk_matched)::integer as pk_matched
from (
    select * from answers
    union all by name
    select * from t3
    union all by name
    select * from t4
)
group by run_id, judge, task_id
