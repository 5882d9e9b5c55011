-- docs/scanners.md#agreement: every attempt a person labelled for a scanner that also has the scanner's
-- finding, both read as yes/no: positive = a value above 0 (true, a count of one or more); a label without a
-- number (a label of a label set) and a finding without one are left out.
select
    labels.scanner::varchar as scanner,
    labels.labeler::varchar as labeler,
    labels.run_id::varchar as run_id,
    labels.sample_id::varchar as sample_id,
    labels.attempt::integer as attempt,
    (results.value > 0)::boolean as scanner_positive,
    (labels.value > 0)::boolean as human_positive
from {{ ref('stg_scanners__human_labels') }} as labels
join {{ ref('stg_scanners__results') }} as results
    on results.run_id = labels.run_id and results.sample_id = labels.sample_id
    and results.attempt = labels.attempt and results.scanner = labels.scanner
where labels.value is not null and results.value is not null
