-- The loaded benchmark releases, one per benchmark name. A warehouse made before raw.benchmarks existed
-- gains it at its next ingest; until then: empty.
{%- set src = source('ingest', 'benchmarks') %}
{%- if execute and load_relation(src) is none %}
select
    null::varchar as benchmark, null::varchar as version, null::varchar as sha256, null::bigint as n_items,
    null::timestamptz as loaded_at
where false
{%- else %}
select
    benchmark::varchar as benchmark,
    version::varchar as version,
    sha256::varchar as sha256,
    n_items::bigint as n_items,
    loaded_at::timestamptz as loaded_at
from {{ src }}
{%- endif %}
