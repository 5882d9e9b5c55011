-- One row describing this dbt build, for the reports' freshness check (docs/reports.md): when the
-- marts were built and the last ingest load they include. It depends on every mart the reports read,
-- so dbt builds it last and skips it when one of them fails; after a killed or failed build it still
-- describes the previous complete build, and an ingest since then makes the reports refuse to run.
-- depends_on: {{ ref('model_summary') }}
-- depends_on: {{ ref('fct_trajectory') }}
-- depends_on: {{ ref('fct_tool_call') }}
-- depends_on: {{ ref('stopping_behavior') }}
-- depends_on: {{ ref('wrong_read_actions') }}
-- depends_on: {{ ref('tool_transitions') }}
-- depends_on: {{ ref('tool_trigrams') }}
-- depends_on: {{ ref('cell_accuracy') }}
-- depends_on: {{ ref('reasoning_type_accuracy') }}
-- depends_on: {{ ref('termination_summary') }}
-- depends_on: {{ ref('evidence_contact_summary') }}
-- depends_on: {{ ref('rerun_variance') }}
-- depends_on: {{ ref('rerun_item_flips') }}
-- depends_on: {{ ref('condition_deltas') }}
-- depends_on: {{ ref('bigram_effects') }}
-- depends_on: {{ ref('dq_label_resolution') }}
-- depends_on: {{ ref('dq_trajectory_accounting') }}
-- depends_on: {{ ref('panel_members') }}
-- depends_on: {{ ref('panel_paired_counts') }}
-- depends_on: {{ ref('condition_paired_counts') }}
-- depends_on: {{ ref('item_difficulty') }}
-- depends_on: {{ ref('panel_bigram_summary') }}
-- depends_on: {{ ref('panel_evidence_contact') }}
-- depends_on: {{ ref('closed_book_slices') }}
-- depends_on: {{ ref('generation_gaps') }}
-- depends_on: {{ ref('budget_truncated_accuracy') }}
-- depends_on: {{ ref('model_cost') }}
-- depends_on: {{ ref('run_summary') }}
{#- raw.ingest_log is written by agenthop-ingest; a warehouse loaded otherwise has none (last_load_id 0) -#}
{%- set ingest_log = none -%}
{%- if execute -%}
    {%- set ingest_log = adapter.get_relation(database=this.database, schema='raw', identifier='ingest_log') -%}
{%- endif %}
select
    current_timestamp::timestamptz as built_at,
    {% if ingest_log %}coalesce((select max(load_id) from {{ ingest_log }}), 0){% else %}0{% endif %}::bigint as last_load_id,
    {% if ingest_log %}(select max(loaded_at) from {{ ingest_log }}){% else %}null{% endif %}::timestamptz as last_loaded_at,
    (select count(*) from {{ ref('model_summary') }})::bigint as n_runs
