"""The paper report: every analysis of the AgentHop paper for one panel (agenthop-report paper)."""

#: The benchmark whose runs the paper report analyses.
BENCHMARK = "agenthop"
