"""Behaviour scanners (docs/scanners.md): named, versioned classifiers of what agents did, run over the
loaded transcripts by `agenthop-scan` into raw.scanner_results."""
