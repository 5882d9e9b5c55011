{{ config(materialized="table") }}
-- Materialized as a table (not a view): five downstream models read it; recomputing its joins and
-- window functions over every call for each of them would dominate the build time. It is kept lean
-- (no args_json and other display columns): fct_tool_call adds those from staging.
--
-- Calls of final attempts in execution order (seq), with gold flags, tool classes, neighbours
-- (lag/lead) and the two per-call classifications used by the marts:
--   wrong_read_next_action (docs/metrics.md#wrong-read-actions): for a delivered read (read_section, status ok) on a non-gold
--     paper that has a next call: recover (next is read_section on a gold paper, any status), stay
--     (read_section on a non-gold paper, including a NULL paper_id), think, submit, renav (navigation
--     tool), other (unknown tool name). Only the immediately next call counts: a think is 'think', it
--     is not skipped to look at what follows.
--   submit_within_3_after (docs/metrics.md#early-submit): this call is a delivered non-gold read at position k and a
--     submit_answer (any status) is at a position in (k, k+3].
with calls as (
    select
        calls.run_id,
        calls.sample_id,
        calls.attempt,
        calls.turn,
        calls.seq,
        calls.tool,
        calls.paper_id,
        gold.paper_id is not null as is_gold_paper,
        calls.tool = 'read_section' and calls.status = 'ok' as is_delivered_read,
        calls.section_query,
        calls.resolved_header,
        calls.resolved_section_index,
        calls.status,
        -- carried for fct_tool_call, so that it does not join the raw calls a second time
        calls.call_index,
        calls.args_json,
        calls.cost,
        calls.output_chars,
        calls.budget_after,
        calls.search_query,
        calls.answer
    from {{ ref('stg_harness__tool_calls') }} as calls
    semi join {{ ref('int_trajectories_final') }} as traj
        on traj.run_id = calls.run_id and traj.sample_id = calls.sample_id and traj.attempt = calls.attempt
    left join {{ ref('int_gold_papers') }} as gold
        on gold.sample_id = calls.sample_id and gold.paper_id = calls.paper_id
),
windowed as (
    select
        *,
        row_number() over w - 1 as pos,
        lag(tool) over w as prev_tool,
        lead(tool, 1) over w as next_tool,
        lead(tool, 2) over w as next_tool_2,
        lead(tool, 3) over w as next_tool_3,
        lead(is_gold_paper) over w as next_is_gold_paper
    from calls
    window w as (partition by run_id, sample_id order by seq)
)
select
    run_id, sample_id, attempt, turn, seq, pos,
    tool,
    {{ tool_class('tool') }} as tool_class,
    paper_id, is_gold_paper, is_delivered_read,
    section_query, resolved_header, resolved_section_index, status,
    call_index, args_json, cost, output_chars, budget_after, search_query, answer,
    prev_tool, next_tool,
    case
        when is_delivered_read and not is_gold_paper and next_tool is not null then
            case
                when next_tool = 'read_section' and next_is_gold_paper then 'recover'
                when next_tool = 'read_section' then 'stay'
                when next_tool = 'think' then 'think'
                when next_tool = 'submit_answer' then 'submit'
                when next_tool in {{ navigation_tools() }} then 'renav'
                else 'other'
            end
    end as wrong_read_next_action,
    coalesce(
        is_delivered_read and not is_gold_paper
        and 'submit_answer' in (next_tool, next_tool_2, next_tool_3),
        false
    ) as submit_within_3_after
from windowed
