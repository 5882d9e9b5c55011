-- Violations of the ingest data-quality rules that were loaded anyway (agenthop-ingest --accept-dq).
-- A warehouse loaded by a version without raw.dq_issues has no violations to show: empty, not an error.
{%- set src = source('ingest', 'dq_issues') %}
{%- if execute and load_relation(src) is none %}
select
    null::bigint as load_id, null::varchar as run_id, null::varchar as table_name, null::varchar as file,
    null::varchar as row_place, null::varchar as column_name, null::varchar as rule,
    null::varchar as severity, null::varchar as value, null::varchar as message
where false
{%- else %}
select
    load_id::bigint as load_id,
    run_id::varchar as run_id,
    table_name::varchar as table_name,
    file::varchar as file,
    "row"::varchar as row_place,
    column_name::varchar as column_name,
    rule::varchar as rule,
    severity::varchar as severity,
    value::varchar as value,
    message::varchar as message
from {{ src }}
{%- endif %}
