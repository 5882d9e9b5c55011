{#- The dbt side of the benchmark registry (harness/benchmarks/__init__.py): per benchmark, the models the
    shared marts (models_sql/marts/core/) read the union of. A new benchmark adds its models here. -#}

{#- the model that gives each of its items a group (columns benchmark, sample_id, item_group) -#}
{% macro benchmark_item_group_models() -%}
{{ return(['int_agenthop__item_groups']) }}
{%- endmacro %}

{#- the model of its own trajectory checks, beside the shared ones (int_core_trajectory_checks), with the same
    columns: run_id, sample_id, attempt, is_final, check_name, column_name, expected_value, observed_value;
    dq_trajectory_accounting and dq_issues list them -#}
{% macro benchmark_trajectory_check_models() -%}
{{ return(['int_agenthop__trajectory_checks']) }}
{%- endmacro %}
