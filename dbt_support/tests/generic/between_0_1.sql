{#- 0 <= value <= 1 for every non-NULL value (rates, shares, probabilities). Use it on a column, or on
    the model with `columns: [...]` to check several columns in one query. -#}
{% test between_0_1(model, column_name=none, columns=none) %}
{%- set cols = columns if columns is not none else [column_name] -%}
select *
from {{ model }}
where {% for c in cols %}({{ c }} < 0 or {{ c }} > 1){% if not loop.last %} or {% endif %}{% endfor %}
{% endtest %}
