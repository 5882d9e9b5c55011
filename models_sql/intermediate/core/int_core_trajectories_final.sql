{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- The trajectory of (run_id, sample_id) of every benchmark: its final attempt (docs/metrics.md#definitions),
-- joined to its run. Only shared columns (docs/formats.md#trajectory-store); a benchmark's own columns
-- and item attributes are joined by that benchmark's models. Should a (run, sample) carry several
-- is_final rows, the highest attempt is used (reported by the data-quality models). Incremental by
-- run (docs/ingest.md#incremental-builds).
with attempt_counts as (
    select run_id, sample_id, count(*) as n_attempts
    from {{ ref('stg_harness__trajectories') }}
    where {{ runs_to_build(plan, 'run_id') }}
    group by run_id, sample_id
),
final as (
    select *
    from {{ ref('stg_harness__trajectories') }}
    where is_final and {{ runs_to_build(plan, 'run_id') }}
    qualify row_number() over (partition by run_id, sample_id order by attempt desc) = 1
)
select
    final.run_id,
    final.sample_id,
    final.attempt,
    attempt_counts.n_attempts,
    runs.benchmark,
    runs.model,
    runs.backend,
    runs.condition,
    runs.replicate,
    runs.is_simulated,
    runs.is_partial,
    final.predicted_answer,
    final.is_correct,
    final.score,
    {{- trajectory_measures('final') }}
from final
join attempt_counts on attempt_counts.run_id = final.run_id and attempt_counts.sample_id = final.sample_id
join {{ ref('stg_harness__runs') }} as runs on runs.run_id = final.run_id
