-- Every scorer's value per (run, sample): imported logs with several scorers (the primary scorer's
-- value is also trajectories.score). A warehouse made before raw.scores existed has none: empty.
{%- set src = source('harness', 'scores') %}
{%- if execute and load_relation(src) is none %}
select
    null::varchar as run_id, null::varchar as sample_id, null::varchar as scorer, null::varchar as score_key,
    null::varchar as value_text, null::double as value_num
where false
{%- else %}
select
    run_id::varchar as run_id,
    sample_id::varchar as sample_id,
    scorer::varchar as scorer,
    "key"::varchar as score_key,
    value_text::varchar as value_text,
    value_num::double as value_num
from {{ src }}
{%- endif %}
