"""AgentHop: four-option questions answered by navigating a citation graph (docs/benchmark.md)."""
