-- docs/sciexplore.md#judge-agreement: the units two judges both gave a verdict, one row per unit and
-- ordered pair of judges (judge_a < judge_b), with both verdicts.
with j as (
    select * from {{ ref('stg_sciexplore__judgments') }}
)
select
    a.run_id, a.task_id, a.unit, a.slot, a.ref_index, a.row_key, a.column_name,
    a.judge as judge_a, a.verdict as verdict_a, b.judge as judge_b, b.verdict as verdict_b
from j as a
join j as b
    on b.run_id = a.run_id and b.task_id = a.task_id and b.unit = a.unit
    and b.slot is not distinct from a.slot and b.ref_index is not distinct from a.ref_index
    and b.row_key is not distinct from a.row_key and b.column_name is not distinct from a.column_name
    and a.judge < b.judge
