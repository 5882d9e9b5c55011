{#- The shared vocabularies of the trajectory tables, the same lists as schemas/trajectory.py
    (TERMINATIONS, TOOL_CALL_STATUSES; tests/test_core_vocabularies.py keeps them equal). Every benchmark
    maps its own outcomes into these (docs/formats.md#trajectory-store). -#}
{% macro terminated_by_values() -%}
{{ return(['answer', 'max_turns', 'budget', 'token_limit', 'time_limit', 'cost_limit', 'message_limit',
           'context_limit', 'other_limit', 'error']) }}
{%- endmacro %}

{#- The terminations a run of the harness can end with; termination_summary lists them for every run
    (zero rows included), the others only where they occur. -#}
{% macro harness_terminations() -%}
{{ return(['answer', 'max_turns', 'budget', 'token_limit', 'error']) }}
{%- endmacro %}

{% macro tool_call_statuses() -%}
{{ return(['ok', 'rejected_budget', 'rejected_disabled', 'unknown_paper', 'no_full_text', 'section_not_found',
           'invalid_args', 'unknown_tool', 'not_executed', 'tool_error']) }}
{%- endmacro %}

{#- A Jinja list of strings as a SQL list literal: ('a', 'b'). -#}
{% macro sql_values(values) -%}
({% for v in values %}'{{ v }}'{{ ", " if not loop.last }}{% endfor %})
{%- endmacro %}
