-- Citation-neighbourhood nodes; arxiv_id is NULL when the node has none ("" in the release).
select
    sample_id::varchar as sample_id,
    paper_id::varchar as paper_id,
    node_order::integer as node_order,
    nullif(arxiv_id, '')::varchar as arxiv_id,
    title::varchar as title,
    year::integer as year,
    abstract::varchar as abstract,
    has_full_text::boolean as has_full_text
from {{ source('benchmark', 'graph_nodes') }}
