-- docs/sciexplore.md#summary: one row per (run, judge); fractions, 0 where a denominator is 0.
-- F_em = 2C / (2C + 2I + N) per type (T1, T2); t3_fcite = mean F over every citation group of every T3
-- task of the release (pooled over groups, not a mean of task means); T4 pooled over the run's T4
-- tasks: item recall = correct cells / ground-truth cells, row recall = fully correct rows / rows,
-- pk_recall = matched primary keys / rows, format_acc = share of T4 tasks with exactly the task's
-- columns; overall = 0.2 T1 + 0.2 T2 + 0.3 T3 + 0.3 T4 item recall.
with outcome as (
    select * from {{ ref('sciexplore_task_outcome') }}
),
counts as (
    select run_id, judge,
        count(*) as n_tasks,
        count(*) filter (where type = 'T1' and verdict = 'correct') as t1_correct,
        count(*) filter (where type = 'T1' and verdict = 'incorrect') as t1_incorrect,
        count(*) filter (where type = 'T1' and verdict = 'not_attempted') as t1_not_attempted,
        count(*) filter (where type = 'T2' and verdict = 'correct') as t2_correct,
        count(*) filter (where type = 'T2' and verdict = 'incorrect') as t2_incorrect,
        count(*) filter (where type = 'T2' and verdict = 'not_attempted') as t2_not_attempted,
        coalesce(sum(t4_cells_correct), 0) as cells_correct,
        coalesce(sum(t4_cells_total), 0) as cells_total,
        coalesce(sum(t4_rows_correct), 0) as rows_correct,
        coalesce(sum(t4_rows_total), 0) as rows_total,
        coalesce(sum(t4_pk_matched), 0) as pk_matched,
        count(*) filter (where type = 'T4') as n_t4,
        count(*) filter (where type = 'T4' and t4_format_ok) as n_format_ok
    from outcome
    group by run_id, judge
),
cite as (
    select run_id, judge, avg(f order by task_id, slot) as t3_fcite
    from {{ ref('int_sciexplore_group_f') }}
    group by run_id, judge
),
scores as (
    select counts.*,
        {{ sciexplore_fem('t1_correct', 't1_incorrect', 't1_not_attempted') }} as t1_fem,
        {{ sciexplore_fem('t2_correct', 't2_incorrect', 't2_not_attempted') }} as t2_fem,
        coalesce(cite.t3_fcite, 0.0) as t3_fcite,
        {{ sciexplore_ratio('cells_correct', 'cells_total') }} as t4_item_recall,
        {{ sciexplore_ratio('rows_correct', 'rows_total') }} as t4_row_recall,
        {{ sciexplore_ratio('pk_matched', 'rows_total') }} as pk_recall,
        {{ sciexplore_ratio('n_format_ok', 'n_t4') }} as format_acc
    from counts
    left join cite on cite.run_id = counts.run_id and cite.judge = counts.judge
)
select
    scores.run_id::varchar as run_id,
    scores.judge::varchar as judge,
    runs.model::varchar as model,
    runs.paradigm::varchar as paradigm,
    runs.replicate::integer as replicate,
    t1_fem::double as t1_fem,
    t2_fem::double as t2_fem,
    t3_fcite::double as t3_fcite,
    t4_item_recall::double as t4_item_recall,
    t4_row_recall::double as t4_row_recall,
    (0.2 * t1_fem + 0.2 * t2_fem + 0.3 * t3_fcite + 0.3 * t4_item_recall)::double as overall,
    format_acc::double as format_acc,
    pk_recall::double as pk_recall,
    n_tasks::integer as n_tasks,
    t1_correct::integer as t1_correct,
    t1_incorrect::integer as t1_incorrect,
    t1_not_attempted::integer as t1_not_attempted,
    t2_correct::integer as t2_correct,
    t2_incorrect::integer as t2_incorrect,
    t2_not_attempted::integer as t2_not_attempted
from scores
join {{ ref('stg_sciexplore__runs') }} as runs on runs.run_id = scores.run_id
