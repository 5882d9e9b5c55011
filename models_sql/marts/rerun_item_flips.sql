-- docs/metrics.md#reruns per item within a rerun group (same model and condition, >= 2 distinct replicates): how many
-- of the group's runs have the item, how many were correct, and whether it flipped (correct in some
-- runs and wrong in others).
with groups as (
    select model, condition
    from {{ ref('model_summary') }}
    group by model, condition
    having count(distinct replicate) >= 2
),
group_runs as (
    select model, condition, count(*) as n_group_runs
    from {{ ref('model_summary') }}
    semi join groups using (model, condition)
    group by model, condition
)
select
    traj.model::varchar as model,
    traj.condition::varchar as condition,
    traj.sample_id::varchar as sample_id,
    any_value(traj.cell)::varchar as cell,
    any_value(group_runs.n_group_runs)::integer as n_group_runs,
    count(*)::integer as n_runs,
    count_if(traj.is_correct)::integer as n_correct,
    (count_if(traj.is_correct)::double / count(*))::double as share_correct,
    (count_if(traj.is_correct) > 0 and count_if(traj.is_correct) < count(*))::boolean as flipped
from {{ ref('fct_trajectory') }} as traj
join group_runs on group_runs.model = traj.model and group_runs.condition = traj.condition
group by traj.model, traj.condition, traj.sample_id
