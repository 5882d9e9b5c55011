-- docs/sciexplore.md#judges: the (run, judge) pairs every SciExplore mart has rows for: each run under
-- the built-in normalized-match judge, and under every other judge with at least one verdict on it.
select run_id, 'normalized-match'::varchar as judge
from {{ ref('stg_sciexplore__runs') }}
union
select distinct judgments.run_id, judgments.judge
from {{ ref('stg_sciexplore__judgments') }} as judgments
semi join {{ ref('stg_sciexplore__runs') }} as runs on runs.run_id = judgments.run_id
