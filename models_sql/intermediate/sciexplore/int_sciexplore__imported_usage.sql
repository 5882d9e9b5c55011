-- The usage of SciExplore's runs as the shared marts see it (imported_run_summary takes those without a
-- raw.runs row: the responses files' runs): per run, its responses (n), how they ended (answer: status
-- answered or not_attempted, a response the system gave; error: status error; a responses file records no
-- limit), and their tokens (prompt + completion: a responses file records no cache tokens).
select
    runs.run_id::varchar as run_id,
    runs.is_simulated::boolean as is_simulated,
    count(responses.task_id)::integer as n,
    count(responses.task_id) filter (where responses.status <> 'error')::integer as n_answer,
    0::integer as n_limit,
    count(responses.task_id) filter (where responses.status = 'error')::integer as n_error,
    coalesce(sum(responses.prompt_tokens), 0)::bigint as prompt_tokens,
    coalesce(sum(responses.completion_tokens), 0)::bigint as completion_tokens
from {{ ref('stg_sciexplore__runs') }} as runs
left join {{ ref('stg_sciexplore__responses') }} as responses on responses.run_id = runs.run_id
group by runs.run_id, runs.is_simulated
