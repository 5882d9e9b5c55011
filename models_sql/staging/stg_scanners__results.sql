-- Scanner findings as agenthop-scan wrote them (schemas/scanners.py): one row per (run, sample, attempt,
-- scanner). A warehouse that was never scanned has no raw.scanner_results: empty.
{%- set src = source('scanners', 'scanner_results') %}
{%- if execute and load_relation(src) is none %}
select
    null::varchar as run_id, null::varchar as sample_id, null::integer as attempt, null::varchar as scanner,
    null::varchar as scanner_version, null::double as value, null::varchar as label, null::varchar as explanation
where false
{%- else %}
select
    run_id::varchar as run_id,
    sample_id::varchar as sample_id,
    attempt::integer as attempt,
    scanner::varchar as scanner,
    scanner_version::varchar as scanner_version,
    value::double as value,
    label::varchar as label,
    explanation::varchar as explanation
from {{ src }}
{%- endif %}
