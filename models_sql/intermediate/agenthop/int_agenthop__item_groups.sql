-- AgentHop's item groups for the shared marts: the cell (question type x depth, st_d1 ... mt_d2).
-- Ephemeral: its one reader inlines it (no view, no node of its own in a build; docs/ingest.md#the-first-build).
{{ config(materialized='ephemeral') }}
select 'agenthop' as benchmark, sample_id, cell as item_group
from {{ ref('stg_benchmark__items') }}
