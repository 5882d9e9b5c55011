-- AgentHop's item groups for the shared marts: the cell (question type x depth, st_d1 ... mt_d2).
select 'agenthop' as benchmark, sample_id, cell as item_group
from {{ ref('stg_benchmark__items') }}
