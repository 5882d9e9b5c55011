"""Shared error classification and secret redaction for the real LLM backends.

One retry policy is in force (the loop's): the SDKs are built with ``max_retries=0`` and every
provider exception is mapped here, by exception type and HTTP status code only (never by
substrings of messages, reference bug 14), onto the two errors the loop understands:

- :class:`TransientBackendError` for rate limits (429), request timeouts (408), server errors and
  overload (any status >= 500, incl. Anthropic's 529), client-side timeouts and connection
  failures: the loop retries the same turn with backoff, without using a turn;
- :class:`BackendError` for everything else (400/401/403/404/422, undecodable responses): the loop
  records an ``error`` turn.

The message of the raised error is built here from the status code, the exception class and the
provider's own error text, with the API key and base URL redacted, and the original exception is
not chained (its request object and traceback name the endpoint).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from .base import BackendError, TransientBackendError

#: HTTP statuses that are transient besides every status >= 500
TRANSIENT_STATUSES = frozenset({408, 429})
#: longest provider error text kept in an error message
MAX_ERROR_TEXT = 500
REDACTED = "[redacted]"


def is_transient_status(status: int) -> bool:
    return status in TRANSIENT_STATUSES or status >= 500


def secrets_of(api_key: str | None, base_url: str | None) -> tuple[str, ...]:
    """The strings that must never appear in anything a backend writes or raises."""
    from .llm_common import LOCAL_PLACEHOLDER_KEY

    out: list[str] = []
    if api_key and api_key != LOCAL_PLACEHOLDER_KEY:
        out.append(api_key)
    if base_url:
        url = base_url.rstrip("/")
        out.append(url)
        netloc = urlsplit(url).netloc
        if netloc:
            out.append(netloc.rsplit("@", 1)[-1])  # host[:port] without any user:password@
            out.append(netloc)
    # longest first so that a URL is replaced before its host part
    return tuple(sorted({s for s in out if len(s) >= 4}, key=len, reverse=True))


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def _provider_message(body: object, fallback: str) -> str:
    """The provider's error text from an OpenAI/Anthropic-style body ``{"error": {"message": ...}}``."""
    if isinstance(body, dict):
        err: Any = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
        if isinstance(err, str):
            return err
    return fallback


def classify(
    exc: BaseException,
    *,
    status_error: type[BaseException],
    connection_error: type[BaseException],
    always_transient: tuple[type[BaseException], ...] = (),
    secrets: Iterable[str] = (),
) -> BackendError:
    """Map a provider SDK exception onto ``TransientBackendError`` / ``BackendError``.

    ``status_error`` is the SDK's ``APIStatusError`` (has ``status_code`` and ``body``),
    ``connection_error`` its ``APIConnectionError`` (timeouts subclass it); ``always_transient``
    lists further SDK classes that are transient whatever their status (e.g. ``RateLimitError``).
    """
    secrets = tuple(secrets)
    name = type(exc).__name__
    if isinstance(exc, status_error):
        status = int(getattr(exc, "status_code", 0) or 0)
        text = _provider_message(getattr(exc, "body", None), str(exc))
        msg = redact(f"{name}: HTTP {status}: {text}"[:MAX_ERROR_TEXT], secrets)
        if isinstance(exc, always_transient) or is_transient_status(status):
            return TransientBackendError(msg)
        return BackendError(msg)
    if isinstance(exc, connection_error) or isinstance(exc, always_transient):
        # the SDK's own message ("Connection error." / "Request timed out.") names no endpoint
        return TransientBackendError(redact(f"{name}: {getattr(exc, 'message', '') or exc}", secrets))
    return BackendError(redact(f"{name}: {exc}"[:MAX_ERROR_TEXT], secrets))
