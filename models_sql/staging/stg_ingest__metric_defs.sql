-- The metric catalogue as ingest wrote it (schemas/metrics.py): the sources' definitions and the user's
-- settings. A warehouse made before raw.metric_defs existed gains it at its next ingest; until then: empty.
{%- set src = source('ingest', 'metric_defs') %}
{%- if execute and load_relation(src) is none %}
select
    null::varchar as benchmark, null::varchar as metric, null::varchar as kind, null::varchar as direction,
    null::boolean as is_primary, null::varchar as label, null::varchar as source, null::varchar as description,
    null::double as min_value, null::double as max_value
where false
{%- else %}
select
    benchmark::varchar as benchmark,
    metric::varchar as metric,
    kind::varchar as kind,
    direction::varchar as direction,
    is_primary::boolean as is_primary,
    label::varchar as label,
    source::varchar as source,
    description::varchar as description,
    min_value::double as min_value,
    max_value::double as max_value
from {{ src }}
{%- endif %}
