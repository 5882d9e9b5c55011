{#- Incremental builds by run (docs/ingest.md#incremental-builds).

    A per-run model (its rows depend only on one run's data and its benchmark's release) is
    materialized `incremental`; at each build it recomputes only the runs whose *version* changed
    since it last built them, and drops the rows of runs that are gone from the warehouse:

      version(run) = checksum of the model's SQL and of every model and seed upstream of it
                     : the run's last load in raw.ingest_log (inserted or replaced)
                     / the run's benchmark release in raw.benchmarks

    A run loaded without an ingest_log row (a warehouse written by other means) has no version and
    is recomputed at every build. What each model built is recorded per run in
    intermediate.incremental_runs (model, run_id, version, invocation_id, built_at), written by the
    model's post-hook in the same transaction as its rows.

    A model uses it like this:
        {{ config(materialized='incremental') }}
        {%- set plan = incremental_plan() %}
        ... from {{ ref('x') }} as x where {{ runs_to_build(plan, 'x.run_id') }}
    and the project's materializations add the pre-hook (delete the rows of changed and gone runs) and the
    post-hook (record the versions) to every model and seed (incremental_runs_hooks, below); both do
    nothing for other materializations.

    A model whose rows pool several runs (pass_k: the repeats of a run group) has no run_id column: it is
    keyed by a group column instead, named by config(incremental_group='run_group'). Its plan is the same
    per-run plan; from it the model names the groups to recompute, with a query read once when it is
    compiled (incremental_groups: the groups that hold a changed run, runs_changed, and whatever else its
    rows depend on), and the pre-hook deletes the rows of those groups instead of runs:
        {{ config(materialized='incremental', incremental_group='run_group') }}
        {%- set plan = incremental_plan() %}
        {%- set plan = incremental_groups(plan, 'select run_group from x where ' ~ runs_changed(plan, 'run_id')) %}
        ... from {{ ref('x') }} as x where {{ groups_to_build(plan, 'x.run_group') }}
    The post-hook records the versions of the runs as for any incremental model. -#}

{#- The SQL checksums of `node` and of every model and seed upstream of it, as one hash: editing one of
    them makes the next build recompute every run (a macro's edit is not seen: --full-refresh). -#}
{% macro incremental_checksum(node) -%}
    {%- set cache = incremental_cache() -%}
    {%- if ('checksum', node.unique_id) in cache -%}{{ return(cache[('checksum', node.unique_id)]) }}{%- endif -%}
    {%- set seen = [] -%}
    {%- do incremental_ancestors(node.unique_id, seen) -%}
    {%- set parts = [node.checksum.checksum] -%}
    {%- for uid in seen | sort -%}
        {%- do parts.append(uid ~ '=' ~ graph.nodes[uid].checksum.checksum) -%}
    {%- endfor -%}
    {%- set checksum = local_md5(parts | join(',')) -%}
    {%- do cache.update({('checksum', node.unique_id): checksum}) -%}
    {{ return(checksum) }}
{%- endmacro %}

{#- Per-invocation memo of checksums and plans, kept in the run's graph (one object for every node of
    an invocation): a model's plan is decided once, when it is compiled, and its hooks reuse it. -#}
{% macro incremental_cache() -%}
    {%- set key = 'agenthop_incremental_' ~ invocation_id -%}
    {%- if key not in graph -%}{%- do graph.update({key: {}}) -%}{%- endif -%}
    {{ return(graph[key]) }}
{%- endmacro %}

{% macro incremental_ancestors(unique_id, seen) -%}
    {%- for parent in graph.nodes[unique_id].depends_on.nodes -%}
        {%- if parent in graph.nodes and parent not in seen -%}
            {%- do seen.append(parent) -%}
            {%- do incremental_ancestors(parent, seen) -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}

{% macro incremental_state_relation() -%}
intermediate.incremental_runs
{%- endmacro %}

{#- on-run-start: the bookkeeping table (created once; `dbt build --full-refresh` rewrites each model's rows) -#}
{% macro create_incremental_state() -%}
create schema if not exists intermediate;
create table if not exists {{ incremental_state_relation() }} (
    model varchar not null,
    run_id varchar not null,
    version varchar,
    invocation_id varchar not null,
    built_at timestamptz not null
)
{%- endmacro %}

{#- SQL: (run_id, version) of every run in the warehouse (raw.runs, and run ids that only
    trajectories name, which the data-quality models report), for the model with SQL `checksum`. -#}
{% macro run_versions_sql(checksum) -%}
    {%- set log = adapter.get_relation(database=target.database, schema='raw', identifier='ingest_log') -%}
    {%- set releases = adapter.get_relation(database=target.database, schema='raw', identifier='benchmarks') -%}
    with all_runs as (
        select run_id, benchmark from raw.runs
        union all
        select distinct run_id, null from raw.trajectories where run_id not in (select run_id from raw.runs)
    ),
    loads as (
        {%- if log %}
        select run_id, max(load_id) as load_id
        from {{ log }}
        where run_id is not null and action in ('inserted', 'replaced')
        group by run_id
        {%- else %}
        select null::varchar as run_id, null::bigint as load_id where false
        {%- endif %}
    ),
    releases as (
        {%- if releases %}
        select benchmark, sha256 || '@' || loaded_at::varchar as release from {{ releases }}
        {%- else %}
        select null::varchar as benchmark, ''::varchar as release where false
        {%- endif %}
    )
    select
        all_runs.run_id,
        '{{ checksum }}:' || loads.load_id::varchar || '/' || coalesce(releases.release, '') as version
    from all_runs
    left join loads using (run_id)
    left join releases on releases.benchmark = all_runs.benchmark
{%- endmacro %}

{%- macro incremental_sql_list(values) -%}
({% for v in values %}'{{ v | replace("'", "''") }}'{{ ", " if not loop.last }}{% endfor %})
{%- endmacro -%}

{#- What this build of the current model does: {'mode': 'all'} (a full build: first build, --full-refresh,
    or no recorded state) or {'mode': 'runs', 'build': [changed run ids], 'gone': [run ids no longer
    loaded]}. Queries the warehouse only when executing an incremental build. -#}
{% macro incremental_plan() -%}
    {%- if not execute or this is none or model.resource_type == 'unit_test' -%}
        {{ return({'mode': 'all', 'build': [], 'gone': []}) }}
    {%- endif -%}
    {%- set cache = incremental_cache() -%}
    {%- if ('plan', model.unique_id) not in cache -%}
        {%- do cache.update({('plan', model.unique_id): incremental_decide()}) -%}
    {%- endif -%}
    {{ return(cache[('plan', model.unique_id)]) }}
{%- endmacro %}

{% macro incremental_decide() -%}
    {#- a table without its contract's checks or columns is created again from every run (table_in_place.sql) -#}
    {%- if not is_incremental() or not table_shape_matches(this) -%}
        {{ return({'mode': 'all', 'build': [], 'gone': []}) }}
    {%- endif -%}
    {%- set snapshot = incremental_snapshot() -%}
    {%- set checksum = incremental_checksum(model) -%}
    {%- set recorded = snapshot.recorded.get(this.identifier, {}) -%}
    {%- set build = [] -%}
    {%- set kept = [] -%}
    {%- for run_id, suffix in snapshot.current.items() -%}
        {%- set version = none if suffix is none else checksum ~ suffix -%}
        {%- if version is not none and recorded.get(run_id) == version -%}
            {%- do kept.append(run_id) -%}
        {%- else -%}
            {%- do build.append(run_id) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set gone = [] -%}
    {%- for run_id in recorded -%}
        {%- if run_id not in snapshot.current -%}{%- do gone.append(run_id) -%}{%- endif -%}
    {%- endfor -%}
    {#- nothing recorded, or no run kept its version: rebuild everything (cheaper than a long IN list) -#}
    {%- if not recorded or (not kept and build) -%}
        {{ return({'mode': 'all', 'build': [], 'gone': []}) }}
    {%- endif -%}
    {{ return({'mode': 'runs', 'build': build | sort, 'gone': gone | sort}) }}
{%- endmacro %}

{#- The warehouse's runs with their versions less the model checksum ('current': run_id -> ':load/release',
    none for a run without an ingest_log row) and what every model recorded ('recorded': model -> run_id ->
    version), read in one query at the first incremental model of an invocation: a model's recorded rows
    change only in its own post-hook, after its plan is decided, and raw tables do not change during a build. -#}
{% macro incremental_snapshot() -%}
    {%- set cache = incremental_cache() -%}
    {%- if 'snapshot' not in cache -%}
        {#- one JSON document (a row per run and model would cost dbt a conversion per value) -#}
        {%- set snapshot_sql -%}
            with current_versions as ({{ run_versions_sql('') }}),
            recorded as (
                select model, json_group_object(run_id, version) as versions
                from {{ incremental_state_relation() }}
                group by model
            )
            select
                (select coalesce(json_group_object(run_id, version)::varchar, '{}') from current_versions),
                (select coalesce(json_group_object(model, versions)::varchar, '{}') from recorded)
        {%- endset -%}
        {%- set row = run_query(snapshot_sql).rows[0] -%}
        {%- do cache.update({'snapshot': {'current': fromjson(row[0]), 'recorded': fromjson(row[1])}}) -%}
    {%- endif -%}
    {{ return(cache['snapshot']) }}
{%- endmacro %}

{#- A predicate on `column` (a run id) selecting the runs this build computes. -#}
{% macro runs_to_build(plan, column) -%}
    {{ incremental_in_list(plan, plan.build, column) }}
{%- endmacro %}

{#- `column` in `values` (true for a full build, false for none). -#}
{% macro incremental_in_list(plan, values, column) -%}
    {%- if plan.mode == 'all' -%}
        true
    {%- elif values | length == 0 -%}
        false
    {%- else -%}
        {{ column }} in {{ incremental_sql_list(values) }}
    {%- endif -%}
{%- endmacro %}

{#- A predicate on `column` (a run id) selecting the runs whose rows may differ from those the model last
    read: the runs to build, and runs without a raw.runs row (a benchmark's imported runs), which have no
    version and count as changed at every build. For a group model's query of the groups to recompute. -#}
{% macro runs_changed(plan, column) -%}
    {%- if plan.mode == 'all' -%}
        true
    {%- else -%}
        ({{ runs_to_build(plan, column) }} or {{ column }} not in (select run_id from raw.runs where run_id is not null))
    {%- endif -%}
{%- endmacro %}

{#- The plan of a group model (config incremental_group) with the groups this build recomputes: for a full
    build every group; else the values of the first column of `groups_sql` (run once, when the model is
    compiled, before its pre-hook deletes anything: it may compare the model's rows with its inputs), kept
    in the plan as 'groups' for the hooks. -#}
{% macro incremental_groups(plan, groups_sql) -%}
    {%- if plan.mode != 'all' and 'groups' not in plan -%}
        {#- one JSON document: dbt would convert every value of a result, and infer its type from the text -#}
        {%- set query -%}
            select coalesce(to_json(list(g order by g))::varchar, '[]')
            from (select distinct g::varchar as g from ({{ groups_sql }}) as group_rows(g) where g is not null)
        {%- endset -%}
        {%- do plan.update({'groups': fromjson(run_query(query).rows[0][0])}) -%}
    {%- endif -%}
    {{ return(plan) }}
{%- endmacro %}

{#- A predicate on `column` (the group column) selecting the groups this build recomputes. -#}
{% macro groups_to_build(plan, column) -%}
    {{ incremental_in_list(plan, plan.get('groups', []), column) }}
{%- endmacro %}

{#- The hooks of every model and seed, added by the project's materializations (view, table, incremental,
    seed) to the node's own before anything runs: dbt's materializations, and the project's, run them
    as configured hooks (inside the model's transaction). They are not a `+pre-hook` / `+post-hook` of
    dbt_project.yml because dbt would then build a context and render both for every model when it
    parses the project (docs/ingest.md#the-first-build). -#}
{% macro incremental_runs_hooks() -%}
    {%- do pre_hooks.append({'sql': '{{ incremental_runs_pre_hook() }}', 'transaction': true, 'index': pre_hooks | length}) -%}
    {%- do post_hooks.append({'sql': '{{ incremental_runs_post_hook() }}', 'transaction': true, 'index': post_hooks | length}) -%}
{%- endmacro %}

{#- pre-hook of every model: an incremental model drops the rows it is about to recompute and those of runs
    that are gone, a group model the rows of the groups it recomputes (inside the model's transaction, so a
    failed build changes nothing). -#}
{% macro incremental_runs_pre_hook() -%}
    {%- if execute and model.config.materialized == 'incremental' and is_incremental() -%}
        {%- set plan = incremental_plan() -%}
        {%- set group = model.config.get('incremental_group') -%}
        {%- if plan.mode == 'all' -%}
            delete from {{ this }}
        {%- elif group -%}
            {%- if 'groups' not in plan -%}
                {{ exceptions.raise_compiler_error(this.identifier ~ ' is configured with incremental_group but its SQL does not call incremental_groups()') }}
            {%- endif -%}
            {%- if plan.groups -%}
                delete from {{ this }} where {{ adapter.quote(group) }} in {{ incremental_sql_list(plan.groups) }}
            {%- endif -%}
        {%- elif plan.build or plan.gone -%}
            delete from {{ this }} where run_id in {{ incremental_sql_list(plan.build + plan.gone) }}
        {%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#- post-hook of every model: an incremental model records the versions of the runs it built, a view or
    table the version of its definition (skip_unchanged.sql). -#}
{% macro incremental_runs_post_hook() -%}
    {%- if execute and model.config.materialized == 'incremental' -%}
        {%- set plan = incremental_plan() -%}
        {%- set name = this.identifier -%}
        {%- if plan.mode == 'all' -%}
            delete from {{ incremental_state_relation() }} where model = '{{ name }}';
            insert into {{ incremental_state_relation() }}
            select '{{ name }}', run_id, version, '{{ invocation_id }}', current_timestamp
            from ({{ run_versions_sql(incremental_checksum(model)) }})
        {%- elif plan.build or plan.gone -%}
            delete from {{ incremental_state_relation() }}
            where model = '{{ name }}' and run_id in {{ incremental_sql_list(plan.build + plan.gone) }};
            {%- if plan.build %}
            insert into {{ incremental_state_relation() }}
            select '{{ name }}', run_id, version, '{{ invocation_id }}', current_timestamp
            from ({{ run_versions_sql(incremental_checksum(model)) }})
            where run_id in {{ incremental_sql_list(plan.build) }}
            {%- endif -%}
        {%- endif -%}
    {%- elif execute and model.config.materialized in ('view', 'table', 'seed') -%}
        {{ node_record_version() }}
    {%- endif -%}
{%- endmacro %}

{#- Data tests of an incremental model, and of the raw run tables, check only the runs of the latest
    build ("where dbt allows": generic tests, whose input goes through this macro); the other runs were
    checked when they were built. `dbt build --full-refresh` tests every row. A test's own `where`
    config still applies. -#}
{% macro duckdb__get_where_subquery(relation) -%}
    {%- set where = config.get('where', '') -%}
    {%- set runs = none -%}
    {%- if execute and not flags.FULL_REFRESH -%}
        {%- set runs = incremental_test_runs(relation) -%}
    {%- endif -%}
    {%- set conditions = [] -%}
    {%- if where -%}{%- do conditions.append('(' ~ where ~ ')') -%}{%- endif -%}
    {%- if runs -%}{%- do conditions.append(runs) -%}{%- endif -%}
    {%- if conditions -%}
        {%- set filtered -%}
            (select * from {{ relation }} where {{ conditions | join(' and ') }}) dbt_subquery
        {%- endset -%}
        {% do return(filtered) %}
    {%- else -%}
        {% do return(relation) %}
    {%- endif -%}
{%- endmacro %}

{#- The run filter of a test on `relation` (none: test every row). -#}
{% macro incremental_test_runs(relation) -%}
    {%- set state = incremental_state_relation() -%}
    {%- if relation.schema == 'raw' and relation.identifier in ('runs', 'trajectories', 'turns', 'tool_calls', 'messages', 'scores') -%}
        {#- raw run tables: the runs whose rows the first per-run model has not built yet -#}
        {%- set first = 'int_core_trajectories_final' -%}
        {%- set node = graph.nodes.get('model.' ~ project_name ~ '.' ~ first) -%}
        {%- set recorded = adapter.get_relation(database=target.database, schema='intermediate', identifier='incremental_runs') -%}
        {%- if node is none or recorded is none -%}{{ return(none) }}{%- endif -%}
        {%- set test_sql -%}
            run_id not in (
                select recorded.run_id
                from {{ state }} as recorded
                join ({{ run_versions_sql(incremental_checksum(node)) }}) as current_versions
                    on current_versions.run_id = recorded.run_id and current_versions.version = recorded.version
                where recorded.model = '{{ first }}'
            )
        {%- endset -%}
        {{ return(test_sql) }}
    {%- endif -%}
    {%- set node = graph.nodes.get('model.' ~ project_name ~ '.' ~ relation.identifier) -%}
    {#- a group model has no run_id: its tests check every row -#}
    {%- if node is none or node.config.materialized != 'incremental' or node.config.get('incremental_group') -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set test_sql -%}
        run_id in (
            select run_id from {{ state }}
            where model = '{{ relation.identifier }}'
                and invocation_id = (select arg_max(invocation_id, built_at) from {{ state }} where model = '{{ relation.identifier }}')
        )
    {%- endset -%}
    {{ return(test_sql) }}
{%- endmacro %}
