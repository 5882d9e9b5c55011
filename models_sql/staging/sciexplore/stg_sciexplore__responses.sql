select
    run_id::varchar as run_id,
    task_id::varchar as task_id,
    status::varchar as status,
    answer_text::varchar as answer_text,
    answer_json::varchar as answer_json,
    parse_error::varchar as parse_error,
    format_ok::boolean as format_ok,
    prompt_tokens::bigint as prompt_tokens,
    completion_tokens::bigint as completion_tokens,
    wall_time_s::double as wall_time_s
from {{ sciexplore_source('sciexplore_responses') }}
