-- docs/sciexplore.md#t4-recall: one row per (run, judge, T4 ground-truth row): its cells, how many the
-- judge found correct, whether its primary-key cell is correct (the row was matched) and whether every
-- cell is correct. A ground-truth row no predicted row matched has no verdicts: nothing correct.
with verdicts as (
    select run_id, judge, task_id, row_key, column_name
    from {{ ref('stg_sciexplore__judgments') }}
    where unit = 'cell' and verdict = 'correct'
)
select
    rj.run_id::varchar as run_id,
    rj.judge::varchar as judge,
    cells.task_id::varchar as task_id,
    cells.row_key::varchar as row_key,
    count(*)::integer as n_cells,
    count(verdicts.column_name)::integer as n_correct,
    coalesce(bool_or(cells.is_primary_key and verdicts.column_name is not null), false)::boolean as pk_matched,
    (count(verdicts.column_name) = count(*))::boolean as row_correct
from {{ ref('int_sciexplore_run_judges') }} as rj
cross join {{ ref('stg_sciexplore__t4_cells') }} as cells
left join verdicts
    on verdicts.run_id = rj.run_id and verdicts.judge = rj.judge and verdicts.task_id = cells.task_id
    and verdicts.row_key = cells.row_key and verdicts.column_name = cells.column_name
group by rj.run_id, rj.judge, cells.task_id, cells.row_key
