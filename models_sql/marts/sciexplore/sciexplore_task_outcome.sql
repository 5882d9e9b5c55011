-- docs/sciexplore.md#task-outcome: one row per task of the release per (run, judge), tasks without a
-- response or without verdicts included (zeros). status = the response's status (not_attempted when
-- the run has no response to the task); verdict = the judge's T1/T2 answer verdict (not_attempted when
-- it has none); t3_f = mean F of the task's citation groups; the t4_* counts are per task;
-- n_search_calls counts web_search, scholar_search and db_search calls of the trace.
with tasks as (
    select * from {{ ref('stg_sciexplore__tasks') }}
),
responses as (
    select * from {{ ref('stg_sciexplore__responses') }}
),
verdicts as (
    select * from {{ ref('int_sciexplore_task_verdicts') }}
),
searches as (
    select run_id, task_id, count(*) filter (where is_search) as n_search_calls
    from {{ ref('stg_sciexplore__trace') }}
    group by run_id, task_id
)
select
    rj.run_id::varchar as run_id,
    rj.judge::varchar as judge,
    tasks.task_id::varchar as task_id,
    tasks.type::varchar as type,
    tasks.domain::varchar as domain,
    tasks.hops::integer as hops,
    coalesce(responses.status, 'not_attempted')::varchar as status,
    (responses.task_id is not null)::boolean as has_response,
    (case when tasks.type in ('T1', 'T2') then coalesce(verdicts.verdict, 'not_attempted') end)::varchar as verdict,
    (case when tasks.type = 'T3' then coalesce(verdicts.t3_f, 0.0) end)::double as t3_f,
    (case when tasks.type = 'T4' then coalesce(verdicts.cells_correct, 0) end)::integer as t4_cells_correct,
    (case when tasks.type = 'T4' then coalesce(verdicts.cells_total, 0) end)::integer as t4_cells_total,
    (case when tasks.type = 'T4' then coalesce(verdicts.rows_correct, 0) end)::integer as t4_rows_correct,
    (case when tasks.type = 'T4' then coalesce(verdicts.rows_total, 0) end)::integer as t4_rows_total,
    (case when tasks.type = 'T4' then coalesce(verdicts.pk_matched, 0) end)::integer as t4_pk_matched,
    (case when tasks.type = 'T4' then coalesce(responses.format_ok, false) end)::boolean as t4_format_ok,
    coalesce(searches.n_search_calls, 0)::integer as n_search_calls
from {{ ref('int_sciexplore_run_judges') }} as rj
cross join tasks
left join responses on responses.run_id = rj.run_id and responses.task_id = tasks.task_id
left join verdicts on verdicts.run_id = rj.run_id and verdicts.judge = rj.judge and verdicts.task_id = tasks.task_id
left join searches on searches.run_id = rj.run_id and searches.task_id = tasks.task_id
