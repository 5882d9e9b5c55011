{#- Table and column comments (persist_docs, dbt_project.yml) in one statement per relation.

    dbt's own persist_docs runs the table's comment, then a DESCRIBE of the new relation twice (once in
    dbt-core, once in dbt-duckdb's column comments) and then the column comments: four statements, each
    with dbt's bookkeeping. Here the comments are one statement, with the same text. The columns to
    comment are the documented ones the relation has: for a table with an enforced contract those are
    exactly its YAML columns (dbt creates the table from them after checking the query against them), so
    no DESCRIBE is needed; otherwise one DESCRIBE. An incremental build that only adds rows to an existing
    table leaves its comments as they are (docs/ingest.md#incremental-builds). -#}
{% macro duckdb__persist_docs(relation, model, for_relation, for_columns) -%}
    {%- if model.config.materialized == 'incremental' and incremental_plan().mode == 'runs' -%}
        {{ return('') }}
    {%- endif -%}
    {%- set statements = [] -%}
    {%- if for_relation and config.persist_relation_docs() and model.description -%}
        {%- do statements.append(alter_relation_comment(relation, model.description) | trim) -%}
    {%- endif -%}
    {%- if for_columns and config.persist_column_docs() and model.columns -%}
        {%- set existing = persist_docs_columns(relation, model) -%}
        {%- for name, col in validate_doc_columns(relation, model.columns, existing).items() if name in existing -%}
            {%- set column = adapter.quote(name) if col['quote'] else name -%}
            {%- do statements.append('comment on column ' ~ relation ~ '.' ~ column ~ ' is '
                                     ~ duckdb_escape_comment(col['description']) ~ ';') -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if statements -%}
        {%- do run_query(statements | join('\n')) -%}
    {%- endif -%}
{%- endmacro %}

{#- The column names of `relation`, just built as `model`. -#}
{% macro persist_docs_columns(relation, model) -%}
    {%- set contract = model.config.get('contract') or {} -%}
    {%- if contract.get('enforced') and model.config.materialized in ('table', 'incremental') and relation.is_table -%}
        {{ return(model.columns.keys() | list) }}
    {%- endif -%}
    {{ return(adapter.get_columns_in_relation(relation) | map(attribute='name') | list) }}
{%- endmacro %}
