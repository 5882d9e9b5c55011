-- Data quality of the section-recall labels (docs/metrics.md#label-resolution: labels that resolve to nothing are reported, not
-- silently dropped). One row per problem:
--   empty_arxiv_id            the label has no arXiv id, so it belongs to no paper;
--   unknown_arxiv_id          its arXiv id is not the arXiv id of any paper of the item's graph;
--   unknown_relevance         relevance is neither direct nor supporting (ignored by section recall);
--   empty_label               on a gold paper, but norm(label) is empty;
--   gold_paper_without_sections  on a gold paper that has no sections in raw.sections;
--   no_matching_section       on a gold paper, matches no section by header nor by containment;
--   gold_paper_without_direct_label  (label_index NULL) a gold paper with no resolved direct label, so
--                             section recall can never hold for its item.
-- Labels on non-gold papers (seed, bridges) are not problems: the metrics just do not use them.
with labels as (
    select *, {{ label_norm('label_section') }} as label_norm
    from {{ ref('stg_benchmark__recall_labels') }}
),
item_arxiv as (
    select sample_id, arxiv_id from {{ ref('stg_benchmark__graph_nodes') }} where arxiv_id is not null
    union
    select sample_id, arxiv_id from {{ ref('stg_benchmark__item_papers') }} where arxiv_id is not null
),
on_gold as (
    select labels.*, gold.paper_id
    from labels
    join {{ ref('int_gold_papers') }} as gold
        on gold.sample_id = labels.sample_id and gold.arxiv_id = labels.arxiv_id
),
resolved as (
    select distinct sample_id, label_index, paper_id from {{ ref('int_label_sections') }}
),
papers_with_sections as (
    select distinct arxiv_id from {{ ref('stg_benchmark__sections') }}
),
issues as (
    select sample_id, 'empty_arxiv_id' as issue, label_index, null as paper_id, arxiv_id, label_section,
           relevance, label_norm
    from labels
    where arxiv_id is null
    union all
    select sample_id, 'unknown_arxiv_id', label_index, null, arxiv_id, label_section, relevance, label_norm
    from labels
    where arxiv_id is not null
        and not exists (
            select 1 from item_arxiv
            where item_arxiv.sample_id = labels.sample_id and item_arxiv.arxiv_id = labels.arxiv_id
        )
    union all
    select sample_id, 'unknown_relevance', label_index, null, arxiv_id, label_section, relevance, label_norm
    from labels
    where relevance is null or relevance not in ('direct', 'supporting')
    union all
    select sample_id, 'empty_label', label_index, paper_id, arxiv_id, label_section, relevance, label_norm
    from on_gold
    where label_norm = ''
    union all
    select sample_id, 'gold_paper_without_sections', label_index, paper_id, arxiv_id, label_section, relevance,
           label_norm
    from on_gold
    where label_norm <> '' and arxiv_id not in (select arxiv_id from papers_with_sections)
    union all
    select on_gold.sample_id, 'no_matching_section', on_gold.label_index, on_gold.paper_id, on_gold.arxiv_id,
           on_gold.label_section, on_gold.relevance, on_gold.label_norm
    from on_gold
    anti join resolved
        on resolved.sample_id = on_gold.sample_id and resolved.label_index = on_gold.label_index
        and resolved.paper_id = on_gold.paper_id
    where on_gold.label_norm <> '' and on_gold.arxiv_id in (select arxiv_id from papers_with_sections)
    union all
    select gold.sample_id, 'gold_paper_without_direct_label', null, gold.paper_id, gold.arxiv_id, null, null, null
    from {{ ref('int_gold_papers') }} as gold
    where not exists (
        select 1 from {{ ref('int_label_sections') }} as ls
        where ls.sample_id = gold.sample_id and ls.paper_id = gold.paper_id and ls.relevance = 'direct'
    )
)
select
    sample_id::varchar as sample_id,
    issue::varchar as issue,
    label_index::integer as label_index,
    paper_id::varchar as paper_id,
    arxiv_id::varchar as arxiv_id,
    label_section::varchar as label_section,
    relevance::varchar as relevance,
    label_norm::varchar as label_norm
from issues
