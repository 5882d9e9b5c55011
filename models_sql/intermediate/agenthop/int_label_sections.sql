{{ config(materialized="table") }}
-- Materialized as a table (not a view): it is benchmark-only and read by several models, and its
-- containment search over section text is the costliest step of label resolution.
-- Label resolution (docs/metrics.md#label-resolution): one row per (label of item i on gold paper g, matched top-level section of g).
-- A label belongs to gold paper g when its arxiv_id equals g's arXiv id (NULL/'' belongs to no paper).
-- norm(L) = norm(header(s)) is a *header* match; only when no section of g matches L by header does L
-- match by *containment* every section whose lower-cased, white-space-collapsed text contains norm(L).
-- Labels whose norm is empty resolve to nothing (they would otherwise "contain"-match every section).
-- Only gold papers' sections are normalised; section text only for labels without a header match.
with labels_on_gold as (
    select
        labels.sample_id,
        labels.label_index,
        labels.relevance,
        labels.label_section,
        {{ label_norm('labels.label_section') }} as label_norm,
        gold.paper_id,
        gold.arxiv_id
    from {{ ref('stg_benchmark__recall_labels') }} as labels
    join {{ ref('int_gold_papers') }} as gold
        on gold.sample_id = labels.sample_id and gold.arxiv_id = labels.arxiv_id
),
resolvable as (
    select * from labels_on_gold where label_norm <> ''
),
gold_sections as (
    select sections.arxiv_id, sections.section_index, sections.header, sections.section_text
    from {{ ref('stg_benchmark__sections') }} as sections
    where sections.arxiv_id in (select arxiv_id from resolvable)
),
header_matches as (
    select resolvable.*, gold_sections.section_index, 'header' as match_kind
    from resolvable
    join gold_sections
        on gold_sections.arxiv_id = resolvable.arxiv_id
        and {{ label_norm('gold_sections.header') }} = resolvable.label_norm
),
needs_containment as (
    select resolvable.*
    from resolvable
    anti join header_matches
        on header_matches.sample_id = resolvable.sample_id
        and header_matches.label_index = resolvable.label_index
        and header_matches.paper_id = resolvable.paper_id
),
containment_candidates as (
    -- a cheap necessary condition before the costly normalisation of the text: norm(L) holds no white
    -- space but single spaces, so when the normalised text contains it, each of its words lies inside
    -- an unbroken run of the lower-cased text; only sections that some label passes this way are
    -- normalised (the match itself is unchanged, below)
    select sections.arxiv_id, sections.section_index, sections.section_text
    from (select arxiv_id, section_index, section_text, lower(section_text) as text_lower
          from gold_sections
          where arxiv_id in (select arxiv_id from needs_containment)) as sections
    semi join needs_containment
        on needs_containment.arxiv_id = sections.arxiv_id
        and list_bool_and(list_transform(string_split(needs_containment.label_norm, ' '),
                                         lambda word: contains(sections.text_lower, word)))
),
containment_text as (
    select arxiv_id, section_index, {{ text_norm('section_text') }} as text_norm
    from containment_candidates
),
containment_matches as (
    select needs_containment.*, containment_text.section_index, 'containment' as match_kind
    from needs_containment
    join containment_text
        on containment_text.arxiv_id = needs_containment.arxiv_id
        and contains(containment_text.text_norm, needs_containment.label_norm)
)
select sample_id, paper_id, arxiv_id, label_index, relevance, label_section, label_norm, section_index, match_kind
from header_matches
union all
select sample_id, paper_id, arxiv_id, label_index, relevance, label_section, label_norm, section_index, match_kind
from containment_matches
