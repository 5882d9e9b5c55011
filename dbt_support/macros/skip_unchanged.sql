{#- Nothing to do, nothing done (docs/ingest.md#incremental-builds): views created again only when their
    definition changed, tables rebuilt only when they could come out different.

    Creating a view again with the same definition changes nothing but costs dbt's work for a node
    (create, two renames, a comment per column, a drop: about 0.1 s a view). Likewise a table whose
    every raw input is empty, built from the same definition from empty inputs before, would come out
    the same (SciExplore's marts in a warehouse without SciExplore data). The post-hook of every view,
    and of every table built from empty inputs, records a *version* in intermediate.node_versions:

      version = checksum of the compiled SQL, of the description, column docs and config
                : checksums of every model and seed upstream of it (incremental_checksum)
                : the columns of the raw tables (names, types, order)
                [: 'empty inputs', for a table]

    A build that is not a full refresh skips a view or table whose relation exists and whose recorded
    version equals the current one. `dbt build --full-refresh` builds every node again. A table whose
    SQL reads the clock (current_timestamp) is always built. -#}
{% materialization view, adapter="duckdb" %}
    {%- set existing_relation = load_cached_relation(this) -%}
    {%- if existing_relation is not none and existing_relation.is_view and not should_full_refresh()
          and node_recorded_version(this.identifier) == node_version() -%}
        {{ return(node_unchanged(existing_relation)) }}
    {%- endif -%}
    {{ return(dbt.materialization_view_default()) }}
{% endmaterialization %}

{#- What a skipped node returns: no statement runs, but dbt expects the result of a `main` one from every
    model node (its message, "unchanged", is what the log prints for the node). -#}
{% macro node_unchanged(relation) -%}
    {%- do store_result('main', response='unchanged') -%}
    {{ return({'relations': [relation]}) }}
{%- endmacro %}

{#- The table materialization (table_in_place.sql) asks this first: true when the table exists, every raw
    table upstream is empty and the recorded version says it was built so from the same definition. -#}
{% macro table_unchanged(existing_relation) -%}
    {%- if existing_relation is none or not existing_relation.is_table or should_full_refresh()
          or node_reads_clock() -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set recorded = node_recorded_version(this.identifier) -%}
    {{ return(recorded != '' and recorded == node_version() ~ ':empty inputs' and node_inputs_empty()) }}
{%- endmacro %}

{% macro node_reads_clock() -%}
    {{ return('current_timestamp' in (sql | lower) or 'now()' in (sql | lower)) }}
{%- endmacro %}

{% macro node_versions_relation() -%}
intermediate.node_versions
{%- endmacro %}

{#- on-run-start (with create_incremental_state): the bookkeeping table -#}
{% macro create_node_state() -%}
create schema if not exists intermediate;
create table if not exists {{ node_versions_relation() }} (
    model varchar not null,
    version varchar not null,
    invocation_id varchar not null,
    built_at timestamptz not null
)
{%- endmacro %}

{#- The current version of the model being built (memoised per invocation, with incremental_cache). -#}
{% macro node_version() -%}
    {%- set cache = incremental_cache() -%}
    {%- if ('node_version', model.unique_id) not in cache -%}
        {%- set docs = {'description': model.description, 'columns': model.columns, 'config': model.config} -%}
        {%- set parts = [local_md5(sql), local_md5(tojson(docs, sort_keys=true)), incremental_checksum(model),
                         node_raw_columns_checksum()] -%}
        {%- do cache.update({('node_version', model.unique_id): parts | join(':')}) -%}
    {%- endif -%}
    {{ return(cache[('node_version', model.unique_id)]) }}
{%- endmacro %}

{#- One checksum of the columns of every raw table (a view binds to them when created). -#}
{% macro node_raw_columns_checksum() -%}
    {%- set cache = incremental_cache() -%}
    {%- if 'node_raw_columns' not in cache -%}
        {%- set columns_sql -%}
            select coalesce(md5(string_agg(table_name || '.' || column_name || ' ' || data_type, ','
                                            order by table_name, column_index)), '')
            from duckdb_columns()
            where database_name = current_database() and schema_name = 'raw'
        {%- endset -%}
        {%- do cache.update({'node_raw_columns': run_query(columns_sql).rows[0][0]}) -%}
    {%- endif -%}
    {{ return(cache['node_raw_columns']) }}
{%- endmacro %}

{#- The versions recorded for every node (read once per invocation); '' for a node not recorded. -#}
{% macro node_recorded_version(name) -%}
    {%- set cache = incremental_cache() -%}
    {%- if 'node_recorded' not in cache -%}
        {%- set recorded = {} -%}
        {%- for row in run_query('select model, version from ' ~ node_versions_relation()).rows -%}
            {%- do recorded.update({row[0]: row[1]}) -%}
        {%- endfor -%}
        {%- do cache.update({'node_recorded': recorded}) -%}
    {%- endif -%}
    {{ return(cache['node_recorded'].get(name, '')) }}
{%- endmacro %}

{#- The sources upstream of `unique_id`, through models (each once). -#}
{% macro node_upstream_sources(unique_id, seen, sources) -%}
    {%- for parent in graph.nodes[unique_id].depends_on.nodes -%}
        {%- if parent in graph.sources and parent not in sources -%}
            {%- do sources.append(parent) -%}
        {%- elif parent in graph.nodes and parent not in seen -%}
            {%- do seen.append(parent) -%}
            {%- do node_upstream_sources(parent, seen, sources) -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}

{#- True when the model reads at least one raw table and every raw table it reads (directly or through
    other models) is missing or empty. -#}
{% macro node_inputs_empty() -%}
    {%- set cache = incremental_cache() -%}
    {%- if ('node_inputs_empty', model.unique_id) not in cache -%}
        {%- set sources = [] -%}
        {%- do node_upstream_sources(model.unique_id, [], sources) -%}
        {%- set tables = [] -%}
        {%- for uid in sources | sort -%}
            {%- set src = graph.sources[uid] -%}
            {%- set rel = adapter.get_relation(database=target.database, schema=src.schema, identifier=src.identifier) -%}
            {%- if rel is not none -%}{%- do tables.append(rel) -%}{%- endif -%}
        {%- endfor -%}
        {%- set empty = false -%}
        {%- if sources -%}
            {%- if tables -%}
                {%- set any_sql -%}
                    select {% for rel in tables %}exists (select 1 from {{ rel }}){{ " or " if not loop.last }}{% endfor %}
                {%- endset -%}
                {%- set empty = not run_query(any_sql).rows[0][0] -%}
            {%- else -%}
                {%- set empty = true -%}
            {%- endif -%}
        {%- endif -%}
        {%- do cache.update({('node_inputs_empty', model.unique_id): empty}) -%}
    {%- endif -%}
    {{ return(cache[('node_inputs_empty', model.unique_id)]) }}
{%- endmacro %}

{#- Called by the post-hook of every model: a view records the version it was created with, a table the
    version it was built with from empty inputs (any other table: no record, so it is built next time). -#}
{% macro node_record_version() -%}
    {%- if model.config.materialized == 'view' -%}
        {%- set version = node_version() -%}
    {%- elif model.config.materialized == 'table' and not node_reads_clock() and node_inputs_empty() -%}
        {%- set version = node_version() ~ ':empty inputs' -%}
    {%- else -%}
        {%- set version = none -%}
    {%- endif -%}
    delete from {{ node_versions_relation() }} where model = '{{ this.identifier }}';
    {%- if version is not none %}
    insert into {{ node_versions_relation() }}
    values ('{{ this.identifier }}', '{{ version }}', '{{ invocation_id }}', current_timestamp)
    {%- endif -%}
{%- endmacro %}
