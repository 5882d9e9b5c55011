-- One row per (item, gold paper). A paper is identified by its graph node id (docs/metrics.md#definitions); its arXiv id
-- comes from the item's graph node (falling back to item_papers.arxiv_id when the node has none).
-- item_arxiv_id is the qa file's gold_arxiv_ids entry, which the reference's metrics use.
with gold as (
    select sample_id, paper_id, arxiv_id as item_arxiv_id, role_rank
    from {{ ref('stg_benchmark__item_papers') }}
    where role = 'gold'
    qualify row_number() over (partition by sample_id, paper_id order by role_rank) = 1
)
select
    gold.sample_id,
    gold.paper_id,
    gold.role_rank as gold_rank,
    coalesce(nodes.arxiv_id, gold.item_arxiv_id) as arxiv_id,
    gold.item_arxiv_id
from gold
left join {{ ref('stg_benchmark__graph_nodes') }} as nodes
    on nodes.sample_id = gold.sample_id and nodes.paper_id = gold.paper_id
