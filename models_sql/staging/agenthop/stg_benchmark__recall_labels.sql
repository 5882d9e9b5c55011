-- Section-recall labels; arxiv_id "" becomes NULL (such labels belong to no paper, docs/metrics.md#label-resolution).
select
    sample_id::varchar as sample_id,
    label_index::integer as label_index,
    paper_title::varchar as paper_title,
    nullif(arxiv_id, '')::varchar as arxiv_id,
    label_section::varchar as label_section,
    relevance::varchar as relevance
from {{ source('benchmark', 'recall_labels') }}
