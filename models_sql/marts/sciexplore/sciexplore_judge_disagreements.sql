-- docs/sciexplore.md#judge-agreement: every unit two judges gave different verdicts.
select
    run_id::varchar as run_id,
    task_id::varchar as task_id,
    unit::varchar as unit,
    slot::varchar as slot,
    ref_index::integer as ref_index,
    row_key::varchar as row_key,
    column_name::varchar as column_name,
    judge_a::varchar as judge_a,
    verdict_a::varchar as verdict_a,
    judge_b::varchar as judge_b,
    verdict_b::varchar as verdict_b
from {{ ref('int_sciexplore_judge_pairs') }}
where verdict_a <> verdict_b
