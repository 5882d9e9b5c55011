{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- docs/metrics.md#stopping-behaviour per run and scope: every category of the scope (zero rows included) for each scope with
-- at least one trajectory; share = n / n_scope.
with categories as (
    select * from (values
        ('ST', 'read', 1), ('ST', 'immediate', 2), ('ST', 'think', 3), ('ST', 'other', 4),
        ('MT-both', 'read', 1), ('MT-both', 'immediate', 2), ('MT-both', 'think', 3), ('MT-both', 'other', 4),
        ('MT-fail', 'zero_gold', 1), ('MT-fail', 'explored', 2), ('MT-fail', 'stayed', 3), ('MT-fail', 'premature', 4)
    ) as t(scope, category, category_order)
),
counts as (
    select run_id, stopping_scope as scope, stopping_category as category, count(*) as n
    from {{ ref('fct_trajectory') }}
    where stopping_scope is not null and {{ runs_to_build(plan, 'run_id') }}
    group by all
),
scopes as (
    select run_id, scope, sum(n) as n_scope
    from counts
    group by all
)
select
    scopes.run_id::varchar as run_id,
    scopes.scope::varchar as scope,
    categories.category::varchar as category,
    categories.category_order::integer as category_order,
    coalesce(counts.n, 0)::integer as n,
    scopes.n_scope::integer as n_scope,
    (coalesce(counts.n, 0)::double / scopes.n_scope)::double as share
from scopes
join categories on categories.scope = scopes.scope
left join counts
    on counts.run_id = scopes.run_id and counts.scope = scopes.scope and counts.category = categories.category
