-- Human labels of scanner findings as agenthop-ingest --labels wrote them (schemas/scanners.py): one row per
-- (run, sample, attempt, scanner, labeler). A warehouse without labels has no raw.human_labels: empty.
{%- set src = source('scanners', 'human_labels') %}
{%- if execute and load_relation(src) is none %}
select
    null::varchar as run_id, null::varchar as sample_id, null::integer as attempt, null::varchar as scanner,
    null::varchar as labeler, null::double as value, null::varchar as label
where false
{%- else %}
select
    run_id::varchar as run_id,
    sample_id::varchar as sample_id,
    attempt::integer as attempt,
    scanner::varchar as scanner,
    labeler::varchar as labeler,
    value::double as value,
    label::varchar as label
from {{ src }}
{%- endif %}
