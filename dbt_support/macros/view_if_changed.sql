{#- Views created again only when their definition changed (docs/ingest.md#incremental-builds).

    A view holds no rows: creating it again with the same definition changes nothing but costs dbt's
    work for a node (create, two renames, a comment per column, a drop: about 0.1 s a view). The
    post-hook of every view records a *version* of what it created in intermediate.view_versions:

      version(view) = checksum of the compiled SQL, of the description and column docs and config
                      : checksums of every model and seed upstream of it (incremental_checksum)
                      : the columns of the raw tables (names, types, order)

    A build that is not a full refresh skips a view whose relation exists and whose recorded version
    equals the current one; `dbt build --full-refresh` creates every view again. -#}
{% materialization view, adapter="duckdb" %}
    {%- set existing_relation = load_cached_relation(this) -%}
    {%- if existing_relation is not none and existing_relation.is_view and not should_full_refresh()
          and view_recorded_version(this.identifier) == view_version() -%}
        {#- dbt expects a `main` statement from every model node -#}
        {% call statement('main') -%}
            select 'unchanged' as view_status
        {%- endcall %}
        {{ return({'relations': [this.incorporate(type='view')]}) }}
    {%- endif -%}
    {{ return(dbt.materialization_view_default()) }}
{% endmaterialization %}

{% macro view_versions_relation() -%}
intermediate.view_versions
{%- endmacro %}

{#- on-run-start (with create_incremental_state): the bookkeeping table -#}
{% macro create_view_state() -%}
create schema if not exists intermediate;
create table if not exists {{ view_versions_relation() }} (
    model varchar not null,
    version varchar not null,
    invocation_id varchar not null,
    built_at timestamptz not null
)
{%- endmacro %}

{#- The current version of the view being built (memoised per invocation, with incremental_cache). -#}
{% macro view_version() -%}
    {%- set cache = incremental_cache() -%}
    {%- if ('view_version', model.unique_id) not in cache -%}
        {%- set docs = {'description': model.description, 'columns': model.columns, 'config': model.config} -%}
        {%- set parts = [local_md5(sql), local_md5(tojson(docs, sort_keys=true)), incremental_checksum(model),
                         view_raw_columns_checksum()] -%}
        {%- do cache.update({('view_version', model.unique_id): parts | join(':')}) -%}
    {%- endif -%}
    {{ return(cache[('view_version', model.unique_id)]) }}
{%- endmacro %}

{#- One checksum of the columns of every raw table (a view binds to them when created). -#}
{% macro view_raw_columns_checksum() -%}
    {%- set cache = incremental_cache() -%}
    {%- if 'view_raw_columns' not in cache -%}
        {%- set columns_sql -%}
            select coalesce(md5(string_agg(table_name || '.' || column_name || ' ' || data_type, ','
                                            order by table_name, column_index)), '')
            from duckdb_columns()
            where database_name = current_database() and schema_name = 'raw'
        {%- endset -%}
        {%- do cache.update({'view_raw_columns': run_query(columns_sql).rows[0][0]}) -%}
    {%- endif -%}
    {{ return(cache['view_raw_columns']) }}
{%- endmacro %}

{#- The versions recorded for every view (read once per invocation); '' for a view not recorded. -#}
{% macro view_recorded_version(name) -%}
    {%- set cache = incremental_cache() -%}
    {%- if 'view_recorded' not in cache -%}
        {%- set recorded = {} -%}
        {%- for row in run_query('select model, version from ' ~ view_versions_relation()).rows -%}
            {%- do recorded.update({row[0]: row[1]}) -%}
        {%- endfor -%}
        {%- do cache.update({'view_recorded': recorded}) -%}
    {%- endif -%}
    {{ return(cache['view_recorded'].get(name, '')) }}
{%- endmacro %}

{#- Called by the post-hook of every model: a view records the version it was created with. -#}
{% macro view_record_version() -%}
    delete from {{ view_versions_relation() }} where model = '{{ this.identifier }}';
    insert into {{ view_versions_relation() }}
    values ('{{ this.identifier }}', '{{ view_version() }}', '{{ invocation_id }}', current_timestamp)
{%- endmacro %}
