-- The panel under each condition (paper analyses, docs/metrics.md "Panel"): for every model that has
-- a run under the condition, its run with the lowest replicate (ties broken by run_id). One row per
-- (condition, model); n_replicates counts the model's runs under the condition.
select
    condition::varchar as condition,
    model::varchar as model,
    run_id::varchar as run_id,
    replicate::integer as replicate,
    family::varchar as family,
    tier::varchar as tier,
    generation::varchar as generation,
    is_simulated::boolean as is_simulated,
    n_items::integer as n_items,
    (count(*) over (partition by condition, model))::integer as n_replicates
from {{ ref('model_summary') }}
qualify row_number() over (partition by condition, model order by replicate, run_id) = 1
