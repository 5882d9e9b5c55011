select
    arxiv_id::varchar as arxiv_id,
    title::varchar as title,
    n_sections::integer as n_sections
from {{ source('benchmark', 'papers') }}
