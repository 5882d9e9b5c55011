"""Loopback HTTP servers speaking the providers' JSON protocols, for backend tests (no network)."""
