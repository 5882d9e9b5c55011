{#- Nothing to do, nothing done (docs/ingest.md#incremental-builds): views created again only when their
    definition changed; tables, seeds and data tests built or run again only when they could come out
    different.

    Creating a view again with the same definition changes nothing but costs dbt's work for a node
    (create, two renames, a comment per column, a drop: about 0.1 s a view). Likewise a table built
    before from the same definition and from raw inputs in the same state (node_inputs_state: every raw
    table upstream empty, missing, or one that changes only with its benchmark's release, while the
    releases are the same) would come out the same: label resolution while the release is unchanged,
    SciExplore's marts in a warehouse without SciExplore data. So would a seed loaded from the same file,
    and a data test that passed on the same data (its own version, below the materializations). The
    post-hook of every view, seed and such table records a *version* in intermediate.node_versions:

      version = checksum of the compiled SQL, of the description, column docs and config
                : checksums of every model and seed upstream of it (incremental_checksum)
                : the columns of the raw tables (names, types, order)
                [: 'inputs ' and the state of its raw inputs, for a table]

    A build that is not a full refresh skips a view, seed or table whose relation exists and whose
    recorded version equals the current one. `dbt build --full-refresh` builds every node again. A table
    whose SQL, or a model upstream, reads the clock (current_timestamp) is always built. -#}
{% materialization view, adapter="duckdb" %}
    {%- do incremental_runs_hooks() -%}
    {%- set existing_relation = load_cached_relation(this) -%}
    {%- if existing_relation is not none and existing_relation.is_view and not should_full_refresh()
          and node_recorded_version(this.identifier) == node_version() -%}
        {{ return(node_unchanged(existing_relation)) }}
    {%- endif -%}
    {#- a view that does not exist yet is created under its own name (fresh_relations.sql) -#}
    {%- if existing_relation is none -%}
        {{ return(view_create_new(this.incorporate(type='view'))) }}
    {%- endif -%}
    {{ return(dbt.materialization_view_default()) }}
{% endmaterialization %}

{#- What a skipped node returns: no statement runs, but dbt expects the result of a `main` one from every
    model node (its message, "unchanged", is what the log prints for the node). -#}
{% macro node_unchanged(relation) -%}
    {%- do store_result('main', response='unchanged') -%}
    {{ return({'relations': [relation]}) }}
{%- endmacro %}

{#- The table materialization (table_in_place.sql) asks this first: true when the table exists and its
    recorded version says it was built from the same definition and the same raw inputs (node_inputs_state). -#}
{% macro table_unchanged(existing_relation) -%}
    {%- if existing_relation is none or not existing_relation.is_table or should_full_refresh()
          or node_reads_clock() -%}
        {{ return(false) }}
    {%- endif -%}
    {%- set recorded = node_recorded_version(this.identifier) -%}
    {%- set inputs = node_inputs_state() -%}
    {{ return(recorded != '' and inputs is not none and recorded == node_version() ~ ':inputs ' ~ inputs) }}
{%- endmacro %}

{% macro node_reads_clock() -%}
    {{ return(reads_clock(sql)) }}
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

{#- on-run-start, after the bookkeeping tables exist: the per-invocation lookups that the first nodes of a
    `dbt build` would otherwise each make (with two threads, the first two nodes both miss the memo and
    both query): the raw tables' columns and states, which every build asks for, and, unless it is a full
    refresh, the recorded versions and the tables' columns and checks. Renders to no SQL; other commands
    read what they need at their first node, as before. -#}
{% macro read_build_state() -%}
    {%- if execute and flags.WHICH == 'build' -%}
        {%- do node_raw_columns_checksum() -%}
        {%- do raw_input_states() -%}
        {%- if not flags.FULL_REFRESH -%}
            {%- do node_recorded_version('') -%}
            {%- do table_in_place_columns() -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#- The current version of the model being built (memoised per invocation, with incremental_cache). -#}
{% macro node_version() -%}
    {%- set cache = incremental_cache() -%}
    {%- if ('node_version', model.unique_id) not in cache -%}
        {%- set docs = {'description': model.description, 'columns': model.columns, 'config': model.config} -%}
        {%- if model.get('constraints') -%}{%- do docs.update({'constraints': model.constraints}) -%}{%- endif -%}
        {%- set code = sql if sql is defined and sql is string else '' -%}
        {%- set parts = [local_md5(code), local_md5(tojson(docs, sort_keys=true)), incremental_checksum(model),
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

{#- True when SQL text `code` reads the clock. -#}
{% macro reads_clock(code) -%}
    {%- set code = (code or '') | lower -%}
    {{ return('current_timestamp' in code or 'now()' in code or 'current_date' in code or 'today()' in code) }}
{%- endmacro %}

{#- What is upstream of `unique_id`: 'sources', the sources it reads directly or through models (sorted),
    and 'clock', true when a model upstream reads the clock. Memoised per node for the invocation, each
    node's from its parents'. -#}
{% macro node_lineage(unique_id) -%}
    {%- set cache = incremental_cache() -%}
    {%- if ('lineage', unique_id) not in cache -%}
        {%- set sources = [] -%}
        {%- set lineage = namespace(clock=false) -%}
        {%- for parent in graph.nodes[unique_id].depends_on.nodes -%}
            {%- if parent in graph.sources -%}
                {%- if parent not in sources -%}{%- do sources.append(parent) -%}{%- endif -%}
            {%- elif parent in graph.nodes -%}
                {%- set up = node_lineage(parent) -%}
                {%- for uid in up.sources if uid not in sources -%}{%- do sources.append(uid) -%}{%- endfor -%}
                {%- if up.clock or node_code_reads_clock(parent) -%}{%- set lineage.clock = true -%}{%- endif -%}
            {%- endif -%}
        {%- endfor -%}
        {%- do cache.update({('lineage', unique_id): {'sources': sources | sort, 'clock': lineage.clock}}) -%}
    {%- endif -%}
    {{ return(cache[('lineage', unique_id)]) }}
{%- endmacro %}

{#- reads_clock of the raw code of node `unique_id`, memoised for the invocation. -#}
{% macro node_code_reads_clock(unique_id) -%}
    {%- set cache = incremental_cache() -%}
    {%- if ('reads_clock', unique_id) not in cache -%}
        {%- do cache.update({('reads_clock', unique_id): reads_clock(graph.nodes[unique_id].raw_code)}) -%}
    {%- endif -%}
    {{ return(cache[('reads_clock', unique_id)]) }}
{%- endmacro %}

{#- The state of the raw inputs of the node being built (a model, seed or data test), as a checksum, or
    none when it cannot be known that they are as they were at an earlier build. Every source upstream of
    the node (through models) counts: a missing or empty table is its own state; a table with rows
    counts only if its source says it changes with its benchmark's release only (`meta: {changes_with:
    benchmark_release}`: agenthop-ingest writes those tables with a new row in raw.benchmarks, and the
    rows of raw.benchmarks are part of the state); any other table with rows (runs, SciExplore data)
    makes the state unknown. So does a model upstream that reads the clock. Seeds and models upstream
    are covered by node_version (their checksums). The state depends only on the node's parents: it is
    memoised by them (the data tests of one model share it). -#}
{% macro node_inputs_state() -%}
    {%- set cache = incremental_cache() -%}
    {%- set key = ('node_inputs_state', model.depends_on.nodes | join(',')) -%}
    {%- if key not in cache -%}
        {%- set lineage = node_lineage(model.unique_id) -%}
        {%- set known = namespace(ok=not lineage.clock, release=false) -%}
        {%- set parts = [] -%}
        {%- if known.ok -%}
            {%- set raw = raw_input_states() -%}
            {%- for uid in lineage.sources if known.ok -%}
                {%- set state = raw.tables.get(uid, 'rows') -%}
                {%- if state != 'rows' -%}
                    {%- do parts.append(uid ~ '=' ~ state) -%}
                {%- elif (graph.sources[uid].get('meta') or {}).get('changes_with') == 'benchmark_release' -%}
                    {%- set known.release = true -%}
                    {%- do parts.append(uid ~ '=release') -%}
                {%- else -%}
                    {%- set known.ok = false -%}
                {%- endif -%}
            {%- endfor -%}
            {%- if known.release -%}{%- do parts.append('releases=' ~ raw.releases) -%}{%- endif -%}
        {%- endif -%}
        {%- do cache.update({key: local_md5(parts | join(',')) if known.ok else none}) -%}
    {%- endif -%}
    {{ return(cache[key]) }}
{%- endmacro %}

{#- Every source table's state ('missing', 'empty' or 'rows', by source unique id) and a checksum of the rows
    of raw.benchmarks (the loaded releases), read in one query at the first node that asks in an invocation
    (raw tables do not change during a build). -#}
{% macro raw_input_states() -%}
    {%- set cache = incremental_cache() -%}
    {%- if 'raw_input_states' not in cache -%}
        {%- set tables = {} -%}
        {%- set present = [] -%}
        {%- for uid, src in graph.sources.items() | sort -%}
            {%- set rel = adapter.get_relation(database=target.database, schema=src.schema, identifier=src.identifier) -%}
            {%- if rel is none -%}
                {%- do tables.update({uid: 'missing'}) -%}
            {%- else -%}
                {%- do present.append((uid, rel)) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- set releases = adapter.get_relation(database=target.database, schema='raw', identifier='benchmarks') -%}
        {%- set states_sql -%}
            select '' as uid, {% if releases is not none -%}
                coalesce(md5(string_agg(b::varchar, ',' order by b::varchar)), '') from {{ releases }} as b
            {%- else -%} '' {%- endif %}
            {%- for uid, rel in present %}
            union all
            select '{{ uid }}', case when exists (select 1 from {{ rel }}) then 'rows' else 'empty' end
            {%- endfor %}
        {%- endset -%}
        {%- set release = namespace(checksum='') -%}
        {%- for row in run_query(states_sql).rows -%}
            {%- if row[0] == '' -%}
                {%- set release.checksum = row[1] -%}
            {%- else -%}
                {%- do tables.update({row[0]: row[1]}) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- do cache.update({'raw_input_states': {'tables': tables, 'releases': release.checksum}}) -%}
    {%- endif -%}
    {{ return(cache['raw_input_states']) }}
{%- endmacro %}

{#- Called by the post-hook of every model and seed: a view records the version it was created with, a
    seed the version it was loaded with, a table the version it was built with from raw inputs whose
    state is known (node_inputs_state; any other table: no record, so it is built next time). -#}
{% macro node_record_version() -%}
    {%- if model.config.materialized in ('view', 'seed') -%}
        {%- set version = node_version() -%}
    {%- elif model.config.materialized == 'table' and not node_reads_clock() and node_inputs_state() is not none -%}
        {%- set version = node_version() ~ ':inputs ' ~ node_inputs_state() -%}
    {%- else -%}
        {%- set version = none -%}
    {%- endif -%}
    delete from {{ node_versions_relation() }} where model = '{{ this.identifier }}';
    {%- if version is not none %}
    insert into {{ node_versions_relation() }}
    values ('{{ this.identifier }}', '{{ version }}', '{{ invocation_id }}', current_timestamp)
    {%- endif -%}
{%- endmacro %}

{#- A seed is loaded again only when its file or configuration changed (its version, recorded by the post-hook,
    holds the file's checksum). -#}
{% materialization seed, adapter="duckdb" %}
    {%- do incremental_runs_hooks() -%}
    {%- set existing_relation = load_cached_relation(this) -%}
    {%- if existing_relation is not none and existing_relation.is_table and not should_full_refresh()
          and node_recorded_version(this.identifier) == node_version() -%}
        {#- what `dbt seed --show` prints -#}
        {%- do store_result('agate_table', response='OK', agate_table=load_agate_table()) -%}
        {{ return(node_unchanged(existing_relation)) }}
    {%- endif -%}
    {{ return(dbt.materialization_seed_default()) }}
{% endmaterialization %}

{#- Data tests: a test is not run again when it passed at an earlier build with the same version, that is
    the same compiled SQL and configuration, the same definitions upstream (incremental_checksum: every
    model and seed it reads, with their checksums), the same raw columns and the same state of every raw
    table upstream (node_inputs_state: none for a test of run data, which is always run). Its result would
    be the same: it passes, without a query. A test that fails, warns or errors is run at every build;
    `--full-refresh` runs every test. The versions of the tests that passed are recorded at the end of the
    build (record_test_versions, on-run-end) in intermediate.node_versions, under the test's unique id. -#}
{% materialization test, adapter="duckdb" %}
    {%- set version = test_version() -%}
    {%- if version is not none and not flags.FULL_REFRESH
          and node_recorded_version(model.unique_id) == version -%}
        {{ return(test_unchanged()) }}
    {%- endif -%}
    {%- if version is not none -%}
        {%- do incremental_cache().update({('test_version', model.unique_id): version}) -%}
    {%- endif -%}
    {%- if not should_store_failures() -%}
        {{ return(test_query_only()) }}
    {%- endif -%}
    {{ return(dbt.materialization_test_default()) }}
{% endmaterialization %}

{#- A data test that does not store its failures only reads: its query runs on its own (autocommit), not
    inside a transaction that is then rolled back (two statements fewer per test). Otherwise what the
    default test materialization does: the same query, the same result. -#}
{% macro test_query_only() -%}
    {%- set limit = config.get('limit') -%}
    {%- set sql_header = config.get('sql_header') if flags.REQUIRE_SQL_HEADER_IN_TEST_CONFIGS else none -%}
    {% call statement('main', fetch_result=True, auto_begin=False) -%}
        {% if sql_header %}{{ sql_header }}{% endif %}
        {{ get_test_sql(get_limit_subquery_sql(sql, limit), config.get('fail_calc'), config.get('warn_if'),
                        config.get('error_if'), limit=none) }}
    {%- endcall %}
    {{ return({'relations': []}) }}
{%- endmacro %}

{#- none (run the test, record nothing) unless this is a `dbt build` that also builds every model and seed
    upstream of the test (before it, in DAG order): only then is what the test reads known to match the
    definitions in its version (after `dbt test` alone, or `dbt build --select` of a part, it might not). -#}
{% macro test_version() -%}
    {%- if flags.WHICH != 'build' or should_store_failures() or node_reads_clock() -%}{{ return(none) }}{%- endif -%}
    {%- set inputs = node_inputs_state() -%}
    {%- if inputs is none -%}{{ return(none) }}{%- endif -%}
    {%- set cache = incremental_cache() -%}
    {%- if 'selected' not in cache -%}
        {%- set selected = {} -%}
        {%- for uid in selected_resources -%}{%- do selected.update({uid: true}) -%}{%- endfor -%}
        {%- do cache.update({'selected': selected}) -%}
    {%- endif -%}
    {%- set ancestors = [] -%}
    {%- do incremental_ancestors(model.unique_id, ancestors) -%}
    {%- for uid in ancestors -%}
        {%- if uid not in cache['selected'] -%}{{ return(none) }}{%- endif -%}
    {%- endfor -%}
    {{ return([local_md5(sql), local_md5(tojson(model.config, sort_keys=true)), incremental_checksum(model),
               node_raw_columns_checksum(), inputs] | join(':')) }}
{%- endmacro %}

{#- The result of a test that is not run: what a passing test's query returns (one row, no failures), from
    one query per invocation. Its status is pass; its adapter response says it was not run (message and
    code 'unchanged', no rows), where a test that ran has the message 'OK'. -#}
{% macro test_unchanged() -%}
    {%- set cache = incremental_cache() -%}
    {%- if 'test_passed' not in cache -%}
        {% call statement('test_passed', fetch_result=True, auto_begin=False) -%}
            select 0::bigint as failures, false as should_warn, false as should_error
        {%- endcall %}
        {%- do cache.update({'test_passed': load_result('test_passed')}) -%}
    {%- endif -%}
    {%- do store_raw_result('main', message='unchanged', code='unchanged', rows_affected=0,
                            agate_table=cache['test_passed'].table) -%}
    {{ return({'relations': []}) }}
{%- endmacro %}

{#- on-run-end: records the version of every test that ran in this build and passed (not those that were
    not run). A record is only ever compared with a test's whole version, so that of a test that later
    fails, or whose inputs change, needs no removal: it matches again only on the same data. -#}
{% macro record_test_versions(results) -%}
    {%- if execute -%}
        {%- set cache = incremental_cache() -%}
        {%- set passed = [] -%}
        {%- for res in results if res.node.resource_type == 'test' and res.status == 'pass' -%}
            {%- set version = cache.get(('test_version', res.node.unique_id)) -%}
            {%- if version is not none -%}{%- do passed.append((res.node.unique_id, version)) -%}{%- endif -%}
        {%- endfor -%}
        {%- if passed -%}
            delete from {{ node_versions_relation() }} where model in (
                {%- for uid, version in passed %}'{{ uid }}'{{ ", " if not loop.last }}{% endfor -%}
            );
            insert into {{ node_versions_relation() }} values
            {%- for uid, version in passed %}
                ('{{ uid }}', '{{ version }}', '{{ invocation_id }}', current_timestamp){{ "," if not loop.last }}
            {%- endfor -%}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}
