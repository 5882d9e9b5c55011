"""AgentHop harness: benchmark tools, sandbox, agent loop, backends and the trajectory writer."""

__version__ = "0.1.0"
