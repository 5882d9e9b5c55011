-- docs/scanners.md#prevalence: each scanner's finding on the final attempt of every item of every run it
-- scanned, read as yes/no (found = a value above 0); findings without a value (an llm reply that gave no
-- answer) are left out.
select
    results.run_id::varchar as run_id,
    results.sample_id::varchar as sample_id,
    results.scanner::varchar as scanner,
    results.value::double as value,
    (results.value > 0)::boolean as found
from {{ ref('stg_scanners__results') }} as results
semi join {{ ref('int_core_trajectories_final') }} as final
    on final.run_id = results.run_id and final.sample_id = results.sample_id and final.attempt = results.attempt
where results.value is not null
