-- Seed / bridge / gold papers of each item; paper_id is the graph node id.
select
    sample_id::varchar as sample_id,
    paper_id::varchar as paper_id,
    nullif(arxiv_id, '')::varchar as arxiv_id,
    role::varchar as role,
    rank::integer as role_rank
from {{ source('benchmark', 'item_papers') }}
