-- Evidence contact pooled over the panel (paper Table 11): per condition and evidence_contact value
-- (header, parent, none; zero rows included), over the panel members' trajectories with paper recall:
-- n, share, correct, conversion, summed from the members' evidence_contact_summary rows. When panel
-- members also have a closed_book run, the same (model, item) pairs under closed_book (their
-- closed_book panel run): n_closed_book pairs found, closed_book_correct and closed_book_accuracy
-- (NULL without such pairs).
with pooled as (
    select m.condition, s.evidence_contact, any_value(s.contact_order) as contact_order,
           sum(s.n) as n, sum(s.correct) as correct
    from {{ ref('panel_members') }} as m
    join {{ ref('evidence_contact_summary') }} as s on s.run_id = m.run_id
    group by all
),
recalled as (
    select m.condition, m.model, t.sample_id, t.evidence_contact
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
closed_pairs as (
    select recalled.condition, recalled.evidence_contact,
           count(*) as n_closed_book, count_if(closed.is_correct) as closed_book_correct
    from recalled
    join closed on closed.model = recalled.model and closed.sample_id = recalled.sample_id
    group by all
)
select
    pooled.condition::varchar as condition,
    pooled.evidence_contact::varchar as evidence_contact,
    pooled.contact_order::integer as contact_order,
    pooled.n::integer as n,
    (sum(pooled.n) over (partition by pooled.condition))::integer as n_recalled,
    (pooled.n::double / sum(pooled.n) over (partition by pooled.condition))::double as share,
    pooled.correct::integer as correct,
    (pooled.correct::double / nullif(pooled.n, 0))::double as conversion,
    coalesce(closed_pairs.n_closed_book, 0)::integer as n_closed_book,
    coalesce(closed_pairs.closed_book_correct, 0)::integer as closed_book_correct,
    (closed_pairs.closed_book_correct::double / nullif(closed_pairs.n_closed_book, 0))::double as closed_book_accuracy
from pooled
left join closed_pairs
    on closed_pairs.condition = pooled.condition and closed_pairs.evidence_contact = pooled.evidence_contact
