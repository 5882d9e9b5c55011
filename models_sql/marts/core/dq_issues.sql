-- Every known data-quality problem of the loaded trajectories of every benchmark, one generic row each, for
-- reports' warning blocks: the violations agenthop-ingest accepted with --accept-dq (raw.dq_issues, found by
-- the ingest rules of docs/formats.md, detected_by 'ingest') and the failed checks of
-- dq_trajectory_accounting (detected_by 'dbt'). A violation both see is listed once by each.
with accounting as (
    select
        acc.*,
        runs.source_path
    from {{ ref('dq_trajectory_accounting') }} as acc
    left join {{ ref('stg_harness__runs') }} as runs on runs.run_id = acc.run_id
)
select
    'ingest'::varchar as detected_by,
    run_id::varchar as run_id,
    table_name::varchar as table_name,
    file::varchar as file,
    row_place::varchar as row_place,
    column_name::varchar as column_name,
    rule::varchar as rule,
    severity::varchar as severity,
    value::varchar as value,
    message::varchar as message
from {{ ref('stg_ingest__dq_issues') }}
union all
select
    'dbt',
    run_id,
    'trajectories',
    coalesce(source_path, ''),
    'sample ' || sample_id || ' attempt ' || attempt::varchar,
    column_name,
    check_name,
    severity,
    observed_value::varchar,
    check_name || ': expected ' || expected_value::varchar || ', observed ' || observed_value::varchar
from accounting
