{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- A table, incremental by run (docs/ingest.md#incremental-builds): read by int_stopping_categories and fct_trajectory.
-- Per final trajectory: gold-paper coverage and evidence (docs/metrics.md#definitions) plus the stopping anchors.
--   paper_recall     every gold paper has >= 1 delivered read (read_section, status ok).
--   section_recall   every gold paper has a delivered read whose resolved_section_index is a section
--                    matched (header or containment) by a `direct` label of (item, paper).
--   evidence_contact NULL unless paper_recall; 'header' when section_recall holds and every gold paper
--                    has a delivered read on a section matched by a direct label *by header*; 'parent'
--                    when section_recall holds otherwise; 'none' when it does not hold.
--   any_gold_read    reference-compatible: >= 1 read_section call on any gold paper whose status is not
--                    rejected_budget / rejected_disabled / not_executed (failed reads count).
-- Items without gold papers have paper_recall = section_recall = false (not vacuously true).
-- Anchors: first_gold_read_seq / _paper_id = the first delivered gold read; coverage_complete_seq = the
-- delivered read after which every gold paper is covered (max over papers of the first delivered read).
with traj as (
    select run_id, sample_id, attempt, question_type, n_gold
    from {{ ref('int_trajectories_final') }}
    where {{ runs_to_build(plan, 'run_id') }}
),
calls as (
    select run_id, sample_id, seq, tool, status, paper_id, is_gold_paper, is_delivered_read, resolved_section_index
    from {{ ref('int_tool_calls_final') }}
    where tool = 'read_section' and is_gold_paper and {{ runs_to_build(plan, 'run_id') }}
),
direct_sections as (
    select sample_id, paper_id, section_index, bool_or(match_kind = 'header') as by_header
    from {{ ref('int_label_sections') }}
    where relevance = 'direct'
    group by sample_id, paper_id, section_index
),
gold_reads as (
    select
        calls.run_id,
        calls.sample_id,
        calls.paper_id,
        calls.seq,
        direct_sections.section_index is not null as hits_direct_label,
        coalesce(direct_sections.by_header, false) as hits_direct_header
    from calls
    left join direct_sections
        on direct_sections.sample_id = calls.sample_id
        and direct_sections.paper_id = calls.paper_id
        and direct_sections.section_index = calls.resolved_section_index
    where calls.is_delivered_read
),
per_gold as (
    select
        traj.run_id,
        traj.sample_id,
        gold.paper_id,
        min(gold_reads.seq) as first_read_seq,
        coalesce(bool_or(gold_reads.hits_direct_label), false) as direct_hit,
        coalesce(bool_or(gold_reads.hits_direct_header), false) as header_hit
    from traj
    join {{ ref('int_gold_papers') }} as gold on gold.sample_id = traj.sample_id
    left join gold_reads
        on gold_reads.run_id = traj.run_id
        and gold_reads.sample_id = traj.sample_id
        and gold_reads.paper_id = gold.paper_id
    group by traj.run_id, traj.sample_id, gold.paper_id
),
per_traj as (
    select
        run_id,
        sample_id,
        count(first_read_seq) as n_gold_read,
        count_if(direct_hit) as n_gold_direct_hit,
        count_if(header_hit) as n_gold_header_hit,
        min(first_read_seq) as first_gold_read_seq,
        arg_min(paper_id, first_read_seq) filter (where first_read_seq is not null) as first_gold_read_paper_id,
        max(first_read_seq) as last_first_read_seq
    from per_gold
    group by run_id, sample_id
),
any_gold as (
    select run_id, sample_id, true as any_gold_read
    from calls
    where status not in ('rejected_budget', 'rejected_disabled', 'not_executed')
    group by run_id, sample_id
),
flags as (
    select
        traj.run_id,
        traj.sample_id,
        traj.question_type,
        traj.n_gold,
        coalesce(per_traj.n_gold_read, 0) as n_gold_read,
        traj.n_gold > 0 and coalesce(per_traj.n_gold_read, 0) = traj.n_gold as paper_recall,
        traj.n_gold > 0 and coalesce(per_traj.n_gold_direct_hit, 0) = traj.n_gold as section_recall,
        traj.n_gold > 0 and coalesce(per_traj.n_gold_header_hit, 0) = traj.n_gold as header_contact,
        coalesce(any_gold.any_gold_read, false) as any_gold_read,
        per_traj.first_gold_read_seq,
        per_traj.first_gold_read_paper_id,
        per_traj.last_first_read_seq
    from traj
    left join per_traj on per_traj.run_id = traj.run_id and per_traj.sample_id = traj.sample_id
    left join any_gold on any_gold.run_id = traj.run_id and any_gold.sample_id = traj.sample_id
)
select
    run_id,
    sample_id,
    question_type,
    n_gold,
    n_gold_read,
    paper_recall,
    section_recall,
    case
        when not paper_recall then null
        when section_recall and header_contact then 'header'
        when section_recall then 'parent'
        else 'none'
    end as evidence_contact,
    any_gold_read,
    first_gold_read_seq,
    first_gold_read_paper_id,
    case when paper_recall then last_first_read_seq end as coverage_complete_seq
from flags
