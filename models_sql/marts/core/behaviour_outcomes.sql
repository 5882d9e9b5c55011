-- docs/scanners.md#behaviour-and-outcomes: per run, scanner and metric, the items whose final attempt the
-- scanner flagged (found) against the items it did not, over the items with a value of the metric
-- (item_metric_values): n_with, n_without, the metric's mean in each, difference = mean_with - mean_without,
-- and, for a binary metric (metric_defs.kind), Fisher's exact two-sided p of the 2x2 table (found x value):
-- the sum of the hypergeometric probabilities, margins fixed, of every table no more probable than the one
-- observed (relative tolerance 1e-7), computed through lgamma; NULL when a margin is empty.
with joined as (
    select
        findings.run_id,
        findings.scanner,
        values.benchmark,
        values.model,
        values.metric,
        findings.found,
        values.value
    from {{ ref('int_core_scanner_findings_final') }} as findings
    join {{ ref('item_metric_values') }} as values
        on values.run_id = findings.run_id and values.sample_id = findings.sample_id
    where values.value is not null
),
cells as (
    select
        joined.run_id,
        joined.scanner,
        joined.benchmark,
        joined.model,
        joined.metric,
        coalesce(defs.kind = 'binary', false) as is_binary,
        count(*) filter (where found) as n_with,
        count(*) filter (where not found) as n_without,
        avg(value) filter (where found) as mean_with,
        avg(value) filter (where not found) as mean_without,
        count(*) filter (where found and value = 1) as a,
        count(*) filter (where not found and value = 1) as c
    from joined
    left join {{ ref('metric_defs') }} as defs on defs.benchmark = joined.benchmark and defs.metric = joined.metric
    group by all
),
margins as (
    select *, n_with + n_without as n_all, a + c as n_success
    from cells
),
tables as (
    -- every table with the observed margins: x successes among the flagged items
    select
        margins.run_id, margins.scanner, margins.metric, x,
        lgamma(n_with + 1) - lgamma(x + 1) - lgamma(n_with - x + 1)
        + lgamma(n_without + 1) - lgamma(n_success - x + 1) - lgamma(n_without - n_success + x + 1)
        - (lgamma(n_all + 1) - lgamma(n_success + 1) - lgamma(n_all - n_success + 1)) as log_p,
        x = margins.a as observed
    from margins,
        unnest(generate_series(greatest(0, n_success - n_without), least(n_with, n_success))) as t(x)
    where is_binary and n_with > 0 and n_without > 0
),
with_observed as (
    select *, max(log_p) filter (where observed) over (partition by run_id, scanner, metric) as log_p_observed
    from tables
),
fisher as (
    select run_id, scanner, metric, least(1.0, sum(exp(log_p)) filter (where log_p <= log_p_observed + ln(1 + 1e-7))) as p
    from with_observed
    group by run_id, scanner, metric
)
select
    margins.run_id::varchar as run_id,
    margins.benchmark::varchar as benchmark,
    margins.model::varchar as model,
    margins.scanner::varchar as scanner,
    margins.metric::varchar as metric,
    margins.n_with::integer as n_with,
    margins.n_without::integer as n_without,
    round(margins.mean_with, 12)::double as mean_with,
    round(margins.mean_without, 12)::double as mean_without,
    round(margins.mean_with - margins.mean_without, 12)::double as difference,
    round(fisher.p, 12)::double as fisher_p
from margins
left join fisher on fisher.run_id = margins.run_id and fisher.scanner = margins.scanner and fisher.metric = margins.metric
