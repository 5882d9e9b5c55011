select
    task_id::varchar as task_id,
    row_index::integer as row_index,
    row_key::varchar as row_key,
    "column"::varchar as column_name,
    column_index::integer as column_index,
    value::varchar as value,
    is_primary_key::boolean as is_primary_key
from {{ sciexplore_source('sciexplore_t4_cells') }}
