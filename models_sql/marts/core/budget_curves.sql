-- docs/metrics.md#budget-curves: every run's primary metric had it been cut at a cap b, for every benchmark.
-- Per run, axis and cap: the mean over the run's final trajectories that have a value (the item's value of the
-- benchmark's primary metric in the catalogue, metric_defs and item_metric_values; without one, the score when
-- the run has scores, else correctness as 1 or 0) of the value of those that ended by answering (terminated_by =
-- 'answer') having used at most b, the others counting 0: an attempt that had not answered by b is
-- unanswered. Axes: tokens (total_tokens), turns (total_turns), tool points (budget_used, when the benchmark
-- spends any) and usd (the final attempt's tokens at the run's prices; priced runs only). Caps: 20 steps up to
-- the largest use among the benchmark's runs (whole numbers rounded up, repeats dropped), one grid per
-- benchmark and axis so runs compare cap for cap. The counting is the shared budget_truncated() macro.
-- A capped agent would have behaved differently (it might have answered sooner): this is what the stored
-- trajectories had achieved by b, not what a run with that cap would score.
with primary_values as (
    select v.run_id, v.sample_id, v.value
    from {{ ref('item_metric_values') }} as v
    join {{ ref('metric_defs') }} as d on d.benchmark = v.benchmark and d.metric = v.metric and d.is_primary
    where v.value is not null
),
final as (
    select
        t.run_id, t.sample_id, t.benchmark, t.terminated_by, t.total_tokens, t.total_turns, t.budget_used,
        t.prompt_tokens, t.completion_tokens, t.cache_read_tokens, t.cache_creation_tokens,
        coalesce(p.value, case when count(t.score) over (partition by t.run_id) > 0 then t.score
                               else t.is_correct::integer::double end) as value
    from {{ ref('int_core_trajectories_final') }} as t
    left join primary_values as p on p.run_id = t.run_id and p.sample_id = t.sample_id
),
usage as (
    select f.run_id, f.sample_id, f.benchmark, a.axis, a.axis_order, a.u,
           case when f.terminated_by = 'answer' then f.value end as value
    from final as f
    left join {{ ref('model_cost') }} as cost on cost.run_id = f.run_id and cost.pricing_found
    cross join lateral (
        select * from (values
            ('tokens', 1, f.total_tokens::double),
            ('turns', 2, f.total_turns::double),
            ('tool_points', 3, f.budget_used::double),
            ('usd', 4, (f.prompt_tokens * cost.input_per_m
                        + f.cache_read_tokens * cost.input_per_m * cost.cache_read_mult
                        + f.cache_creation_tokens * cost.input_per_m * cost.cache_write_mult
                        + f.completion_tokens * cost.output_per_m) / 1e6)
        ) as v(axis, axis_order, u)
    ) as a
    where f.value is not null
),
-- an axis a benchmark does not spend (no tool points) or cannot price has no curve
axis_max as (
    select benchmark, axis, axis_order, max(u) as max_u
    from usage
    group by benchmark, axis, axis_order
    having max(u) > 0
),
steps as (
    select distinct benchmark, axis, axis_order,
        case when axis = 'usd' then max_u * k / 20 else ceil(max_u * k / 20) end as b
    from axis_max, range(1, 21) as t(k)
),
grid as (
    select runs.run_id, steps.axis, steps.axis_order, steps.b
    from (select distinct run_id, benchmark from usage where u is not null) as runs
    join steps on steps.benchmark = runs.benchmark
),
-- a run without a price has no usd curve (its u is NULL): keep its trajectories out of that axis
usage_on_grid as (
    select usage.* from usage semi join grid on grid.run_id = usage.run_id and grid.axis = usage.axis
    where not (usage.axis = 'usd' and usage.u is null)
),
curve as (
    {{ budget_truncated('grid', 'usage_on_grid') | indent(4) }}
),
kinds as (
    select run_id, bool_and(value in (0, 1)) as is_binary from final where value is not null group by run_id
)
select
    runs.benchmark::varchar as benchmark,
    curve.run_id::varchar as run_id,
    curve.axis::varchar as axis,
    curve.axis_order::integer as axis_order,
    curve.b::double as b,
    curve.n_items::integer as n_items,
    curve.n_counted::integer as n_counted,
    curve.value_sum::double as value_sum,
    curve.value_sq_sum::double as value_sq_sum,
    (curve.value_sum / curve.n_items)::double as mean,
    kinds.is_binary::boolean as is_binary
from curve
join (select distinct run_id, benchmark from usage) as runs on runs.run_id = curve.run_id
join kinds on kinds.run_id = curve.run_id
