"""One model call of a real-LLM backend: send the request, turn the SDK's exceptions into the loop's
errors, parse the answer and repair lone surrogates in it (docs/backends.md, "Errors").

Every failure leaves as a ``BackendError`` (``TransientBackendError`` when the loop may retry) whose
text has the key and the endpoint redacted:

- an SDK exception: ``classify_error(exc, secrets)``, the backend's own mapping (by status code);
- any other exception while calling (an undecodable or truncated body, an SDK bug): "undecodable response";
- a ``BackendError`` raised by the parser: as it is;
- any other exception while parsing: ``"{what}: {type}: {message}"``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .base import BackendError, ModelResponse
from .llm_common import repair_response, undecodable
from .retry import MAX_ERROR_TEXT, redact

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
        return repair_response(parse(response))
    except BackendError:
        raise
    except Exception as exc:
        raise BackendError(redact(f"{what}: {type(exc).__name__}: {exc}"[:MAX_ERROR_TEXT], secrets)) from None
