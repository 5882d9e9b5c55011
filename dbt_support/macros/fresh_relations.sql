{#- A view or table that does not exist yet (a first build, a new model) is created under its own name,
    inside the model's transaction, with its comments and hooks: the steps of dbt's own view and table
    materializations, less those that only move an existing relation out of the way (create under a
    temporary name, rename, drop the old one after the commit). A failed build leaves nothing behind, as
    before: the transaction is rolled back. Existing relations go through dbt's materializations
    (skip_unchanged.sql, table_in_place.sql). -#}
{% macro view_create_new(target_relation) -%}
    {%- do drop_relation_if_exists(load_cached_relation(make_intermediate_relation(target_relation))) -%}
    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}
    {% call statement('main') -%}
        {{ get_create_view_as_sql(target_relation, sql) }}
    {%- endcall %}
    {%- do apply_grants(target_relation, config.get('grants'), should_revoke=false) -%}
    {%- do persist_docs(target_relation, model) -%}
    {{ run_hooks(post_hooks, inside_transaction=True) }}
    {{ adapter.commit() }}
    {{ run_hooks(post_hooks, inside_transaction=False) }}
    {{ return({'relations': [target_relation]}) }}
{%- endmacro %}

{% macro table_create_new(target_relation) -%}
    {%- do drop_relation_if_exists(load_cached_relation(make_intermediate_relation(target_relation))) -%}
    {{ run_hooks(pre_hooks, inside_transaction=False) }}
    {{ run_hooks(pre_hooks, inside_transaction=True) }}
    {%- set partitioned_by = duckdb__get_partitioned_by(target_relation, false) -%}
    {%- set sorted_by = duckdb__get_sorted_by(target_relation, false) -%}
    {% call statement('main', language='sql') -%}
        {{- create_table_as(False, target_relation, sql, 'sql', partitioned_by=partitioned_by, sorted_by=sorted_by) }}
    {%- endcall %}
    {%- do create_indexes(target_relation) -%}
    {{ run_hooks(post_hooks, inside_transaction=True) }}
    {%- do apply_grants(target_relation, config.get('grants'), should_revoke=false) -%}
    {%- do persist_docs(target_relation, model) -%}
    {{ adapter.commit() }}
    {{ run_hooks(post_hooks, inside_transaction=False) }}
    {{ return({'relations': [target_relation]}) }}
{%- endmacro %}
