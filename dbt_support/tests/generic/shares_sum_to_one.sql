{#- Per group, the column sums to 1 within `tolerance` (default 1e-9). -#}
{% test shares_sum_to_one(model, column_name, group_by, tolerance=1e-9) %}
select {{ group_by | join(', ') }}, sum({{ column_name }}) as total
from {{ model }}
group by {{ group_by | join(', ') }}
having abs(coalesce(sum({{ column_name }}), 0) - 1) > {{ tolerance }}
{% endtest %}
