-- Top-level sections (section_index is 0-based, as resolved_section_index in tool_calls).
select
    arxiv_id::varchar as arxiv_id,
    section_index::integer as section_index,
    alias::varchar as alias,
    header::varchar as header,
    n_chars::integer as n_chars,
    text::varchar as section_text
from {{ source('benchmark', 'sections') }}
