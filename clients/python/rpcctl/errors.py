"""Errors raised by the client. ``code`` is stable for programs; the message is for people."""
from typing import Any, Optional


class RpcctlError(Exception):
    """Base class of every error this library raises."""

    code = "E_CLIENT"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(RpcctlError):
    """A required setting (key, secret, base URL) is missing or malformed."""

    code = "E_CONFIG"


class ApiError(RpcctlError):
    """The API answered with a non-2xx status.

    ``status`` is the HTTP status, ``error`` the API's ``error`` string (or a summary of
    the body when it has none), ``body`` the parsed JSON body (or the raw text), ``reason``
    the ``X-Rpcctl-Reason`` header of an authentication failure (``replayed``,
    ``bad_signature``, ...). ``code`` names the kind of failure, as in the other rpcctl
    libraries: ``E_NOT_FOUND`` (404), ``E_VALIDATION`` (400), ``E_RATE_LIMIT`` (429),
    ``E_AUTH`` (401, 403), ``E_REPLAYED`` (a 401 for a signed request sent twice), else ``E_API``.
    """

    def __init__(self, status: int, error: str, body: Any = None, retry_after: Optional[int] = None, reason: Optional[str] = None) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.body = body
        self.retry_after = retry_after
        self.reason = reason

    @property
    def code(self) -> str:  # type: ignore[override]
        if self.reason == "replayed":
            return "E_REPLAYED"
        if self.status in (401, 403):
            return "E_AUTH"
        if self.status == 404:
            return "E_NOT_FOUND"
        if self.status == 400:
            return "E_VALIDATION"
        if self.status == 429:
            return "E_RATE_LIMIT"
        return "E_API"

    def __str__(self) -> str:
        return "HTTP %d: %s" % (self.status, self.error)


class NetworkError(RpcctlError):
    """The request got no HTTP answer: refused, reset, or timed out."""

    code = "E_NETWORK"


class WebhookVerificationError(RpcctlError):
    """A webhook delivery failed verification; ``reason`` says why."""

    code = "E_WEBHOOK_SIGNATURE"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
