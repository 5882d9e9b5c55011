-- One row per (run, item) that has a final outcome, for every benchmark: the final trajectories of the
-- loaded runs, and the items of runs imported without trajectories (benchmark_imported_item_models(),
-- e.g. SciExplore's responses). is_error: the item ended with an error.
select run_id::varchar as run_id, sample_id::varchar as sample_id, (terminated_by = 'error')::boolean as is_error
from {{ ref('int_core_trajectories_final') }}
{%- for m in benchmark_imported_item_models() %}
union all
select run_id::varchar, sample_id::varchar, is_error::boolean
from {{ ref(m) }}
where run_id not in (select run_id from {{ ref('stg_harness__runs') }})
{%- endfor %}
