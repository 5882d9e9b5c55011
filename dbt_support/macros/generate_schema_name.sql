{#- Staging and intermediate relations go to the schemas `staging` / `intermediate` (not
    `main_staging`); marts and seeds stay in the target schema (`main`, docs/metrics.md#marts). -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
