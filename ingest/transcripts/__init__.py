"""Transcript analysis over the shared run tables: the text units and their index (index.py) and the
search engine (search.py) that `agenthop-report search` and pattern scanners share (docs/search.md)."""
