-- The benchmark-independent accounting checks of every loaded trajectory (all attempts), over the shared
-- tables only (docs/formats.md#trajectory-store): the runs of every benchmark, and trajectories whose run
-- is missing. One row per (run_id, sample_id, attempt, check_name) that fails, with the column the check
-- is about; expected_value is what the other tables imply, observed_value what the trajectory row (or
-- the check) says; boolean checks report 0 and 1. dq_trajectory_accounting adds each benchmark's own
-- checks (benchmark_trajectory_check_models()) and the severity. Checks:
--   budget_used_vs_call_costs     budget_used <> sum(cost) of the attempt's calls
--   total_tokens_vs_components    total_tokens <> prompt + completion + cache_creation
--   total_tokens_vs_turn_sums     total_tokens <> sum over turns of prompt + completion + cache_creation
--   total_turns_vs_turn_rows      total_turns <> number of turn rows
--   turn_call_counts_vs_call_rows sum(turns.n_tool_calls) <> number of call rows
--   calls_without_turn_row        calls whose turn has no turn row (expected 0)
--   call_seq_not_contiguous       seq is not exactly 0..n-1 (expected max seq n-1)
--   budget_used_out_of_range      budget_used < 0 or > the run's budget_total
--   unknown_call_status           calls whose status is outside the docs/formats.md#trajectory-store vocabulary
--   invalid_terminated_by         terminated_by outside the shared vocabulary (terminated_by_values())
--   final_attempt_count           a (run, sample) without exactly one is_final attempt (reported on its
--                                 highest attempt)
--   trajectory_without_run        the run is not loaded (such trajectories are left out of every mart)
with traj as (
    select
        traj.*,
        runs.budget_total,
        runs.run_id is not null as has_run
    from {{ ref('stg_harness__trajectories') }} as traj
    left join {{ ref('stg_harness__runs') }} as runs on runs.run_id = traj.run_id
),
call_aggs as (
    select
        run_id, sample_id, attempt,
        count(*) as n_calls,
        sum(cost) as sum_cost,
        min(seq) as min_seq,
        max(seq) as max_seq,
        count(distinct seq) as n_distinct_seq,
        count_if(status not in {{ sql_values(tool_call_statuses()) }}) as n_unknown_status
    from {{ ref('stg_harness__tool_calls') }}
    group by run_id, sample_id, attempt
),
turn_aggs as (
    select
        run_id, sample_id, attempt,
        count(*) as n_turn_rows,
        sum(n_tool_calls) as sum_turn_calls,
        sum(prompt_tokens + completion_tokens + cache_creation_tokens) as sum_turn_tokens
    from {{ ref('stg_harness__turns') }}
    group by run_id, sample_id, attempt
),
orphan_calls as (
    select calls.run_id, calls.sample_id, calls.attempt, count(*) as n_orphan_calls
    from {{ ref('stg_harness__tool_calls') }} as calls
    anti join {{ ref('stg_harness__turns') }} as turns
        on turns.run_id = calls.run_id and turns.sample_id = calls.sample_id
        and turns.attempt = calls.attempt and turns.turn = calls.turn
    group by calls.run_id, calls.sample_id, calls.attempt
),
joined as (
    select
        traj.*,
        coalesce(call_aggs.n_calls, 0) as n_calls,
        coalesce(call_aggs.sum_cost, 0) as sum_cost,
        call_aggs.min_seq,
        call_aggs.max_seq,
        coalesce(call_aggs.n_distinct_seq, 0) as n_distinct_seq,
        coalesce(call_aggs.n_unknown_status, 0) as n_unknown_status,
        coalesce(turn_aggs.n_turn_rows, 0) as n_turn_rows,
        coalesce(turn_aggs.sum_turn_calls, 0) as sum_turn_calls,
        coalesce(turn_aggs.sum_turn_tokens, 0) as sum_turn_tokens,
        coalesce(orphan_calls.n_orphan_calls, 0) as n_orphan_calls
    from traj
    left join call_aggs using (run_id, sample_id, attempt)
    left join turn_aggs using (run_id, sample_id, attempt)
    left join orphan_calls using (run_id, sample_id, attempt)
)
select run_id, sample_id, attempt, is_final, 'budget_used_vs_call_costs' as check_name,
       'budget_used' as column_name, sum_cost as expected_value, budget_used as observed_value
from joined where budget_used <> sum_cost
union all
select run_id, sample_id, attempt, is_final, 'total_tokens_vs_components', 'total_tokens',
       prompt_tokens + completion_tokens + cache_creation_tokens, total_tokens
from joined where total_tokens <> prompt_tokens + completion_tokens + cache_creation_tokens
union all
select run_id, sample_id, attempt, is_final, 'total_tokens_vs_turn_sums', 'total_tokens', sum_turn_tokens, total_tokens
from joined where total_tokens <> sum_turn_tokens
union all
select run_id, sample_id, attempt, is_final, 'total_turns_vs_turn_rows', 'total_turns', n_turn_rows, total_turns
from joined where total_turns <> n_turn_rows
union all
select run_id, sample_id, attempt, is_final, 'turn_call_counts_vs_call_rows', 'n_tool_calls', n_calls, sum_turn_calls
from joined where sum_turn_calls <> n_calls
union all
select run_id, sample_id, attempt, is_final, 'calls_without_turn_row', 'turn', 0, n_orphan_calls
from joined where n_orphan_calls > 0
union all
select run_id, sample_id, attempt, is_final, 'call_seq_not_contiguous', 'seq', n_calls - 1, max_seq
from joined where n_calls > 0 and (min_seq <> 0 or max_seq <> n_calls - 1 or n_distinct_seq <> n_calls)
union all
select run_id, sample_id, attempt, is_final, 'budget_used_out_of_range', 'budget_used', budget_total, budget_used
from joined where budget_used < 0 or budget_used > budget_total
union all
select run_id, sample_id, attempt, is_final, 'unknown_call_status', 'status', 0, n_unknown_status
from joined where n_unknown_status > 0
union all
select run_id, sample_id, attempt, is_final, 'invalid_terminated_by', 'terminated_by', 0, 1
from joined
where terminated_by is null or terminated_by not in {{ sql_values(terminated_by_values()) }}
union all
select run_id, sample_id, attempt, is_final, 'trajectory_without_run', 'run_id', 0, 1
from joined where not has_run
union all
select run_id, sample_id, max(attempt), bool_or(is_final), 'final_attempt_count', 'is_final', 1, count_if(is_final)
from joined
group by run_id, sample_id
having count_if(is_final) <> 1
