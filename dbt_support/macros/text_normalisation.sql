{#- Text normalisation used by the label-resolution (docs/metrics.md#label-resolution) and reference-compatible
    (evaluate.py, docs/metrics.md#reference-section-hits) section matching.

    White space: the RE2 class below is exactly Python's `str.isspace()` set (ASCII \s, \v,
    \x1c-\x1f, \x85 and the Unicode separators \p{Z}, which include NBSP and U+2000-U+200A), so
    that HTML-derived text with non-breaking spaces collapses like the reference's Python does. -#}

{% macro ws_class() -%}
[\s\p{Z}\x{0b}\x{1c}-\x{1f}\x{85}]
{%- endmacro %}

{#- Python's str.strip(): remove leading and trailing white space. -#}
{% macro py_strip(expr) -%}
regexp_replace({{ expr }}, '^{{ ws_class() }}+|{{ ws_class() }}+$', '', 'g')
{%- endmacro %}

{#- norm(x) of docs/metrics.md#label-resolution: lower-case, drop a leading section number `^[0-9]+(\.[0-9]+)*\.?\s+`,
    collapse white space, trim -- in exactly that order (so a label with leading white space keeps
    its number; see docs/metrics.md). -#}
{% macro label_norm(expr) -%}
trim(regexp_replace(
    regexp_replace(lower({{ expr }}), '^[0-9]+(\.[0-9]+)*\.?{{ ws_class() }}+', ''),
    '{{ ws_class() }}+', ' ', 'g'))
{%- endmacro %}

{#- Containment side of docs/metrics.md#label-resolution: lower-cased, white-space-collapsed section text. -#}
{% macro text_norm(expr) -%}
regexp_replace(lower({{ expr }}), '{{ ws_class() }}+', ' ', 'g')
{%- endmacro %}

{#- The reference's `_normalize_header` (evaluate.py):
    lower + strip; drop `apdx_<letter><digits/dots>:` and `apdx:` prefixes; drop a leading run of
    Roman-numeral letters [ivxlc] optionally followed by '-' and one letter, then white space; drop
    leading digits/dots; ': - – —' become spaces; collapse white space; strip.
    `\p{Nd}` mirrors Python's Unicode `\d`. -#}
{% macro ref_normalize_header(expr) -%}
{%- set ws = ws_class() -%}
{{ py_strip(
    "regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace("
    ~ py_strip("lower(" ~ expr ~ ")")
    ~ ", '^apdx_[a-z][\\p{Nd}.]*:" ~ ws ~ "*', '')"
    ~ ", '^apdx:" ~ ws ~ "*', '')"
    ~ ", '^[ivxlc]+-?[a-z]?" ~ ws ~ "+', '')"
    ~ ", '^[\\p{Nd}.]+" ~ ws ~ "*', '')"
    ~ ", '[:\\-–—]', ' ', 'g')"
    ~ ", '" ~ ws ~ "+', ' ', 'g')"
) }}
{%- endmacro %}

{#- The reference's `_section_match(query, target)`, given precomputed parts:
    raw strings q/t, their lower-cased forms ql/tl and reference-normalised forms qn/tn.
    True iff both raw strings are non-empty and any of: ql in tl or tl in ql; (qn, tn non-empty and)
    qn in tn or tn in qn; qn has >= 2 distinct words and >= 60% of them are words of tn. -#}
{% macro ref_section_match(q, t, ql, tl, qn, tn) -%}
(
    coalesce({{ q }}, '') <> '' and coalesce({{ t }}, '') <> ''
    and (
        contains({{ tl }}, {{ ql }}) or contains({{ ql }}, {{ tl }})
        or ({{ qn }} <> '' and {{ tn }} <> '' and (contains({{ tn }}, {{ qn }}) or contains({{ qn }}, {{ tn }})))
        or ({{ qn }} <> '' and {{ tn }} <> ''
            and len(list_distinct(string_split({{ qn }}, ' '))) >= 2
            and len(list_intersect(list_distinct(string_split({{ qn }}, ' ')), string_split({{ tn }}, ' ')))::double
                / len(list_distinct(string_split({{ qn }}, ' '))) >= 0.6)
    )
)
{%- endmacro %}
