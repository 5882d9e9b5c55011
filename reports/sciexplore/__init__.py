"""`agenthop-report sciexplore`: the SciExplore paper's tables for the loaded systems (docs/sciexplore.md#report)."""

#: The benchmark whose runs the sciexplore report analyses.
BENCHMARK = "sciexplore"
