select
    sample_id::varchar as sample_id,
    src_paper_id::varchar as src_paper_id,
    dst_paper_id::varchar as dst_paper_id,
    rank::integer as edge_rank
from {{ source('benchmark', 'graph_edges') }}
