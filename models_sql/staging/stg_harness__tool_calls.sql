-- Every emitted call; tool is the name as emitted (unknown names kept), paper_id as passed.
select
    run_id::varchar as run_id,
    sample_id::varchar as sample_id,
    attempt::integer as attempt,
    turn::integer as turn,
    call_index::integer as call_index,
    seq::integer as seq,
    tool::varchar as tool,
    args_json::varchar as args_json,
    paper_id::varchar as paper_id,
    section_query::varchar as section_query,
    resolved_header::varchar as resolved_header,
    resolved_section_index::integer as resolved_section_index,
    search_query::varchar as search_query,
    answer::varchar as answer,
    cost::integer as cost,
    status::varchar as status,
    output_chars::integer as output_chars,
    budget_after::integer as budget_after,
    error_type::varchar as error_type
from {{ source('harness', 'tool_calls') }}
