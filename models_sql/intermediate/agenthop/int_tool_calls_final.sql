{{ config(materialized="incremental", on_schema_change="sync_all_columns") }}
{%- set plan = incremental_plan() %}
-- A table, incremental by run (docs/ingest.md#incremental-builds): five downstream models read it.
-- Only the columns those models need: fct_tool_call takes the display columns (args_json, answer, ...)
-- from staging itself, so the calls' longest texts are not written twice on a first build. A table
-- written by an earlier version, with those columns, loses them at the next build (sync_all_columns;
-- every run is rebuilt then, as the model's SQL changed).
--
-- AgentHop's calls of final attempts: the shared int_core_tool_calls_final (which calls, their order
-- pos and neighbours prev_tool / next_tool) of AgentHop's trajectories, with AgentHop's own columns
-- from staging, gold flags, tool classes and the two per-call classifications used by the marts:
--   wrong_read_next_action (docs/metrics.md#wrong-read-actions): for a delivered read (read_section, status ok) on a non-gold
--     paper that has a next call: recover (next is read_section on a gold paper, any status), stay
--     (read_section on a non-gold paper, including a NULL paper_id), think, submit, renav (navigation
--     tool), other (unknown tool name). Only the immediately next call counts: a think is 'think', it
--     is not skipped to look at what follows.
--   submit_within_3_after (docs/metrics.md#early-submit): this call is a delivered non-gold read at position k and a
--     submit_answer (any status) is at a position in (k, k+3].
with core_calls as (
    select core.run_id, core.sample_id, core.attempt, core.turn, core.seq, core.pos, core.tool, core.status,
           core.cost, core.prev_tool, core.next_tool
    from {{ ref('int_core_tool_calls_final') }} as core
    semi join (
        select run_id, sample_id, attempt from {{ ref('int_trajectories_final') }} where {{ runs_to_build(plan, 'run_id') }}
    ) as traj
        on traj.run_id = core.run_id and traj.sample_id = core.sample_id and traj.attempt = core.attempt
    where {{ runs_to_build(plan, 'core.run_id') }}
),
calls as (
    select
        core_calls.*,
        own.paper_id,
        gold.paper_id is not null as is_gold_paper,
        core_calls.tool = 'read_section' and core_calls.status = 'ok' as is_delivered_read,
        own.section_query,
        own.resolved_header,
        own.resolved_section_index
    from core_calls
    join {{ ref('stg_harness__tool_calls') }} as own
        on own.run_id = core_calls.run_id and own.sample_id = core_calls.sample_id
        and own.attempt = core_calls.attempt and own.seq = core_calls.seq
    left join {{ ref('int_gold_papers') }} as gold
        on gold.sample_id = core_calls.sample_id and gold.paper_id = own.paper_id
    where {{ runs_to_build(plan, 'own.run_id') }}
),
sequences as (
    -- each trajectory's calls in order, as lists: the calls two and three ahead and whether the next is on
    -- a gold paper are read from them by position (pos runs 0, 1, ... within a trajectory, and lists from
    -- 1); cheaper than window functions, which would sort every call with all its columns
    select run_id, sample_id, list(tool order by pos) as tools, list(is_gold_paper order by pos) as gold_flags
    from calls
    group by run_id, sample_id
),
windowed as (
    select
        calls.*,
        sequences.tools[calls.pos + 3] as next_tool_2,
        sequences.tools[calls.pos + 4] as next_tool_3,
        sequences.gold_flags[calls.pos + 2] as next_is_gold_paper
    from calls
    join sequences on sequences.run_id = calls.run_id and sequences.sample_id = calls.sample_id
)
select
    run_id, sample_id, attempt, turn, seq, pos,
    tool,
    {{ tool_class('tool') }} as tool_class,
    paper_id, is_gold_paper, is_delivered_read,
    section_query, resolved_header, resolved_section_index, status,
    cost,
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
