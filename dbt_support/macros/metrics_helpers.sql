{#- The seven tools and their classes (docs/metrics.md#definitions: navigation tools are get_paper_info,
    get_references, list_sections, search_papers). Any other emitted name is class 'other'. -#}
{% macro navigation_tools() -%}
('get_paper_info', 'get_references', 'list_sections', 'search_papers')
{%- endmacro %}

{% macro known_tools() -%}
{{ return(['get_paper_info', 'get_references', 'search_papers', 'list_sections', 'read_section', 'think', 'submit_answer']) }}
{%- endmacro %}

{% macro tool_class(tool) -%}
case
    when {{ tool }} in {{ navigation_tools() }} then 'navigation'
    when {{ tool }} = 'read_section' then 'read'
    when {{ tool }} = 'think' then 'think'
    when {{ tool }} = 'submit_answer' then 'submit'
    else 'other'
end
{%- endmacro %}

{#- Wilson score interval for correct/n (docs/metrics.md#wilson, z = 1.959964); NULL when n = 0. sign is '-'
    (lower) or '+' (upper). The bound at the boundary is exact (lower = 0 when correct = 0, upper = 1 when
    correct = n) and results are clamped to [0, 1], against floating-point error (1 - 1e-16). -#}
{% macro wilson_bound(correct, n, sign, z=1.959964) -%}
case
    when ({{ n }}) = 0 then null
    {% if sign == '-' -%}
    when ({{ correct }}) = 0 then 0.0
    {%- else -%}
    when ({{ correct }}) = ({{ n }}) then 1.0
    {%- endif %}
    else {{ 'greatest(0.0, ' if sign == '-' else 'least(1.0, ' }}
        ((({{ correct }})::double / ({{ n }}) + {{ z }} * {{ z }} / (2.0 * ({{ n }})))
         {{ sign }} {{ z }} * sqrt((({{ correct }})::double / ({{ n }})) * (1.0 - ({{ correct }})::double / ({{ n }})) / ({{ n }})
                            + {{ z }} * {{ z }} / (4.0 * ({{ n }}) * ({{ n }}))))
        / (1.0 + {{ z }} * {{ z }} / ({{ n }})))
end
{%- endmacro %}

{#- mean of a boolean as a fraction in [0, 1]; NULL over an empty set -#}
{% macro rate(bool_expr) -%}
avg(case when {{ bool_expr }} then 1.0 else 0.0 end)
{%- endmacro %}
