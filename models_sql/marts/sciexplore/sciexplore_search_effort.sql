-- docs/sciexplore.md#search-effort: search calls (web_search, scholar_search, db_search) per run and task
-- type, their mean per task, and the run's score on that type under the judge (T1/T2 F_em, T3 F_cite,
-- T4 item recall), the pair the report correlates across runs (Spearman).
with effort as (
    select run_id, judge, type, count(*) as n_tasks, sum(n_search_calls) as search_calls
    from {{ ref('sciexplore_task_outcome') }}
    group by run_id, judge, type
)
select
    effort.run_id::varchar as run_id,
    effort.judge::varchar as judge,
    effort.type::varchar as type,
    effort.n_tasks::integer as n_tasks,
    effort.search_calls::integer as search_calls,
    (effort.search_calls::double / effort.n_tasks)::double as mean_search_calls,
    (case effort.type
        when 'T1' then summary.t1_fem when 'T2' then summary.t2_fem
        when 'T3' then summary.t3_fcite else summary.t4_item_recall end)::double as score
from effort
join {{ ref('sciexplore_summary') }} as summary
    on summary.run_id = effort.run_id and summary.judge = effort.judge
