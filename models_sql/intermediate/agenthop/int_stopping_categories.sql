{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- Stopping behaviour (docs/metrics.md#stopping-behaviour, paper Table 9): one row per final trajectory that falls in a scope.
-- S = the calls with seq greater than the anchor's (later calls of the anchor's own turn belong to S).
--   ST      ST items with paper_recall; anchor = first delivered gold read.
--   MT-both MT items with paper_recall; anchor = the first delivered read after which every gold paper
--           is covered (= the latest of the per-paper first delivered reads).
--   For both: read (S has any read_section, any status) > immediate (first call of S is submit_answer)
--           > think (S has think and no navigation call) > other (everything else, including empty S).
--   MT-fail MT items without paper_recall: zero_gold (no gold paper has a delivered read); otherwise
--           anchor = first delivered gold read, on paper g: explored (S has a navigation call or a
--           read_section on a paper other than g -- a read_section with NULL paper_id counts as other)
--           > stayed (S has a read_section, necessarily on g) > premature (anything else, incl. empty S).
-- ST items without paper_recall are in no scope (docs/metrics.md#stopping-behaviour defines none for them).
with coverage as (
    select
        run_id,
        sample_id,
        case
            when question_type = 'ST' and paper_recall then 'ST'
            when question_type = 'MT' and paper_recall then 'MT-both'
            when question_type = 'MT' then 'MT-fail'
        end as scope,
        first_gold_read_seq,
        first_gold_read_paper_id,
        coverage_complete_seq
    from {{ ref('int_trajectory_coverage') }}
    where {{ runs_to_build(plan, 'run_id') }}
),
anchored as (
    select
        *,
        case scope
            when 'ST' then first_gold_read_seq
            when 'MT-both' then coverage_complete_seq
            when 'MT-fail' then first_gold_read_seq
        end as anchor_seq
    from coverage
    where scope is not null
),
after_anchor as (
    select
        anchored.run_id,
        anchored.sample_id,
        count(*) as n_after,
        bool_or(calls.tool = 'read_section') as has_read,
        bool_or(calls.tool = 'think') as has_think,
        bool_or(calls.tool_class = 'navigation') as has_navigation,
        bool_or(calls.tool = 'read_section' and calls.paper_id is distinct from anchored.first_gold_read_paper_id)
            as has_read_other_paper,
        arg_min(calls.tool, calls.seq) as first_tool
    from anchored
    join {{ ref('int_tool_calls_final') }} as calls
        on calls.run_id = anchored.run_id
        and calls.sample_id = anchored.sample_id
        and calls.seq > anchored.anchor_seq
    where {{ runs_to_build(plan, 'calls.run_id') }}
    group by anchored.run_id, anchored.sample_id
)
select
    anchored.run_id,
    anchored.sample_id,
    anchored.scope,
    anchored.anchor_seq,
    case when anchored.scope = 'MT-fail' then anchored.first_gold_read_paper_id end as anchor_paper_id,
    coalesce(after_anchor.n_after, 0) as n_after_anchor,
    case
        when anchored.scope in ('ST', 'MT-both') then
            case
                when coalesce(after_anchor.has_read, false) then 'read'
                when after_anchor.first_tool = 'submit_answer' then 'immediate'
                when coalesce(after_anchor.has_think, false) and not coalesce(after_anchor.has_navigation, false) then 'think'
                else 'other'
            end
        when anchored.anchor_seq is null then 'zero_gold'
        when coalesce(after_anchor.has_navigation, false) or coalesce(after_anchor.has_read_other_paper, false) then 'explored'
        when coalesce(after_anchor.has_read, false) then 'stayed'
        else 'premature'
    end as category
from anchored
left join after_anchor on after_anchor.run_id = anchored.run_id and after_anchor.sample_id = anchored.sample_id
