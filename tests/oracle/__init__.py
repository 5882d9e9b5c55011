"""Independent plain-Python re-implementation of SPEC §5, used to cross-check the dbt marts (SPEC §6)."""
