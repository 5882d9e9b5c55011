"""One model call of a real-LLM backend: send the request, turn the SDK's exceptions into the loop's
errors, parse the answer and repair lone surrogates in it (docs/backends.md, "Errors").

Every failure leaves as a ``BackendError`` (``TransientBackendError`` when the loop may retry) whose
text has the key and the endpoint redacted:

- an SDK exception: ``classify_error(exc, secrets)``, the backend's own mapping (by status code);
- any other exception while calling (an undecodable or truncated body, an SDK bug): "undecodable response";
- a ``BackendError`` raised by the parser: as it is;
- any other exception while parsing: ``"{what}: {type}: {message}"``;
- a usage count that is not a whole number from 0 to 2^40 (``token_count`` in the parsers, and
  ``check_usage`` on every parsed response): ``"usage field <name> is <value>: ..."``. The loop
  records it as an error turn of that sample, so a hostile count is never written or summed.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

from .base import BackendError, ModelResponse
from .llm_common import repair_response, undecodable
from .retry import MAX_ERROR_TEXT, redact

#: a token count at or above this is not believed (about 1.1e12 tokens, far beyond any context window)
MAX_TOKEN_COUNT = 2**40

#: maps an SDK exception onto the loop's errors, redacting the given secrets
ErrorClassifier = Callable[[BaseException, tuple[str, ...]], BackendError]


async def call_and_parse(
    send: Callable[[], Awaitable[Any]],
    parse: Callable[[Any], ModelResponse],
    *,
    sdk_errors: tuple[type[BaseException], ...],
    classify_error: ErrorClassifier,
    what: str,
    secrets: tuple[str, ...],
) -> ModelResponse:
    """``parse(await send())`` with its lone surrogates repaired; failures as the module docstring says.

    ``send`` builds and awaits the SDK request (building the client inside it counts as calling);
    ``what`` names a malformed answer ("malformed chat completion").
    """
    try:
        response = await send()
    except sdk_errors as exc:
        raise classify_error(exc, secrets) from None
    except Exception as exc:  # an undecodable or truncated body, an SDK bug: this call failed
        raise undecodable(exc, secrets) from None
    try:
        return check_usage(repair_response(parse(response)))
    except BackendError as exc:
        if type(exc) is BackendError:  # the parser's own errors: redacted like every other
            raise BackendError(redact(str(exc), secrets)) from None
        raise
    except Exception as exc:
        raise BackendError(redact(f"{what}: {type(exc).__name__}: {exc}"[:MAX_ERROR_TEXT], secrets)) from None


def bad_usage(field: str, value: Any) -> BackendError:
    # a number is shown (cut to 40 characters); of anything else only its type, which cannot carry a
    # secret an endpoint might echo into a usage field
    shown = repr(value) if isinstance(value, (int, float)) else f"a {type(value).__name__}"
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return BackendError(f"usage field {field} is {shown}: not a token count (a whole number from 0 to 2^40)")


def token_count(value: Any, field: str) -> int:
    """A usage count as the endpoint sent it, checked: absent (None) is 0; a whole number from 0 to
    ``MAX_TOKEN_COUNT`` (an integral float such as 12.0 too) is that number; anything else (negative,
    huge, fractional, infinite, a string, a bool) raises a ``BackendError`` naming ``field``."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad_usage(field, value)
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        raise bad_usage(field, value)
    if not 0 <= value < MAX_TOKEN_COUNT:
        raise bad_usage(field, value)
    return int(value)


def check_usage(response: ModelResponse) -> ModelResponse:
    """``response`` when its four token counts are token counts (see ``token_count``)."""
    for field in ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_creation_tokens"):
        token_count(getattr(response, field), field)
    return response
