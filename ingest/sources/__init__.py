"""Input sources of ingest, one module per format (harness runs, reference JSON, releases, imported logs)."""
