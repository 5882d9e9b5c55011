{#- Tables rebuilt in place, incremental models appended to in place (docs/ingest.md#incremental-builds).

    A `table` model is recomputed at every build (the panel-level marts, read from the per-run marts). When
    the table already exists with exactly the columns (names, order, types), the comments and the
    constraints that creating it again would give, and the build is not a full refresh, its rows are
    replaced inside one transaction (delete, then insert the model's query) instead of creating a new
    table, renaming the old one away, commenting every column and dropping the old one: the same rows
    in about half the statements (7 instead of 13 per table node, measured). The model's contract is
    checked first, as for a new table. Anything else (first build, --full-refresh, an edited query,
    contract or description, a Python model) goes through dbt-duckdb's own table materialization.

    Likewise an incremental build of an `incremental` model whose table passes the same check inserts the
    rows of the runs it recomputes straight from the model's query (the pre-hook has deleted their old
    rows), instead of going through a temporary table, comparing both tables' columns and dropping it. -#}
{% materialization table, adapter="duckdb", supported_languages=['sql', 'python'] %}
    {%- do incremental_runs_hooks() -%}
    {%- set existing_relation = load_cached_relation(this) -%}
    {#- nothing to do: built from the same definition and empty raw inputs before (skip_unchanged.sql) -#}
    {%- if model.language == 'sql' and table_unchanged(existing_relation) -%}
        {{ return(node_unchanged(existing_relation)) }}
    {%- endif -%}
    {%- if model.language == 'sql' and existing_relation is not none and existing_relation.is_table
          and not should_full_refresh() -%}
        {%- set wanted = get_column_schema_from_query(sql) -%}
        {%- if table_in_place_matches(existing_relation, sql, wanted) -%}
            {{ return(table_in_place(existing_relation, sql, wanted)) }}
        {%- endif -%}
    {%- endif -%}
    {#- a table that does not exist yet is created under its own name (fresh_relations.sql) -#}
    {%- if model.language == 'sql' and existing_relation is none -%}
        {{ return(table_create_new(this.incorporate(type='table'))) }}
    {%- endif -%}
    {#- dbt-duckdb's own (the adapter's macros are in the `dbt` namespace) -#}
    {{ return(dbt.materialization_table_duckdb()) }}
{% endmaterialization %}

{% materialization incremental, adapter="duckdb", supported_languages=['sql', 'python'] %}
    {%- do incremental_runs_hooks() -%}
    {%- set existing_relation = load_cached_relation(this) -%}
    {%- if model.language == 'sql' and existing_relation is not none and is_incremental() -%}
        {%- set wanted = get_column_schema_from_query(sql) -%}
        {%- if table_in_place_matches(existing_relation, sql, wanted) -%}
            {{ return(table_in_place(existing_relation, sql, wanted, clear=false)) }}
        {%- endif -%}
        {#- a table without the checks or columns its contract declares (written by an earlier version of the project):
            the plan has recomputed every run (incremental_decide), so the table is created again from them,
            in the same transaction as the drop of the old one -#}
        {%- if existing_relation.is_table and not table_shape_matches(existing_relation) -%}
            {%- do adapter.drop_relation(existing_relation) -%}
        {%- endif -%}
    {%- endif -%}
    {{ return(dbt.materialization_incremental_duckdb()) }}
{% endmaterialization %}

{#- True when `relation` has the columns (`wanted`: those of `sql`), nullability and comments that
    building `sql` as this model would give it. -#}
{% macro table_in_place_matches(relation, sql, wanted) -%}
    {%- set contract = config.get('contract') -%}
    {%- if contract and contract.enforced -%}
        {#- the check dbt makes before creating a table with a contract (raises on a mismatch) -#}
        {%- do table_in_place_assert_contract(sql, wanted) -%}
    {%- endif -%}
    {%- set existing = table_in_place_columns().get(relation.schema ~ '.' ~ relation.identifier, []) -%}
    {%- if existing | length == 0 or existing | length != wanted | length -%}{{ return(false) }}{%- endif -%}
    {%- set docs = config.get('persist_docs', {}) -%}
    {%- set not_null = [] -%}
    {%- if contract and contract.enforced -%}
        {#- only not_null and check constraints, which DuckDB checks row by row on insert, are rebuilt in
            place (a key would be checked against deleted rows); the table's checks must be the contract's -#}
        {%- for c in model.get('constraints', []) if c.get('type') != 'check' -%}{{ return(false) }}{%- endfor -%}
        {%- for name, col in model.columns.items() -%}
            {%- for c in col.get('constraints', []) if c.get('type') != 'check' -%}
                {%- if c.get('type') != 'not_null' -%}{{ return(false) }}{%- endif -%}
                {%- do not_null.append(name | lower) -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if not table_checks_match(relation) -%}{{ return(false) }}{%- endif -%}
    {%- if docs.get('relation') and (model.description or '') != existing[0][4] -%}{{ return(false) }}{%- endif -%}
    {%- for row in existing -%}
        {%- set col = wanted[loop.index0] -%}
        {%- if row[0] != col.name or row[1] | upper != col.dtype | upper -%}{{ return(false) }}{%- endif -%}
        {%- if row[2] != ((row[0] | lower) not in not_null) -%}{{ return(false) }}{%- endif -%}
        {%- if docs.get('columns') -%}
            {%- set documented = model.columns.get(row[0]) -%}
            {%- set comment = (documented.get('description') or '') if documented else '' -%}
            {%- if comment != row[3] -%}{{ return(false) }}{%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(true) }}
{%- endmacro %}

{#- (column name, type, nullable, column comment, table comment) of every table of the warehouse, by
    'schema.table', read once per invocation (incremental_cache): a node's table changes only when that
    node builds, after it has read its own columns, so one read at the first node serves every node.
    The same query reads each table's CHECK constraints (table_checks). It returns one JSON document
    (a row per column would cost dbt a conversion per value and the template a step per row). -#}
{% macro table_in_place_columns() -%}
    {%- set cache = incremental_cache() -%}
    {%- if 'table_columns' not in cache -%}
        {%- set columns_sql -%}
            with checks as (
                select schema_name || '.' || table_name as name, to_json(list(expression)) as checks
                from duckdb_constraints()
                where database_name = current_database() and constraint_type = 'CHECK'
                group by all
            ),
            tables as (
                select c.schema_name || '.' || c.table_name as name,
                    to_json(list(json_array(c.column_name, c.data_type, c.is_nullable, coalesce(c.comment, ''),
                                            coalesce(t.comment, '')) order by c.column_index)) as columns
                from duckdb_columns() as c
                join duckdb_tables() as t using (database_name, schema_name, table_name)
                where c.database_name = current_database()
                group by all
            )
            select coalesce(json_group_object(name, json_object('columns', columns,
                                                                'checks', coalesce(checks, '[]'::json)))::varchar, '{}')
            from tables left join checks using (name)
        {%- endset -%}
        {%- set by_table = {} -%}
        {%- set checks = {} -%}
        {%- for name, table in fromjson(run_query(columns_sql).rows[0][0]).items() -%}
            {%- do by_table.update({name: table['columns']}) -%}
            {%- do checks.update({name: table['checks']}) -%}
        {%- endfor -%}
        {%- do cache.update({'table_columns': by_table, 'table_checks': checks}) -%}
    {%- endif -%}
    {{ return(cache['table_columns']) }}
{%- endmacro %}

{#- True when the CHECK constraints of table `relation` are those the model's enforced contract declares
    (model-level and column-level `type: check`), or the model declares none and the table has none.
    DuckDB stores a check as its own rendering of the expression, so the contract's expressions are
    compared in that form (contract_checks). A table written before its contract had these checks
    (or with others) does not match: it is created again (table_in_place, incremental_runs.sql). -#}
{% macro table_checks_match(relation) -%}
    {%- do table_in_place_columns() -%}
    {%- set existing = incremental_cache()['table_checks'].get(relation.schema ~ '.' ~ relation.identifier, []) -%}
    {%- set contract = config.get('contract') -%}
    {%- set wanted = [] -%}
    {%- if contract and contract.enforced -%}
        {%- set rendered = contract_checks() -%}
        {%- for expression in model_check_expressions(model) -%}
            {%- do wanted.append(rendered.get(expression)) -%}
        {%- endfor -%}
    {%- endif -%}
    {{ return(wanted | sort == existing | sort) }}
{%- endmacro %}

{#- True when table `relation` has the checks (table_checks_match) and the column names, in order, that the
    model's enforced contract declares. A table written by an earlier version of the project with fewer
    columns (a mart that gained one) does not match: an incremental model creates it again from every run
    (incremental_decide), as for other checks. -#}
{% macro table_shape_matches(relation) -%}
    {%- if not table_checks_match(relation) -%}{{ return(false) }}{%- endif -%}
    {%- set contract = config.get('contract') -%}
    {%- if not (contract and contract.enforced) or not model.columns -%}{{ return(true) }}{%- endif -%}
    {%- set existing = table_in_place_columns().get(relation.schema ~ '.' ~ relation.identifier, []) -%}
    {%- set have = [] -%}
    {%- for row in existing -%}{%- do have.append(row[0] | lower) -%}{%- endfor -%}
    {%- set want = [] -%}
    {%- for name in model.columns -%}{%- do want.append(name | lower) -%}{%- endfor -%}
    {{ return(have == want) }}
{%- endmacro %}

{#- The expressions of the check constraints of `node` (its model-level ones, then its columns'). -#}
{% macro model_check_expressions(node) -%}
    {%- set out = [] -%}
    {%- for c in node.get('constraints', []) if c.get('type') == 'check' -%}{%- do out.append(c.get('expression')) -%}{%- endfor -%}
    {%- for col in node.columns.values() -%}
        {%- for c in col.get('constraints', []) if c.get('type') == 'check' -%}{%- do out.append(c.get('expression')) -%}{%- endfor -%}
    {%- endfor -%}
    {{ return(out) }}
{%- endmacro %}

{#- DuckDB's rendering of the expression of every check constraint of a model with an enforced contract,
    by expression as written: the expression parsed and printed again (json_serialize_sql, then
    json_deserialize_sql of `select <expression>`), which is how DuckDB stores a check; none for one it
    cannot parse. One query per invocation, at the first model that asks. -#}
{% macro contract_checks() -%}
    {%- set cache = incremental_cache() -%}
    {%- if 'contract_checks' not in cache -%}
        {%- set expressions = [] -%}
        {%- for node in graph.nodes.values() if node.resource_type == 'model'
                and (node.config.get('contract') or {}).get('enforced') -%}
            {%- for e in model_check_expressions(node) if e not in expressions -%}{%- do expressions.append(e) -%}{%- endfor -%}
        {%- endfor -%}
        {%- set rendered = {} -%}
        {%- if expressions -%}
            {%- set checks_sql -%}
                select e, case when json_serialize_sql(s)->>'error' = 'true' then null
                               else substr(json_deserialize_sql(json_serialize_sql(s)), 8) end
                from (select unnest([{% for e in expressions %}{{ "'" ~ (e | replace("'", "''")) ~ "'" }}{{ ", " if not loop.last }}{% endfor %}]) as e)
                cross join lateral (select 'select ' || e as s)
            {%- endset -%}
            {%- for row in run_query(checks_sql).rows -%}{%- do rendered.update({row[0]: row[1]}) -%}{%- endfor -%}
        {%- endif -%}
        {%- do cache.update({'contract_checks': rendered}) -%}
    {%- endif -%}
    {{ return(cache['contract_checks']) }}
{%- endmacro %}

{#- Replaces (clear) or adds to the rows of `relation` with those of `sql`, inside the model's transaction:
    BEGIN, one statement (the pre-hooks that run inside the transaction, the delete, the insert and the
    post-hooks, in that order), COMMIT. Each statement dbt runs costs its bookkeeping, about as much as
    a small query, so one statement instead of four. The hooks are rendered before the statement runs,
    which suits the project's own hooks (incremental_runs.sql: their SQL depends on the build's plan, not
    on the rows). -#}
{% macro table_in_place(relation, sql, wanted, clear=true) -%}
    {%- set columns = [] -%}
    {%- for col in wanted -%}{%- do columns.append(adapter.quote(col.name)) -%}{%- endfor -%}
    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {%- set statements = table_in_place_hooks_sql(pre_hooks) -%}
    {%- if clear -%}{%- do statements.append('delete from ' ~ relation) -%}{%- endif -%}
    {%- set insert -%}
        insert into {{ relation }} ({{ columns | join(', ') }})
        select {{ columns | join(', ') }} from ({{ sql }}) as model_rows
    {%- endset -%}
    {%- do statements.append(insert) -%}
    {%- do statements.extend(table_in_place_hooks_sql(post_hooks)) -%}
    {% call statement('main') -%}
        {{ statements | join('\n;\n') }}
    {%- endcall %}
    {{ adapter.commit() }}
    {{ run_hooks(post_hooks, inside_transaction=False) }}
    {{ return({'relations': [relation]}) }}
{%- endmacro %}

{#- The rendered SQL of `hooks` that run inside the transaction (run_hooks' selection), empty ones left out. -#}
{% macro table_in_place_hooks_sql(hooks) -%}
    {%- set out = [] -%}
    {%- for hook in hooks | selectattr('transaction', 'equalto', true) -%}
        {%- set rendered = render(hook.get('sql')) | trim -%}
        {%- if rendered | length > 0 -%}{%- do out.append(rendered.rstrip(';')) -%}{%- endif -%}
    {%- endfor -%}
    {{ return(out) }}
{%- endmacro %}

{#- dbt's own get_column_schema_from_query (a DESCRIBE of the query), memoised per node for the
    invocation: the in-place materializations read the columns of a model's query and then check its
    contract, which reads them again (same query, same node: the same columns). -#}
{% macro get_column_schema_from_query(select_sql, select_sql_header=none) -%}
    {%- if select_sql_header is not none or model is not defined or model is none -%}
        {{ return(dbt.get_column_schema_from_query(select_sql, select_sql_header)) }}
    {%- endif -%}
    {%- set cache = incremental_cache() -%}
    {%- set key = ('column_schema', model.unique_id, select_sql) -%}
    {%- if key not in cache -%}
        {%- do cache.update({key: dbt.get_column_schema_from_query(select_sql)}) -%}
    {%- endif -%}
    {{ return(cache[key]) }}
{%- endmacro %}

{#- dbt's contract check of the model being built (get_assert_columns_equivalent: the columns of its query,
    `wanted`, against those its yaml declares, names and types), without its two DESCRIBE queries per
    model: the declared types' DuckDB names come from one query per invocation (contract_types). Any
    doubt (a column without a type, a bare numeric, a type not resolved, a struct, any difference)
    hands over to dbt's own check, which raises its error on a mismatch. -#}
{% macro table_in_place_assert_contract(sql, wanted) -%}
    {%- if not contract_holds(wanted) -%}
        {%- do assert_columns_equivalent(sql) -%}
    {%- endif -%}
{%- endmacro %}

{#- Every contract check of a SQL model (tables, incremental models and views, new or in place) goes
    through this: contract_holds first, dbt's own check (and its error) on any doubt. -#}
{% macro duckdb__get_assert_columns_equivalent(sql) -%}
    {%- if model is defined and model is not none and model.get('language', 'sql') == 'sql' -%}
        {{ return(table_in_place_assert_contract(sql, get_column_schema_from_query(sql))) }}
    {%- endif -%}
    {{ return(assert_columns_equivalent(sql)) }}
{%- endmacro %}

{% macro contract_holds(wanted) -%}
    {%- set types = contract_types() -%}
    {%- set declared = {} -%}
    {%- for col in model.columns.values() -%}
        {%- set data_type = col.get('data_type') -%}
        {%- if not data_type or data_type.strip().lower() in ('numeric', 'decimal', 'number')
              or types.get(data_type) is none -%}
            {{ return(false) }}
        {%- endif -%}
        {%- do declared.update({col['name']: types[data_type]}) -%}
    {%- endfor -%}
    {%- if declared | length == 0 or declared | length != wanted | length -%}{{ return(false) }}{%- endif -%}
    {%- for col in wanted -%}
        {%- if declared.get(col.name) != col.dtype -%}{{ return(false) }}{%- endif -%}
    {%- endfor -%}
    {{ return(true) }}
{%- endmacro %}

{#- DuckDB's name of every data type that the columns of a model with an enforced contract declare (as the
    model's context gives them: translated when the contract aliases types), read in one DESCRIBE per
    invocation; none for a type whose name could not be told (a struct is flattened into several). -#}
{% macro contract_types() -%}
    {%- set cache = incremental_cache() -%}
    {%- if 'contract_types' not in cache -%}
        {%- set names = [] -%}
        {%- for node in graph.nodes.values() if node.resource_type == 'model' -%}
            {%- set contract = node.config.get('contract') or {} -%}
            {%- if contract.get('enforced') -%}
                {%- for col in node.columns.values() if col.get('data_type') -%}
                    {%- set data_type = api.Column.translate_type(col['data_type'])
                                        if contract.get('alias_types', true) else col['data_type'] -%}
                    {%- if data_type not in names -%}{%- do names.append(data_type) -%}{%- endif -%}
                {%- endfor -%}
            {%- endif -%}
        {%- endfor -%}
        {%- set types = {} -%}
        {%- if names -%}
            {%- set probe -%}
                select {% for t in names %}{{ cast('null', t) }} as "t{{ loop.index0 }}"{{ ", " if not loop.last }}{% endfor %}
            {%- endset -%}
            {%- set found = {} -%}
            {%- for col in adapter.get_column_schema_from_query(probe) -%}
                {%- do found.update({col.name: col.dtype}) -%}
            {%- endfor -%}
            {%- for t in names -%}{%- do types.update({t: found.get('t' ~ loop.index0)}) -%}{%- endfor -%}
        {%- endif -%}
        {%- do cache.update({'contract_types': types}) -%}
    {%- endif -%}
    {{ return(cache['contract_types']) }}
{%- endmacro %}
