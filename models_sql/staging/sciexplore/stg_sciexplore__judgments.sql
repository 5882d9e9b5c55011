select
    run_id::varchar as run_id,
    task_id::varchar as task_id,
    unit::varchar as unit,
    slot::varchar as slot,
    ref_index::integer as ref_index,
    row_key::varchar as row_key,
    "column"::varchar as column_name,
    verdict::varchar as verdict,
    judge::varchar as judge,
    judge_version::varchar as judge_version,
    rationale::varchar as rationale
from {{ sciexplore_source('judgments') }}
