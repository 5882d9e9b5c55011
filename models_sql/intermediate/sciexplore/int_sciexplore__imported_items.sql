-- The items of SciExplore's runs with a final outcome: the tasks each run has a response to (a task
-- without one is missing); is_error: the response's status is error.
-- Ephemeral: its one reader inlines it (no view, no node of its own in a build; docs/ingest.md#the-first-build).
{{ config(materialized='ephemeral') }}
select
    run_id::varchar as run_id,
    task_id::varchar as sample_id,
    (status = 'error')::boolean as is_error
from {{ ref('stg_sciexplore__responses') }}
