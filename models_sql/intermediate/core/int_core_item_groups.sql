-- The group each item belongs to, as its benchmark defines it (AgentHop: the cell st_d1 ... mt_d2), for
-- the shared marts that show it. One model per benchmark, listed in benchmark_item_group_models()
-- (dbt_support/macros/benchmarks.sql); an item without a group has none here.
{%- set models = benchmark_item_group_models() %}
{%- for m in models %}
select benchmark::varchar as benchmark, sample_id::varchar as sample_id, item_group::varchar as item_group
from {{ ref(m) }}
{%- if not loop.last %}
union all
{%- endif %}
{%- endfor %}
