-- docs/metrics.md#metric-catalogue: one row per (benchmark, metric) with values in item_metric_values, as
-- the catalogue (raw.metric_defs) defines it; a metric without a catalogue row gets the defaults:
-- kind binary when every numeric value is 0 or 1, continuous with another number, categorical without
-- numbers; direction higher_is_better (none for categorical); label = the name; source 'inferred';
-- bounds 0 and 1 for binary. Primary: the catalogue's primary metric of the benchmark when it has one
-- with values; else the metric that equals trajectories.score on the most items (ties: the first name).
with observed as (
    select
        benchmark,
        metric,
        count(value) as n_numeric,
        coalesce(bool_and(value in (0, 1)), false) as all_binary
    from {{ ref('item_metric_values') }}
    group by benchmark, metric
),
catalogue as (
    select * from {{ ref('stg_ingest__metric_defs') }}
),
with_primary as (
    select distinct catalogue.benchmark
    from catalogue
    semi join observed on observed.benchmark = catalogue.benchmark and observed.metric = catalogue.metric
    where catalogue.is_primary
),
score_matches as (
    select v.benchmark, v.metric, count(*) as n_match
    from {{ ref('item_metric_values') }} as v
    join {{ ref('int_core_trajectories_final') }} as final on final.run_id = v.run_id and final.sample_id = v.sample_id
    where v.value = final.score
    group by v.benchmark, v.metric
),
default_primary as (
    select observed.benchmark, observed.metric
    from observed
    left join score_matches on score_matches.benchmark = observed.benchmark and score_matches.metric = observed.metric
    where observed.benchmark not in (select benchmark from with_primary)
    qualify row_number() over (
        partition by observed.benchmark order by coalesce(score_matches.n_match, 0) desc, observed.metric
    ) = 1
),
inferred as (
    select
        observed.*,
        case when n_numeric = 0 then 'categorical' when all_binary then 'binary' else 'continuous' end as kind
    from observed
)
select
    inferred.benchmark::varchar as benchmark,
    inferred.metric::varchar as metric,
    coalesce(catalogue.kind, inferred.kind)::varchar as kind,
    coalesce(catalogue.direction, case when inferred.kind = 'categorical' then 'none' else 'higher_is_better' end)::varchar
        as direction,
    (case
        when inferred.benchmark in (select benchmark from with_primary) then coalesce(catalogue.is_primary, false)
        else default_primary.metric is not null
    end)::boolean as is_primary,
    coalesce(catalogue.label, inferred.metric)::varchar as label,
    coalesce(catalogue.source, 'inferred')::varchar as source,
    catalogue.description::varchar as description,
    (case when catalogue.metric is not null then catalogue.min_value when inferred.kind = 'binary' then 0.0 end)::double
        as min_value,
    (case when catalogue.metric is not null then catalogue.max_value when inferred.kind = 'binary' then 1.0 end)::double
        as max_value
from inferred
left join catalogue on catalogue.benchmark = inferred.benchmark and catalogue.metric = inferred.metric
left join default_primary on default_primary.benchmark = inferred.benchmark and default_primary.metric = inferred.metric
