{#- The dbt side of the benchmark registry (harness/benchmarks/__init__.py): per benchmark, the model
    that gives each of its items a group (columns benchmark, sample_id, item_group). A new benchmark
    adds its model here; the shared marts (models_sql/marts/core/) read the union. -#}
{% macro benchmark_item_group_models() -%}
{{ return(['int_agenthop__item_groups']) }}
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
