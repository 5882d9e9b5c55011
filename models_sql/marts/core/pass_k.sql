-- docs/metrics.md#pass-k: reliability over the repeats of a run group, per (benchmark, model, condition,
-- run_group, metric) of every binary metric (metric_defs.kind) and k = 1 .. the group's repeats (runs).
-- Per item with n repeats that have a value, c of them 1: pass@k = 1 - C(n-c, k) / C(n, k) (some of k
-- repeats succeed) and pass^k = C(c, k) / C(n, k) (all of k succeed), the unbiased estimators; a ratio
-- C(a, k) / C(n, k) is the product over i < k of (a - i) / (n - i), 0 when a < k. An item counts for k
-- when n >= k; the group's values are means over those items (n_items). Intervals: 95% item bootstrap,
-- percentiles of the means of {{ var('pass_k_replicates', 1000) }} resamples of the items, each draw
-- fixed by the hash of the text 'seed:replicate:position' (DuckDB's hash of several arguments mixes small integers
-- too little: its draws repeated in pairs) so every build gives the same bounds. Rounded to 12 decimals.
--
-- Incremental by run group (docs/ingest.md#incremental-builds): a group's rows depend only on its own values,
-- so a build recomputes the groups that hold a changed run (added, replaced, or imported without a version)
-- and every group whose rows no longer match its values, whose items per (metric, k) differ from those
-- stored: a group that lost a run (deleted, or moved to another group), a metric that became binary or
-- stopped being one (metric_defs), a new group, a group that is gone.
{{ config(materialized='incremental', incremental_group='run_group') }}
{%- set replicates = var('pass_k_replicates', 1000) %}
{%- set seed = var('pass_k_seed', 20260) %}
{%- set plan = incremental_plan() %}
{%- set binary_values -%}
    select v.benchmark, v.model, v.condition, v.run_group, v.metric, v.run_id, v.sample_id, v.value
    from {{ ref('item_metric_values') }} as v
    join {{ ref('metric_defs') }} as defs on defs.benchmark = v.benchmark and defs.metric = v.metric
    where defs.kind = 'binary' and v.value is not null
{%- endset %}
{%- set items -%}
    select benchmark, model, condition, run_group, metric, sample_id,
        count(*) as n, sum(case when value = 1 then 1 else 0 end) as c
    from binary_values
    group by all
{%- endset %}
{%- set groups_sql -%}
    with binary_values as ({{ binary_values }}),
    items as ({{ items }}),
    sizes as (
        select benchmark, model, condition, run_group, metric, n, count(*) as n_with
        from items
        group by all
    ),
    -- the rows the group's values give: items with at least k values, per metric and k
    expected as (
        select benchmark, model, condition, run_group, metric, k, sum(n_with)::integer as n_items
        from (select *, unnest(range(1, n + 1)) as k from sizes)
        group by all
    ),
    stored as (
        select benchmark, model, condition, run_group, metric, k, n_items from {{ this }}
    )
    select run_group from binary_values where {{ runs_changed(plan, 'run_id') }}
    union all
    select run_group from ((select * from expected except select * from stored)
                           union all (select * from stored except select * from expected))
{%- endset %}
{%- set plan = incremental_groups(plan, groups_sql) %}
with binary_values as (
    {{ binary_values }} and {{ groups_to_build(plan, 'v.run_group') }}
),
items as (
    {{ items }}
),
groups as (
    select benchmark, model, condition, run_group, metric, count(distinct run_id) as n_repeats
    from binary_values
    group by all
),
ks as (
    select *, unnest(range(1, n_repeats + 1)) as k from groups
),
per_item as (
    select
        items.benchmark, items.model, items.condition, items.run_group, items.metric, ks.k, items.sample_id,
        1 - list_product(list_transform(range(ks.k), lambda i: greatest(items.n - items.c - i, 0)::double / (items.n - i)))
            as pass_at,
        list_product(list_transform(range(ks.k), lambda i: greatest(items.c - i, 0)::double / (items.n - i))) as pass_hat
    from items
    join ks
        on ks.benchmark = items.benchmark and ks.model = items.model and ks.condition = items.condition
        and ks.run_group = items.run_group and ks.metric = items.metric
    where items.n >= ks.k
),
per_group as (
    select benchmark, model, condition, run_group, metric, k,
        count(*) as n_items,
        avg(pass_at order by sample_id) as pass_at_k,
        avg(pass_hat order by sample_id) as pass_hat_k,
        list(pass_at order by sample_id) as at_values,
        list(pass_hat order by sample_id) as hat_values
    from per_item
    group by all
),
sizes as (
    select distinct n_items from per_group
),
-- the draws depend only on the number of items: made once per size, shared by every group of that size
draws as (
    select s.n_items, r.b,
        list_transform(range(s.n_items), lambda j: (hash(concat_ws(':', {{ seed }}, r.b, j)) % s.n_items)::integer + 1) as picks
    from sizes as s
    cross join range({{ replicates }}) as r(b)
),
boot as (
    select g.benchmark, g.model, g.condition, g.run_group, g.metric, g.k,
        list_avg(list_transform(d.picks, lambda p: g.at_values[p])) as at_mean,
        list_avg(list_transform(d.picks, lambda p: g.hat_values[p])) as hat_mean
    from per_group as g
    join draws as d on d.n_items = g.n_items
),
intervals as (
    select benchmark, model, condition, run_group, metric, k,
        quantile_cont(at_mean, 0.025) as at_lo, quantile_cont(at_mean, 0.975) as at_hi,
        quantile_cont(hat_mean, 0.025) as hat_lo, quantile_cont(hat_mean, 0.975) as hat_hi
    from boot
    group by all
)
select
    g.benchmark::varchar as benchmark,
    g.model::varchar as model,
    g.condition::varchar as condition,
    g.run_group::varchar as run_group,
    g.metric::varchar as metric,
    g.k::integer as k,
    g.n_items::integer as n_items,
    round(g.pass_at_k, 12)::double as pass_at_k,
    round(i.at_lo, 12)::double as pass_at_k_lo,
    round(i.at_hi, 12)::double as pass_at_k_hi,
    round(g.pass_hat_k, 12)::double as pass_hat_k,
    round(i.hat_lo, 12)::double as pass_hat_k_lo,
    round(i.hat_hi, 12)::double as pass_hat_k_hi
from per_group as g
join intervals as i
    on i.benchmark = g.benchmark and i.model = g.model and i.condition = g.condition
    and i.run_group = g.run_group and i.metric = g.metric and i.k = g.k
