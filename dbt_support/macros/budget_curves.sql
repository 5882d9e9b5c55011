{#- The metric had a run been cut at a cap b (docs/metrics.md#budget-curves), shared by every benchmark's
    budget curves (AgentHop's budget_truncated_accuracy, the core budget_curves). `grid` is a relation or CTE
    of (run_id, axis, axis_order, b): the caps; `usage` one of (run_id, sample_id, axis, u, value): per final
    trajectory that counts towards the denominator and per axis, what it had used when it ended (u) and its
    value when it counts at all (NULL: never counts, e.g. it did not end by answering). A trajectory counts
    from the smallest cap b >= u on; each is counted once, at that cap, and accumulated along the axis.
    Returns (run_id, axis, axis_order, b, n_items, n_counted, value_sum, value_sq_sum). -#}
{% macro budget_truncated(grid, usage) -%}
select
    g.run_id,
    g.axis,
    g.axis_order,
    g.b,
    n.n_items,
    sum(coalesce(at_cap.n_new, 0)) over (partition by g.run_id, g.axis order by g.b) as n_counted,
    sum(coalesce(at_cap.value_sum, 0)) over (partition by g.run_id, g.axis order by g.b) as value_sum,
    sum(coalesce(at_cap.value_sq_sum, 0)) over (partition by g.run_id, g.axis order by g.b) as value_sq_sum
from {{ grid }} as g
join (select run_id, axis, count(*) as n_items from {{ usage }} group by run_id, axis) as n
    on n.run_id = g.run_id and n.axis = g.axis
left join (
    select run_id, axis, b, count(*) as n_new, sum(value) as value_sum, sum(value * value) as value_sq_sum
    from (
        select u.run_id, u.axis, u.sample_id, min(g2.b) as b, any_value(u.value) as value
        from {{ usage }} as u
        join {{ grid }} as g2 on g2.run_id = u.run_id and g2.axis = u.axis and u.u <= g2.b
        where u.value is not null
        group by u.run_id, u.axis, u.sample_id
    )
    group by run_id, axis, b
) as at_cap on at_cap.run_id = g.run_id and at_cap.axis = g.axis and at_cap.b = g.b
{%- endmacro %}
