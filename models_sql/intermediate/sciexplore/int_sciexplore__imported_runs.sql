-- SciExplore's runs as the shared marts see them (int_core_runs takes those without a raw.runs row: the
-- responses files' runs). Their condition is the paradigm, as for SciExplore's harness runs.
-- Ephemeral: its one reader inlines it (no view, no node of its own in a build; docs/ingest.md#the-first-build).
{{ config(materialized='ephemeral') }}
select
    run_id::varchar as run_id,
    'sciexplore'::varchar as benchmark,
    model::varchar as model,
    backend::varchar as backend,
    paradigm::varchar as condition,
    replicate::integer as replicate
from {{ ref('stg_sciexplore__runs') }}
