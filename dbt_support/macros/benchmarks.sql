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

{#- Per benchmark, the model of its own metrics per item (columns run_id, sample_id, metric, value):
    the metrics its scores do not carry in raw.scores (docs/metrics.md#metric-catalogue). The shared mart
    item_metric_values reads the union; a benchmark without one gets its trajectories.score as `score`. -#}
{% macro benchmark_item_metric_models() -%}
{{ return({'agenthop': 'int_agenthop__item_metric_values', 'sciexplore': 'int_sciexplore__item_metric_values'}) }}
{%- endmacro %}

{#- Per benchmark that imports runs without a raw.runs row (SciExplore's responses files), its models of
    those runs (run_id, benchmark, model, backend, condition, replicate) and of their final items
    (run_id, sample_id, is_error); int_core_runs and int_core_items_final add them to the loaded runs. -#}
{% macro benchmark_imported_run_models() -%}
{{ return(['int_sciexplore__imported_runs']) }}
{%- endmacro %}

{% macro benchmark_imported_item_models() -%}
{{ return(['int_sciexplore__imported_items']) }}
{%- endmacro %}

{#- Per benchmark that imports runs without a raw.runs row, its model of their usage (run_id, is_simulated, n,
    n_answer, n_limit, n_error, prompt_tokens, completion_tokens); imported_run_summary reads the union -#}
{% macro benchmark_imported_usage_models() -%}
{{ return(['int_sciexplore__imported_usage']) }}
{%- endmacro %}
