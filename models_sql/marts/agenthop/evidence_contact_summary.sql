{{ config(materialized="incremental") }}
{%- set plan = incremental_plan() %}
-- docs/metrics.md#evidence-contact per run over the final trajectories with paper_recall (runs with at least one): n and share
-- of each evidence_contact value (header, parent, none; zero rows included) and conversion =
-- mean(is_correct) within the value (NULL when n = 0).
with contacts as (
    select * from (values ('header', 1), ('parent', 2), ('none', 3)) as t(evidence_contact, contact_order)
),
counts as (
    select run_id, evidence_contact, count(*) as n, count_if(is_correct) as correct
    from {{ ref('fct_trajectory') }}
    where paper_recall and {{ runs_to_build(plan, 'run_id') }}
    group by all
),
totals as (
    select run_id, sum(n) as n_recalled from counts group by run_id
)
select
    totals.run_id::varchar as run_id,
    contacts.evidence_contact::varchar as evidence_contact,
    contacts.contact_order::integer as contact_order,
    coalesce(counts.n, 0)::integer as n,
    totals.n_recalled::integer as n_recalled,
    (coalesce(counts.n, 0)::double / totals.n_recalled)::double as share,
    coalesce(counts.correct, 0)::integer as correct,
    (counts.correct::double / nullif(counts.n, 0))::double as conversion
from totals
cross join contacts
left join counts on counts.run_id = totals.run_id and counts.evidence_contact = contacts.evidence_contact
