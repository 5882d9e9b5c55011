select
    run_id::varchar as run_id,
    model::varchar as model,
    paradigm::varchar as paradigm,
    replicate::integer as replicate,
    backend::varchar as backend,
    benchmark_sha256::varchar as benchmark_sha256,
    simulated::boolean as is_simulated
from {{ sciexplore_source('sciexplore_runs') }}
