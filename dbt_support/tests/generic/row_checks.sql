{#- Several checks of one model in one test node (docs/ingest.md#the-first-build): each test node costs
    dbt a parse, two contexts, a compile and its bookkeeping, far more than its query on these tables.
    Each check is the condition of the single test it replaces:

      unique: [[col, ...], ...]        the combination of the columns is unique (unique_combination;
                                       NULLs compare equal, as in GROUP BY)
      not_null: [col, ...]             the column has no NULL
      accepted_values: {col: [v, ...]} every non-NULL value is one of the list
      expressions: [sql, ...]          every row satisfies the SQL boolean (NULL counts as a failure)
      shares_sum_to_one: [{column: col, group_by: [col, ...], tolerance: 1e-9}, ...]
                                       per group, the column sums to 1 within the tolerance

    A passing model returns no row. A failing one stops the test with one message naming the model and
    every check that failed with its count (duplicate keys, rows or groups), e.g.
    `row_checks failed on stopping_behavior: unique (run_id, category): 2 duplicate keys; not_null (share): 1 row`,
    which dbt prints as the test's error (the nodes below it are skipped, as for a failed test). -#}
{% test row_checks(model, unique=[], not_null=[], accepted_values={}, expressions=[], shares_sum_to_one=[]) %}
{%- set checks = [] -%}
{%- for cols in unique -%}
    {%- do checks.append(("unique (" ~ cols | join(", ") ~ ")", "duplicate key",
        "select 1 from checked group by " ~ cols | join(", ") ~ " having count(*) > 1")) -%}
{%- endfor -%}
{%- for col in not_null -%}
    {%- do checks.append(("not_null (" ~ col ~ ")", "row", "select 1 from checked where " ~ col ~ " is null")) -%}
{%- endfor -%}
{%- for col, values in accepted_values.items() -%}
    {%- do checks.append(("accepted_values (" ~ col ~ ")", "row",
        "select 1 from checked where " ~ col ~ " not in " ~ sql_values(values))) -%}
{%- endfor -%}
{%- for expression in expressions -%}
    {%- do checks.append(("expression (" ~ expression ~ ")", "row",
        "select 1 from checked where (" ~ expression ~ ") is not true")) -%}
{%- endfor -%}
{%- for share in shares_sum_to_one -%}
    {%- set group_by = share['group_by'] | join(", ") -%}
    {%- do checks.append(("shares_sum_to_one (" ~ share['column'] ~ " by " ~ group_by ~ ")", "group",
        "select 1 from checked group by " ~ group_by ~ " having abs(coalesce(sum(" ~ share['column'] ~ "), 0) - 1) > "
        ~ share.get('tolerance', 1e-9))) -%}
{%- endfor -%}
{%- if not checks -%}
    {{ exceptions.raise_compiler_error("row_checks needs at least one check (unique, not_null, accepted_values, expressions or shares_sum_to_one)") }}
{%- endif -%}
{#- the model's name for the message: `model` is its relation, or a subquery over it (get_where_subquery) -#}
{%- set found = modules.re.findall('"?([A-Za-z0-9_]+)"?(?:\\s+where\\b|\\s*$)', (model | string) | trim) -%}
{%- set name = found[0] if found else (model | string) -%}
with checked as (
    select * from {{ model }}
),
failures as (
    {%- for label, unit, query in checks %}
    select {{ loop.index }} as position, '{{ label | replace("'", "''") }}' as failed_check, '{{ unit }}' as unit,
        (select count(*) from ({{ query }})) as n
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
),
message as (
    select string_agg(failed_check || ': ' || n || ' ' || unit || case when n > 1 then 's' else '' end, '; '
                      order by position) as text
    from failures
    where n > 0
)
select error('row_checks failed on {{ name }}: ' || text) as failed_checks
from message
where text is not null
{% endtest %}
