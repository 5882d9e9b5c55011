-- Paper Tables 4 and 18: per model, accuracy under each ablation condition and the deltas between the
-- condition pairs closed_book -> no_search, no_search -> full and closed_book -> full, in percentage
-- points (delta_pp = 100 * (accuracy_to - accuracy_from)). A condition's accuracy is the mean of its
-- runs' accuracies (replicates weighted equally); pairs appear only when the model has both conditions.
with per_condition as (
    select
        model,
        condition,
        count(*) as n_runs,
        sum(n_items) as n_items,
        avg(accuracy order by run_id) as accuracy  -- ordered: the same bits on every rebuild
    from {{ ref('model_summary') }}
    group by model, condition
),
pairs as (
    select * from (values
        ('closed_book', 'no_search', 1),
        ('no_search', 'full', 2),
        ('closed_book', 'full', 3)
    ) as t(condition_from, condition_to, pair_order)
)
select
    a.model::varchar as model,
    pairs.condition_from::varchar as condition_from,
    pairs.condition_to::varchar as condition_to,
    (pairs.condition_from || '->' || pairs.condition_to)::varchar as condition_pair,
    pairs.pair_order::integer as pair_order,
    a.accuracy::double as accuracy_from,
    b.accuracy::double as accuracy_to,
    (100.0 * (b.accuracy - a.accuracy))::double as delta_pp,
    a.n_runs::integer as n_runs_from,
    b.n_runs::integer as n_runs_to,
    a.n_items::integer as n_items_from,
    b.n_items::integer as n_items_to
from pairs
join per_condition as a on a.condition = pairs.condition_from
join per_condition as b on b.condition = pairs.condition_to and b.model = a.model
