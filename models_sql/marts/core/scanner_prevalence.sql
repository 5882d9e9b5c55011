-- docs/scanners.md#prevalence: per run and scanner, over the final attempts the scanner classified
-- (int_core_scanner_findings_final): n, n_found and prevalence = n_found / n. Where people labelled the
-- scanner's findings (int_core_scanner_label_pairs, every labeler pooled), its sensitivity Se = tp / n_pos
-- and specificity Sp = tn / n_neg, and the Rogan-Gladen prevalence (prevalence + Sp - 1) / (Se + Sp - 1),
-- clipped to [0, 1], defined when J = Se + Sp - 1 > 0. Its standard error carries the uncertainty of Se and
-- Sp (delta method, independent samples): sqrt([p(1-p)/n + pi^2 Se(1-Se)/n_pos + (1-pi)^2 Sp(1-Sp)/n_neg]
-- / J^2), pi the unclipped estimate, and the 95% Wald interval pi +- 1.959964 se, clipped to [0, 1].
with runs as (
    select
        run_id,
        scanner,
        count(*) as n,
        count(*) filter (where found) as n_found
    from {{ ref('int_core_scanner_findings_final') }}
    group by run_id, scanner
),
accuracy as (
    select
        scanner,
        count(*) filter (where human_positive) as n_pos,
        count(*) filter (where not human_positive) as n_neg,
        count(*) filter (where human_positive and scanner_positive) as tp,
        count(*) filter (where not human_positive and not scanner_positive) as tn
    from {{ ref('int_core_scanner_label_pairs') }}
    group by scanner
),
rates as (
    select
        runs.*,
        runs.n_found / runs.n as p,
        accuracy.n_pos,
        accuracy.n_neg,
        case when accuracy.n_pos > 0 then accuracy.tp / accuracy.n_pos end as se,
        case when accuracy.n_neg > 0 then accuracy.tn / accuracy.n_neg end as sp
    from runs
    left join accuracy on accuracy.scanner = runs.scanner
),
corrected as (
    select
        *,
        case when se + sp - 1 > 0 then (p + sp - 1) / (se + sp - 1) end as pi
    from rates
),
uncertainty as (
    select
        *,
        case when pi is not null then sqrt(
            (p * (1 - p) / n + power(pi, 2) * se * (1 - se) / n_pos + power(1 - pi, 2) * sp * (1 - sp) / n_neg)
            / power(se + sp - 1, 2)
        ) end as pi_se
    from corrected
)
select
    uncertainty.run_id::varchar as run_id,
    runs.benchmark::varchar as benchmark,
    runs.model::varchar as model,
    uncertainty.scanner::varchar as scanner,
    n::integer as n,
    n_found::integer as n_found,
    round(p, 12)::double as prevalence,
    coalesce(n_pos, 0)::integer as n_labelled_pos,
    coalesce(n_neg, 0)::integer as n_labelled_neg,
    round(se, 12)::double as sensitivity,
    round(sp, 12)::double as specificity,
    -- greatest/least skip NULLs: clip only defined values
    round(case when pi is not null then least(greatest(pi, 0), 1) end, 12)::double as corrected_prevalence,
    round(pi_se, 12)::double as corrected_se,
    round(case when pi is not null then least(greatest(pi - 1.959964 * pi_se, 0), 1) end, 12)::double as corrected_lo,
    round(case when pi is not null then least(greatest(pi + 1.959964 * pi_se, 0), 1) end, 12)::double as corrected_hi
from uncertainty
join {{ ref('int_core_runs') }} as runs on runs.run_id = uncertainty.run_id
