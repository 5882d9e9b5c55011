"""SciExplore: scientific information seeking in four task types (docs/sciexplore.md).

Modules: ``release`` (the release format and its loader), ``generator`` (a seeded synthetic
release), ``normalize`` / ``judge`` (the deterministic ``normalized-match`` judge), ``tables`` (the
T4 answer parser), ``responses`` (the responses-file format and its reader), ``simulate`` (a
responses file of simulated systems for the demo), and for runs: ``search_tools`` (offline search
over the corpus), ``paradigms`` (tools and caps per paradigm), ``prompts``, ``answers`` (final text to
status and answer), ``sim_agents`` (simulated systems that search the corpus) and ``episode`` (one
task's side of the agent loop). Its registry entry is :data:`BENCHMARK` (built in ``entry.py`` on first
access, so that importing one of this folder's modules does not import all of them).
"""

from typing import Any

NAME = "sciexplore"
TASK_TYPES = ("T1", "T2", "T3", "T4")
PARADIGMS = ("foundation", "search", "deep_research")
STATUSES = ("answered", "not_attempted", "error")
#: trace tools that count as a search call (search effort, failure taxonomy)
SEARCH_TOOLS = ("web_search", "scholar_search", "db_search")


def __getattr__(name: str) -> Any:
    if name == "BENCHMARK":
        from .entry import BENCHMARK

        return BENCHMARK
    raise AttributeError(name)
