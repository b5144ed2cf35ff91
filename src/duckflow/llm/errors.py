"""Errors of model calls: one base (`LLMError`) that says whether a retry can help.

Providers map HTTP statuses and transport failures onto these classes (`error_for_status`);
the retry policy (`llm/retry.py`) reads `retryable` and `retry_after` and nothing else.
"""

from __future__ import annotations

from duckflow.errors import DuckflowError


class LLMError(DuckflowError):
    """A model call failed. `retryable` says whether the same call may succeed later."""

    retryable: bool = False
    #: True when part of the answer had already been streamed to the caller before the failure.
    partial_output: bool = False

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        status: int | None = None,
        retry_after: float | None = None,
        provider: str = "",
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.retry_after = retry_after
        self.provider = provider
        if retryable is not None:
            self.retryable = retryable


class LLMTimeoutError(LLMError):
    """The model did not answer in time (connect, read or whole-call timeout, or HTTP 408)."""

    retryable = True


class LLMRateLimitError(LLMError):
    """HTTP 429: too many requests; `retry_after` carries the server's advice when given."""

    retryable = True


class LLMServerError(LLMError):
    """HTTP 5xx or 409, or a stream that stopped midway: the provider's side failed."""

    retryable = True


class LLMConnectionError(LLMError):
    """The server could not be reached (refused, reset, DNS)."""

    retryable = True


class LLMAuthError(LLMError):
    """HTTP 401/403: the key is missing, wrong or lacks access. Never retried."""

    retryable = False


class LLMBadRequestError(LLMError):
    """HTTP 400/404/413/422 and other 4xx: the request itself is wrong. Never retried."""

    retryable = False


class LLMResponseError(LLMError):
    """The server answered with something that is not the expected wire format."""

    retryable = False


class LLMProviderError(LLMResponseError):
    """provider_error: the answer breaks the provider's wire format (a malformed event, nesting
    too deep, a field of the wrong type). Retried like a server failure: the next attempt or
    the next model of the chain may answer properly."""

    retryable = True
    code = "provider_error"


_HINTS = {
    401: "check the API key (environment variable or config) for this provider",
    403: "the key is valid but has no access to this model; check the account or model name",
    404: "check the model name and the base URL",
}


def error_for_status(
    status: int,
    body: str,
    *,
    provider: str,
    retry_after: float | None = None,
) -> LLMError:
    """The LLMError for an HTTP error status, with the start of the body as detail."""
    detail = " ".join(body.split())[:300]
    msg = f"{provider}: HTTP {status}" + (f": {detail}" if detail else "")
    cls: type[LLMError]
    if status in (401, 403):
        cls = LLMAuthError
    elif status == 408:
        cls = LLMTimeoutError
    elif status == 429:
        cls = LLMRateLimitError
    elif status == 409 or status >= 500:
        cls = LLMServerError
    elif 400 <= status < 500:
        cls = LLMBadRequestError
    else:
        cls = LLMResponseError
    return cls(msg, hint=_HINTS.get(status), status=status, retry_after=retry_after, provider=provider)
