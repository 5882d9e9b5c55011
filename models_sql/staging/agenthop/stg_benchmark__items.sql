-- One row per item; question_type mapped to ST / MT and the cell (st_d1 ... mt_d2) derived.
with source as (
    select * from {{ source('benchmark', 'items') }}
)
select
    sample_id::varchar as sample_id,
    question_type::varchar as question_type_raw,
    case
        when lower(question_type) in ('single-target', 'st') then 'ST'
        when lower(question_type) in ('multi-target', 'mt') then 'MT'
    end as question_type,
    depth::integer as depth,
    lower(case
        when lower(question_type) in ('single-target', 'st') then 'st'
        when lower(question_type) in ('multi-target', 'mt') then 'mt'
    end) || '_d' || depth::varchar as cell,
    reasoning_type::varchar as reasoning_type,
    cognitive_skill::varchar as cognitive_skill,
    venue::varchar as venue,
    consensus_tier::varchar as consensus_tier,
    question::varchar as question,
    options,
    correct_index::integer as correct_index,
    distractor_types,
    seed_paper_id::varchar as seed_paper_id,
    nullif(seed_arxiv_id, '')::varchar as seed_arxiv_id,
    seed_title::varchar as seed_title,
    filter_agreement::varchar as filter_agreement,
    bridge_necessary::boolean as bridge_necessary,
    item_order::integer as item_order
from source
