{#- The columns of SciExplore's raw tables (schemas/sciexplore.py, DuckDB types as ingest creates them;
    tests/sciexplore/test_marts.py checks they agree), for a warehouse that has not got them yet. -#}
{% macro sciexplore_raw_columns() %}
{{ return({
    'sciexplore_release': [('benchmark', 'VARCHAR'), ('version', 'VARCHAR'), ('sha256', 'VARCHAR'), ('n_items', 'INTEGER'), ('source', 'VARCHAR'), ('loaded_at', 'TIMESTAMPTZ')],
    'sciexplore_tasks': [('task_id', 'VARCHAR'), ('type', 'VARCHAR'), ('domain', 'VARCHAR'), ('question', 'VARCHAR'), ('answer', 'VARCHAR'), ('aliases', 'VARCHAR[]'), ('hops', 'INTEGER'), ('databases', 'VARCHAR[]'), ('year', 'INTEGER'), ('paragraph', 'VARCHAR'), ('columns', 'VARCHAR[]'), ('primary_key', 'VARCHAR'), ('task_order', 'INTEGER'), ('task_json', 'VARCHAR'), ('sample_hash', 'VARCHAR')],
    'sciexplore_t3_references': [('task_id', 'VARCHAR'), ('slot', 'VARCHAR'), ('ref_index', 'INTEGER'), ('title', 'VARCHAR'), ('year', 'INTEGER'), ('authors', 'VARCHAR[]'), ('venue', 'VARCHAR'), ('doi', 'VARCHAR')],
    'sciexplore_t4_cells': [('task_id', 'VARCHAR'), ('row_index', 'INTEGER'), ('row_key', 'VARCHAR'), ('column', 'VARCHAR'), ('column_index', 'INTEGER'), ('value', 'VARCHAR'), ('is_primary_key', 'BOOLEAN')],
    'sciexplore_documents': [('doc_id', 'VARCHAR'), ('kind', 'VARCHAR'), ('database', 'VARCHAR'), ('title', 'VARCHAR'), ('url', 'VARCHAR'), ('year', 'INTEGER'), ('n_chars', 'BIGINT')],
    'sciexplore_runs': [('run_id', 'VARCHAR'), ('model', 'VARCHAR'), ('paradigm', 'VARCHAR'), ('replicate', 'INTEGER'), ('backend', 'VARCHAR'), ('benchmark_sha256', 'VARCHAR'), ('simulated', 'BOOLEAN')],
    'sciexplore_responses': [('run_id', 'VARCHAR'), ('task_id', 'VARCHAR'), ('status', 'VARCHAR'), ('answer_text', 'VARCHAR'), ('answer_json', 'VARCHAR'), ('parse_error', 'VARCHAR'), ('format_ok', 'BOOLEAN'), ('prompt_tokens', 'BIGINT'), ('completion_tokens', 'BIGINT'), ('wall_time_s', 'DOUBLE'), ('source', 'VARCHAR'), ('line_sha256', 'VARCHAR')],
    'sciexplore_trace': [('run_id', 'VARCHAR'), ('task_id', 'VARCHAR'), ('seq', 'INTEGER'), ('tool', 'VARCHAR'), ('query', 'VARCHAR'), ('target', 'VARCHAR'), ('result_chars', 'BIGINT'), ('is_search', 'BOOLEAN')],
    'judgments': [('run_id', 'VARCHAR'), ('task_id', 'VARCHAR'), ('unit', 'VARCHAR'), ('slot', 'VARCHAR'), ('ref_index', 'INTEGER'), ('row_key', 'VARCHAR'), ('column', 'VARCHAR'), ('verdict', 'VARCHAR'), ('judge', 'VARCHAR'), ('judge_version', 'VARCHAR'), ('rationale', 'VARCHAR')],
    'ingest_log': [('load_id', 'BIGINT'), ('loaded_at', 'TIMESTAMPTZ'), ('kind', 'VARCHAR'), ('source', 'VARCHAR'), ('run_id', 'VARCHAR'), ('content_sha256', 'VARCHAR'), ('action', 'VARCHAR'), ('row_counts', 'VARCHAR')],
}) }}
{% endmacro %}

{#- The raw table as a relation: the source when the warehouse has it, else an empty relation with its
    columns (a warehouse made before SciExplore, or raw tables created by hand), so that dbt build works
    on every warehouse. At parse time it is always the source, which records the dependency. -#}
{% macro sciexplore_source(table) -%}
    {%- if not execute -%}
        {{ source('sciexplore', table) }}
    {%- else -%}
        {%- set rel = adapter.get_relation(database=this.database, schema='raw', identifier=table) -%}
        {%- if rel is not none -%}
            {{ source('sciexplore', table) }}
        {%- else -%}
            (select {% for name, type in sciexplore_raw_columns()[table] %}null::{{ type }} as "{{ name }}"{{ ", " if not loop.last }}{% endfor %} where false)
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
