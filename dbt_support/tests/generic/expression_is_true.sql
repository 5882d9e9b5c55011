{#- Every row satisfies the SQL boolean `expression` (NULL counts as a failure). -#}
{% test expression_is_true(model, expression) %}
select *
from {{ model }}
where ({{ expression }}) is not true
{% endtest %}
