{#- SciExplore score helpers (docs/sciexplore.md#metrics). -#}

{#- F_em = 2C / (2C + 2I + N), 0 when the denominator is 0 -#}
{% macro sciexplore_fem(c, i, n) -%}
(case when 2 * ({{ c }}) + 2 * ({{ i }}) + ({{ n }}) = 0 then 0.0
      else 2.0 * ({{ c }}) / (2 * ({{ c }}) + 2 * ({{ i }}) + ({{ n }})) end)
{%- endmacro %}

{#- num / den as a fraction, 0 when den is 0 -#}
{% macro sciexplore_ratio(num, den) -%}
(case when ({{ den }}) = 0 then 0.0 else ({{ num }})::double / ({{ den }}) end)
{%- endmacro %}
