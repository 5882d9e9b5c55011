-- docs/scanners.md#agreement: each scanner against each labeler over the attempts both classified
-- (int_core_scanner_label_pairs), positive = scanner rows, human = columns. raw agreement p_o = (tp + tn) / n;
-- chance agreement p_e = p_scanner+ * p_human+ + p_scanner- * p_human-; Cohen's kappa = (p_o - p_e) / (1 - p_e),
-- its standard error the large-sample one of Fleiss, Cohen & Everitt (1969) and a 95% Wald interval
-- kappa +- 1.959964 se clipped to [-1, 1] (NULL when p_e = 1: every rating the same); sensitivity = tp / (tp + fn) and
-- specificity = tn / (tn + fp), the human label being the truth (NULL without positives / negatives).
with counts as (
    select
        scanner,
        labeler,
        count(*) as n,
        count(*) filter (where scanner_positive and human_positive) as tp,
        count(*) filter (where scanner_positive and not human_positive) as fp,
        count(*) filter (where not scanner_positive and human_positive) as fn,
        count(*) filter (where not scanner_positive and not human_positive) as tn
    from {{ ref('int_core_scanner_label_pairs') }}
    group by scanner, labeler
),
shares as (
    select
        *,
        tp / n as a, fp / n as b, fn / n as c, tn / n as d,
        (tp + fp) / n as s_pos, (fn + tn) / n as s_neg, (tp + fn) / n as h_pos, (fp + tn) / n as h_neg
    from counts
),
kappa as (
    select
        *,
        a + d as p_o,
        s_pos * h_pos + s_neg * h_neg as p_e,
        case when s_pos * h_pos + s_neg * h_neg < 1
            then (a + d - (s_pos * h_pos + s_neg * h_neg)) / (1 - (s_pos * h_pos + s_neg * h_neg)) end as k
    from shares
),
variance as (
    select
        *,
        case when k is not null then (
            a * power(1 - (s_pos + h_pos) * (1 - k), 2) + d * power(1 - (s_neg + h_neg) * (1 - k), 2)
            + power(1 - k, 2) * (b * power(h_pos + s_neg, 2) + c * power(h_neg + s_pos, 2))
            - power(k - p_e * (1 - k), 2)
        ) / (n * power(1 - p_e, 2)) end as var_k
    from kappa
),
standard_error as (
    -- greatest() skips NULLs: only a defined variance is floored at 0 (rounding can take it below)
    select *, case when var_k is not null then sqrt(greatest(var_k, 0)) end as kappa_se
    from variance
)
select
    scanner::varchar as scanner,
    labeler::varchar as labeler,
    n::integer as n,
    tp::integer as tp,
    fp::integer as fp,
    fn::integer as fn,
    tn::integer as tn,
    round(p_o, 12)::double as raw_agreement,
    round(k, 12)::double as kappa,
    round(kappa_se, 12)::double as kappa_se,
    -- the Wald limits clipped to kappa's range [-1, 1] (greatest/least skip NULLs: only defined ones)
    round(case when kappa_se is not null then greatest(-1, k - 1.959964 * kappa_se) end, 12)::double as kappa_lo,
    round(case when kappa_se is not null then least(1, k + 1.959964 * kappa_se) end, 12)::double as kappa_hi,
    round(case when tp + fn > 0 then tp / (tp + fn) end, 12)::double as sensitivity,
    round(case when tn + fp > 0 then tn / (tn + fp) end, 12)::double as specificity
from standard_error
