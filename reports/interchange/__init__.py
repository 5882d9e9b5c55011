"""Interchange formats: Every Eval Ever and ATIF exports of warehouse runs (docs/interchange.md)."""
