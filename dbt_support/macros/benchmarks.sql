{#- The dbt side of the benchmark registry (harness/benchmarks/__init__.py): per benchmark, the model
    that gives each of its items a group (columns benchmark, sample_id, item_group). A new benchmark
    adds its model here; the shared marts (models_sql/marts/core/) read the union. -#}
{% macro benchmark_item_group_models() -%}
{{ return(['int_agenthop__item_groups']) }}
{%- endmacro %}
