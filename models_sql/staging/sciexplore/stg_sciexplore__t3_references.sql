select
    task_id::varchar as task_id,
    slot::varchar as slot,
    ref_index::integer as ref_index,
    title::varchar as title,
    year::integer as year,
    doi::varchar as doi
from {{ sciexplore_source('sciexplore_t3_references') }}
