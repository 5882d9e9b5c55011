-- AgentHop's metric per final trajectory (docs/metrics.md#metric-catalogue): `correct`, the final answer is
-- the gold option (trajectories.score, a copy of is_correct; 1/0). Its catalogue row:
-- harness/benchmarks/agenthop/entry.py (CORRECT).
select
    run_id::varchar as run_id,
    sample_id::varchar as sample_id,
    'correct'::varchar as metric,
    coalesce(score, is_correct::integer)::double as value
from {{ ref('int_core_trajectories_final') }}
where benchmark = 'agenthop'
