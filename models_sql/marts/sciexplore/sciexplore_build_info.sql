-- docs/sciexplore.md#marts: one row describing the last build of the SciExplore marts, for the report's
-- freshness check: when they were built, the last ingest load they include and how many SciExplore
-- runs they hold. It depends on every SciExplore mart the report reads, so dbt builds it last.
-- depends_on: {{ ref('sciexplore_summary') }}
-- depends_on: {{ ref('sciexplore_hop_accuracy') }}
-- depends_on: {{ ref('sciexplore_search_effort') }}
-- depends_on: {{ ref('sciexplore_rerun_variance') }}
-- depends_on: {{ ref('sciexplore_judge_agreement') }}
-- depends_on: {{ ref('sciexplore_judge_disagreements') }}
select
    current_timestamp::timestamptz as built_at,
    coalesce((select max(load_id) from {{ sciexplore_source('ingest_log') }}), 0)::bigint as last_load_id,
    (select count(*) from {{ ref('stg_sciexplore__runs') }})::bigint as n_runs
