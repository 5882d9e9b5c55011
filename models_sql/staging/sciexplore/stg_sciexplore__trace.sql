select
    run_id::varchar as run_id,
    task_id::varchar as task_id,
    seq::integer as seq,
    tool::varchar as tool,
    query::varchar as query,
    target::varchar as target,
    result_chars::bigint as result_chars,
    is_search::boolean as is_search
from {{ sciexplore_source('sciexplore_trace') }}
