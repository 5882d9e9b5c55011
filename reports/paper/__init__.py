"""The paper report: every analysis of the AgentHop paper for one panel (agenthop-report paper)."""
