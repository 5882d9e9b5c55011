"""`agenthop-report sciexplore`: the SciExplore paper's tables for the loaded systems (docs/sciexplore.md#report)."""
