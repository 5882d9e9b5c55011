-- docs/scanners.md#paired-prevalence: per scanner and pair of runs of one benchmark (run_a < run_b), over the
-- items whose final attempt the scanner classified in both (int_core_scanner_findings_final): n_shared, the
-- discordant counts a_only (flagged in run_a only) and b_only, the two prevalences and their difference
-- prevalence_a - prevalence_b = (a_only - b_only) / n_shared, and the exact McNemar p: two-sided binomial
-- test of a_only against a_only + b_only at 1/2, min(1, 2 P(X <= min(a_only, b_only))), 1 without
-- discordant items; binomial terms through lgamma.
with findings as (
    select findings.*, runs.benchmark
    from {{ ref('int_core_scanner_findings_final') }} as findings
    join {{ ref('int_core_runs') }} as runs on runs.run_id = findings.run_id
),
pairs as (
    select
        a.scanner,
        a.benchmark,
        a.run_id as run_a,
        b.run_id as run_b,
        count(*) as n_shared,
        count(*) filter (where a.found and b.found) as n_both,
        count(*) filter (where a.found and not b.found) as a_only,
        count(*) filter (where b.found and not a.found) as b_only,
        count(*) filter (where a.found) as n_a,
        count(*) filter (where b.found) as n_b
    from findings as a
    join findings as b
        on b.scanner = a.scanner and b.benchmark = a.benchmark and b.sample_id = a.sample_id and b.run_id > a.run_id
    group by a.scanner, a.benchmark, a.run_id, b.run_id
),
tails as (
    select
        scanner, run_a, run_b,
        sum(exp(lgamma(a_only + b_only + 1) - lgamma(k + 1) - lgamma(a_only + b_only - k + 1)
                - (a_only + b_only) * ln(2))) as lower_tail
    from pairs, unnest(generate_series(0, least(a_only, b_only))) as t(k)
    where a_only + b_only > 0
    group by scanner, run_a, run_b
)
select
    pairs.scanner::varchar as scanner,
    pairs.benchmark::varchar as benchmark,
    pairs.run_a::varchar as run_a,
    pairs.run_b::varchar as run_b,
    pairs.n_shared::integer as n_shared,
    pairs.n_both::integer as n_both,
    pairs.a_only::integer as a_only,
    pairs.b_only::integer as b_only,
    round(pairs.n_a / pairs.n_shared, 12)::double as prevalence_a,
    round(pairs.n_b / pairs.n_shared, 12)::double as prevalence_b,
    round((pairs.a_only - pairs.b_only) / pairs.n_shared, 12)::double as difference,
    round(coalesce(least(1.0, 2 * tails.lower_tail), 1.0), 12)::double as mcnemar_p
from pairs
left join tails on tails.scanner = pairs.scanner and tails.run_a = pairs.run_a and tails.run_b = pairs.run_b
