-- docs/metrics.md#reruns per item within a rerun group (same benchmark, model and condition, >= 2 distinct
-- replicates), for every benchmark: how many of the group's runs have the item, how many were correct
-- and whether it flipped (correct in some runs and wrong in others), and the spread of its score
-- (max - min over the runs; graded scores). cell is the item's group as its benchmark defines it.
with runs as (
    select distinct benchmark, run_id, model, condition, replicate
    from {{ ref('int_core_trajectories_final') }}
),
groups as (
    select benchmark, model, condition, count(*) as n_group_runs
    from runs
    group by benchmark, model, condition
    having count(distinct replicate) >= 2
)
select
    traj.benchmark::varchar as benchmark,
    traj.model::varchar as model,
    traj.condition::varchar as condition,
    traj.sample_id::varchar as sample_id,
    any_value(item_groups.item_group)::varchar as cell,
    any_value(groups.n_group_runs)::integer as n_group_runs,
    count(*)::integer as n_runs,
    count_if(traj.is_correct)::integer as n_correct,
    (count_if(traj.is_correct)::double / count(*))::double as share_correct,
    (count_if(traj.is_correct) > 0 and count_if(traj.is_correct) < count(*))::boolean as flipped,
    avg(traj.score)::double as mean_score,
    (max(traj.score) - min(traj.score))::double as score_spread
from {{ ref('int_core_trajectories_final') }} as traj
join groups using (benchmark, model, condition)
left join {{ ref('int_core_item_groups') }} as item_groups using (benchmark, sample_id)
group by traj.benchmark, traj.model, traj.condition, traj.sample_id
