"""The report core: the sections every benchmark's runs get (compare, reruns, item pages with the
transcript), read from the shared marts (models_sql/marts/core/) and the shared intermediate and
staging models; a benchmark adds its own sections through :mod:`.registry`.

Modules: :mod:`.marts` (the relations read and their columns), :mod:`.runs` (runs of run_summary),
:mod:`.queries` (the SQL), :mod:`.outcome` (binary or graded, the paired test that fits),
:mod:`.pooling` (run groups, per-item values pooled over epochs or replicates, the paired tests over
items), :mod:`.compare`, :mod:`.reruns`, :mod:`.item`, :mod:`.leaderboard` (the pages), :mod:`.pages` (the
commands), :mod:`.registry` (benchmark sections).
Nothing here names a benchmark's tools, tables or columns (tests/test_core_boundary.py).
"""
