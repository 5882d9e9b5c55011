"""Independent plain-Python re-implementation of the metric definitions in docs/metrics.md, used to cross-check the dbt marts (docs/metrics.md#marts)."""
