-- Evidence contact pooled over the panel (paper Table 11): per condition and evidence_contact value
-- (header, parent, none; zero rows included), over the panel members' trajectories with paper recall:
-- n, share, correct, conversion. When panel members also have a closed_book run, the same (model, item)
-- pairs under closed_book (their closed_book panel run): n_closed_book pairs found, closed_book_correct
-- and closed_book_accuracy (NULL without such pairs).
with contacts as (
    select * from (values ('header', 1), ('parent', 2), ('none', 3)) as t(evidence_contact, contact_order)
),
recalled as (
    select m.condition, m.model, t.sample_id, t.evidence_contact, t.is_correct
    from {{ ref('panel_members') }} as m
    join {{ ref('fct_trajectory') }} as t on t.run_id = m.run_id
    where t.paper_recall
),
closed as (
    select m.model, t.sample_id, t.is_correct
    from {{ ref('panel_members') }} as m
    join {{ ref('fct_trajectory') }} as t on t.run_id = m.run_id
    where m.condition = 'closed_book'
),
counts as (
    select
        recalled.condition, recalled.evidence_contact,
        count(*) as n,
        count_if(recalled.is_correct) as correct,
        count(closed.sample_id) as n_closed_book,
        count_if(closed.is_correct) as closed_book_correct
    from recalled
    left join closed on closed.model = recalled.model and closed.sample_id = recalled.sample_id
    group by all
),
totals as (
    select condition, sum(n) as n_recalled from counts group by condition
)
select
    totals.condition::varchar as condition,
    contacts.evidence_contact::varchar as evidence_contact,
    contacts.contact_order::integer as contact_order,
    coalesce(counts.n, 0)::integer as n,
    totals.n_recalled::integer as n_recalled,
    (coalesce(counts.n, 0)::double / totals.n_recalled)::double as share,
    coalesce(counts.correct, 0)::integer as correct,
    (counts.correct::double / nullif(counts.n, 0))::double as conversion,
    coalesce(counts.n_closed_book, 0)::integer as n_closed_book,
    coalesce(counts.closed_book_correct, 0)::integer as closed_book_correct,
    (counts.closed_book_correct::double / nullif(counts.n_closed_book, 0))::double as closed_book_accuracy
from totals
cross join contacts
left join counts on counts.condition = totals.condition and counts.evidence_contact = contacts.evidence_contact
