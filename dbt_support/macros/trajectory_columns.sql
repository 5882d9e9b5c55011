{#- The shared per-trajectory measures (docs/formats.md#trajectory-store), in their mart order: selected by
    int_core_trajectories_final from the staged trajectories and passed on, under the same names, by
    every benchmark's final-trajectory model built on it. `alias` names the relation they come from. -#}
{% macro trajectory_measure_names() -%}
    {{ return(['terminated_by', 'total_turns', 'budget_used', 'prompt_tokens', 'completion_tokens', 'cache_read_tokens',
               'cache_creation_tokens', 'total_tokens', 'tool_errors', 'api_error_count', 'transient_retry_count',
               'wall_time_s', 'wait_s', 'repaired_chars']) }}
{%- endmacro %}

{% macro trajectory_measures(alias) -%}
    {%- for name in trajectory_measure_names() %}
    {{ alias }}.{{ name }}{{ "," if not loop.last }}
    {%- endfor %}
{%- endmacro %}
