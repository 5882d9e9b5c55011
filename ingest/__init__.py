"""agenthop-ingest: load benchmarks and trajectories into the DuckDB warehouse."""
