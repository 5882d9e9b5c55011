-- AgentHop's own accounting checks of its loaded trajectories (all attempts), beside the shared ones of
-- int_core_trajectory_checks; dq_trajectory_accounting reads both (benchmark_trajectory_check_models()).
-- Same columns. Trajectories whose run is missing are checked here too (against AgentHop's items, as the
-- warehouse's default benchmark). Checks:
--   correct_without_valid_prediction  is_correct with predicted_index outside 0..3 (four options)
--   answer_without_submit         terminated_by = 'answer' without an executed submit_answer call
--   submit_without_answer_termination an executed (status ok) submit_answer but terminated_by <> 'answer'
--   trajectory_without_item       the item is not in the loaded release (excluded from marts)
with traj as (
    select
        traj.*,
        items.sample_id is not null as has_item
    from {{ ref('stg_harness__trajectories') }} as traj
    left join {{ ref('stg_harness__runs') }} as runs on runs.run_id = traj.run_id
    left join {{ ref('stg_benchmark__items') }} as items on items.sample_id = traj.sample_id
    where runs.run_id is null or runs.benchmark = 'agenthop'
),
submits as (
    select
        run_id, sample_id, attempt,
        bool_or(tool = 'submit_answer' and status not in ('rejected_budget', 'rejected_disabled', 'not_executed'))
            as has_executed_submit,
        bool_or(tool = 'submit_answer' and status = 'ok') as has_ok_submit
    from {{ ref('stg_harness__tool_calls') }}
    group by run_id, sample_id, attempt
),
joined as (
    select
        traj.*,
        coalesce(submits.has_executed_submit, false) as has_executed_submit,
        coalesce(submits.has_ok_submit, false) as has_ok_submit
    from traj
    left join submits using (run_id, sample_id, attempt)
)
select run_id, sample_id, attempt, is_final, 'correct_without_valid_prediction' as check_name,
       'predicted_index' as column_name, 0 as expected_value, 1 as observed_value
from joined where is_correct and (predicted_index is null or predicted_index not between 0 and 3)
union all
select run_id, sample_id, attempt, is_final, 'answer_without_submit', 'terminated_by', 0, 1
from joined where terminated_by = 'answer' and not has_executed_submit
union all
select run_id, sample_id, attempt, is_final, 'submit_without_answer_termination', 'terminated_by', 0, 1
from joined where has_ok_submit and terminated_by <> 'answer'
union all
select run_id, sample_id, attempt, is_final, 'trajectory_without_item', 'sample_id', 0, 1
from joined where not has_item
