select
    task_id::varchar as task_id,
    type::varchar as type,
    domain::varchar as domain,
    question::varchar as question,
    answer::varchar as answer,
    hops::integer as hops,
    year::integer as year,
    primary_key::varchar as primary_key,
    len(columns)::integer as n_columns,
    task_order::integer as task_order
from {{ sciexplore_source('sciexplore_tasks') }}
