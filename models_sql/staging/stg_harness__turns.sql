select
    run_id::varchar as run_id,
    sample_id::varchar as sample_id,
    attempt::integer as attempt,
    turn::integer as turn,
    role::varchar as role,
    n_tool_calls::integer as n_tool_calls,
    prompt_tokens::bigint as prompt_tokens,
    completion_tokens::bigint as completion_tokens,
    cache_read_tokens::bigint as cache_read_tokens,
    cache_creation_tokens::bigint as cache_creation_tokens,
    cumulative_tokens::bigint as cumulative_tokens,
    budget_before::integer as budget_before,
    budget_after::integer as budget_after,
    content_chars::integer as content_chars,
    t_offset_s::double as t_offset_s
from {{ source('harness', 'turns') }}
