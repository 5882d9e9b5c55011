select
    run_id::varchar as run_id,
    sample_id::varchar as sample_id,
    attempt::integer as attempt,
    idx::integer as idx,
    role::varchar as role,
    name::varchar as name,
    tool_call_id::varchar as tool_call_id,
    content::varchar as content
from {{ source('harness', 'messages') }}
