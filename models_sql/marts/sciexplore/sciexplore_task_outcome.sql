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
    select run_id, judge, task_id,
        sum(n_correct) as cells_correct, sum(n_cells) as cells_total,
        count(*) filter (where row_correct) as rows_correct, count(*) as rows_total,
        count(*) filter (where pk_matched) as pk_matched
    from {{ ref('int_sciexplore_t4_rows') }}
    group by run_id, judge, task_id
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
    (case when tasks.type in ('T1', 'T2') then coalesce(answers.verdict, 'not_attempted') end)::varchar as verdict,
    (case when tasks.type = 'T3' then coalesce(t3.t3_f, 0.0) end)::double as t3_f,
    (case when tasks.type = 'T4' then coalesce(t4.cells_correct, 0) end)::integer as t4_cells_correct,
    (case when tasks.type = 'T4' then coalesce(t4.cells_total, 0) end)::integer as t4_cells_total,
    (case when tasks.type = 'T4' then coalesce(t4.rows_correct, 0) end)::integer as t4_rows_correct,
    (case when tasks.type = 'T4' then coalesce(t4.rows_total, 0) end)::integer as t4_rows_total,
    (case when tasks.type = 'T4' then coalesce(t4.pk_matched, 0) end)::integer as t4_pk_matched,
    (case when tasks.type = 'T4' then coalesce(responses.format_ok, false) end)::boolean as t4_format_ok,
    coalesce(searches.n_search_calls, 0)::integer as n_search_calls
from {{ ref('int_sciexplore_run_judges') }} as rj
cross join tasks
left join responses on responses.run_id = rj.run_id and responses.task_id = tasks.task_id
left join answers on answers.run_id = rj.run_id and answers.judge = rj.judge and answers.task_id = tasks.task_id
left join t3 on t3.run_id = rj.run_id and t3.judge = rj.judge and t3.task_id = tasks.task_id
left join t4 on t4.run_id = rj.run_id and t4.judge = rj.judge and t4.task_id = tasks.task_id
left join searches on searches.run_id = rj.run_id and searches.task_id = tasks.task_id
