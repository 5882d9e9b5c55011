-- docs/sciexplore.md#rerun-variance: runs sharing model and paradigm (their replicates) per judge and
-- metric: n_runs, mean (a fraction) and the population variance (ddof = 0) of the percentage scores, in
-- percentage points squared (the one value of the SciExplore marts that is not a fraction).
with long as (
    select model, paradigm, judge, run_id, 't1' as metric, 1 as metric_order, t1_fem as value
    from {{ ref('sciexplore_summary') }}
    union all
    select model, paradigm, judge, run_id, 't2', 2, t2_fem from {{ ref('sciexplore_summary') }}
    union all
    select model, paradigm, judge, run_id, 't3', 3, t3_fcite from {{ ref('sciexplore_summary') }}
    union all
    select model, paradigm, judge, run_id, 't4_item', 4, t4_item_recall from {{ ref('sciexplore_summary') }}
    union all
    select model, paradigm, judge, run_id, 't4_row', 5, t4_row_recall from {{ ref('sciexplore_summary') }}
    union all
    select model, paradigm, judge, run_id, 'overall', 6, overall from {{ ref('sciexplore_summary') }}
)
select
    model::varchar as model,
    paradigm::varchar as paradigm,
    judge::varchar as judge,
    metric::varchar as metric,
    min(metric_order)::integer as metric_order,
    count(*)::integer as n_runs,
    -- ordered aggregates: float sums in a fixed order give the same bits on every rebuild
    avg(value order by run_id)::double as mean,
    var_pop(100.0 * value order by run_id)::double as variance
from long
group by model, paradigm, judge, metric
