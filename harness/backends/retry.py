"""Shared error classification and secret redaction for the real LLM backends.

One retry policy is in force (the loop's): the SDKs are built with ``max_retries=0`` and every
provider exception is mapped here, by exception type and HTTP status code only (never by
substrings of messages, as the reference harness classified them), onto the two errors the loop
understands:

- :class:`TransientBackendError` for rate limits (429), request timeouts (408), server errors and
  overload (any status >= 500, incl. Anthropic's 529), client-side timeouts and connection
  failures: the loop retries the same turn with backoff, without using a turn;
- :class:`BackendError` for everything else (400/401/403/404/422, undecodable responses): the loop
  records an ``error`` turn.

The message of the raised error is built here from the status code, the exception class and the
provider's own error text, with the API key and base URL redacted, and the original exception is
not chained (its request object and traceback name the endpoint).

Waits (docs/backends.md, "Retries and rate limits"): a transient error carries the delay the server
asked for, if any (:func:`delay_from_headers`: ``retry-after-ms``, ``Retry-After``,
``x-ratelimit-reset-*``, ``anthropic-ratelimit-*-reset``; :func:`parse_duration` for duration strings
such as Gemini's RetryInfo ``retryDelay: "2s"``), capped at :data:`MAX_SERVER_DELAY_S`; the loop waits
that long, or :func:`backoff_delay` (exponential with full jitter from 1 s) when the server named none.
A backend whose SDK carries the delay elsewhere passes its own ``suggested_delay(exc)`` to
:func:`classify`.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from .base import BackendError, TransientBackendError

#: HTTP statuses that are transient besides every status >= 500
TRANSIENT_STATUSES = frozenset({408, 429})
#: longest provider error text kept in an error message
MAX_ERROR_TEXT = 500
REDACTED = "[redacted]"
#: longest server-suggested wait honoured (a daily quota's "retry tomorrow" is not waited for)
MAX_SERVER_DELAY_S = 120.0
#: exponential backoff without a server hint: full jitter over [0, min(cap, base * 2^(k-1))]
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 60.0

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|us|µs|ns|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_duration(text: object) -> float | None:
    """Seconds of a duration: ``"2"``, ``"1.5s"``, ``"20ms"``, ``"6m0s"``, ``"1h2m3.5s"`` (OpenAI's
    x-ratelimit-reset-*, Gemini's RetryInfo retryDelay). None when it is not one; never negative."""
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return max(0.0, float(text)) if math.isfinite(text) else None
    if not isinstance(text, str):
        return None
    t = text.strip().lower()
    if not t:
        return None
    try:
        value = float(t)
    except ValueError:
        pass
    else:
        return max(0.0, value) if math.isfinite(value) else None
    pos = 0
    total = 0.0
    for m in _DURATION_PART.finditer(t):
        if m.start() != pos:
            return None
        total += float(m.group(1)) * _UNIT_S[m.group(2)]
        pos = m.end()
    return total if pos == len(t) and pos > 0 else None


def _seconds_until(text: str, now: float) -> float | None:
    """Seconds from ``now`` (epoch) until an HTTP date or an RFC 3339 timestamp."""
    when: datetime | None = None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        try:
            when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, when.timestamp() - now)


def delay_from_headers(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """The wait a provider's response headers ask for, in seconds (uncapped), or None.

    In order: ``retry-after-ms``; ``Retry-After`` (seconds or an HTTP date); OpenAI's
    ``x-ratelimit-reset-requests`` / ``-tokens`` (durations; the exhausted ones, else the longest);
    Anthropic's ``anthropic-ratelimit-*-reset`` (RFC 3339 timestamps, the exhausted ones).
    """
    if not headers:
        return None
    h = {str(k).lower(): str(v) for k, v in headers.items()}
    now = time.time() if now is None else now
    ms = parse_duration(h.get("retry-after-ms"))
    if ms is not None and "retry-after-ms" in h:
        return ms / 1000.0
    ra = h.get("retry-after")
    if ra is not None:
        secs = parse_duration(ra)
        if secs is None:
            secs = _seconds_until(ra, now)
        if secs is not None:
            return secs
    resets: list[tuple[bool, float]] = []
    for kind in ("requests", "tokens"):
        value = parse_duration(h.get(f"x-ratelimit-reset-{kind}"))
        if value is not None:
            resets.append((h.get(f"x-ratelimit-remaining-{kind}", "").strip() == "0", value))
    for kind in ("requests", "tokens", "input-tokens", "output-tokens"):
        stamp = h.get(f"anthropic-ratelimit-{kind}-reset")
        if stamp:
            value = _seconds_until(stamp, now)
            if value is not None:
                resets.append((h.get(f"anthropic-ratelimit-{kind}-remaining", "").strip() == "0", value))
    if not resets:
        return None
    exhausted = [v for ex, v in resets if ex]
    return max(exhausted or [v for _, v in resets])


def capped_delay(seconds: float | None, cap: float = MAX_SERVER_DELAY_S) -> float | None:
    return None if seconds is None else min(max(0.0, seconds), cap)


def backoff_delay(k: int, suggested: float | None = None, *, rng: Callable[[], float] | None = None,
                  base: float = BACKOFF_BASE_S, cap: float = BACKOFF_CAP_S) -> float:
    """Wait before the k-th (1-based) retry: the server's ``suggested`` delay (capped at
    :data:`MAX_SERVER_DELAY_S`), else full jitter over [0, min(cap, base * 2^(k-1))]."""
    if suggested is not None:
        return min(max(0.0, suggested), MAX_SERVER_DELAY_S)
    import random

    draw = (rng or random.random)()
    return draw * min(cap, base * 2.0 ** min(max(k, 1) - 1, 30))


def headers_delay(exc: BaseException) -> float | None:
    """The delay an SDK exception's HTTP response asks for (openai/anthropic: ``exc.response.headers``)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    try:
        return delay_from_headers(headers) if headers is not None else None
    except Exception:  # a header we cannot read is no hint
        return None


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
    rate_limit: tuple[type[BaseException], ...] = (),
    secrets: Iterable[str] = (),
    suggested_delay: Callable[[BaseException], float | None] = headers_delay,
) -> BackendError:
    """Map a provider SDK exception onto ``TransientBackendError`` / ``BackendError``.

    ``status_error`` is the SDK's ``APIStatusError`` (has ``status_code`` and ``body``),
    ``connection_error`` its ``APIConnectionError`` (timeouts subclass it); ``always_transient``
    lists further SDK classes that are transient whatever their status (e.g. ``InternalServerError``),
    ``rate_limit`` the classes that mean a rate limit (besides status 429). ``suggested_delay(exc)`` is
    the backend's hook for the server's requested wait (default: the HTTP response's headers).
    """
    secrets = tuple(secrets)
    name = type(exc).__name__
    if isinstance(exc, status_error):
        status = int(getattr(exc, "status_code", 0) or 0)
        text = _provider_message(getattr(exc, "body", None), str(exc))
        msg = redact(f"{name}: HTTP {status}: {text}"[:MAX_ERROR_TEXT], secrets)
        limited = status == 429 or isinstance(exc, rate_limit)
        if limited or isinstance(exc, always_transient) or is_transient_status(status):
            return TransientBackendError(msg, retry_after=capped_delay(suggested_delay(exc)), rate_limited=limited)
        return BackendError(msg)
    if isinstance(exc, connection_error) or isinstance(exc, always_transient) or isinstance(exc, rate_limit):
        # the SDK's own message ("Connection error." / "Request timed out.") names no endpoint
        return TransientBackendError(redact(f"{name}: {getattr(exc, 'message', '') or exc}", secrets),
                                     rate_limited=isinstance(exc, rate_limit))
    return BackendError(redact(f"{name}: {exc}"[:MAX_ERROR_TEXT], secrets))
