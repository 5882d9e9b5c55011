{#- on-run-start guard: a build against a warehouse that agenthop-ingest never loaded stops with one
    clear message instead of a dozen "schema raw does not exist" errors. -#}
{% macro require_raw_tables() %}
    {%- if execute -%}
        {%- set found = run_query(
            "select count(*) from information_schema.tables where table_schema = 'raw' and table_name = 'runs'"
        ).columns[0].values()[0] -%}
        {%- if found == 0 -%}
            {{ exceptions.raise_compiler_error(
                "warehouse " ~ target.path ~ " has no raw tables: load a benchmark and runs first with "
                ~ "agenthop-ingest (and point AGENTHOP_DB at that warehouse)") }}
        {%- endif -%}
    {%- endif -%}
    select 1
{% endmacro %}
