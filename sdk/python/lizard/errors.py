"""Typed errors raised by the SDK.

Every error from the server carries its message (``str(err)``), the HTTP
status (``err.status``) and the server's error code (``err.code``, e.g.
``"not_found"``). Errors raised without a server answer (a connection that
failed, a client-side timeout) have ``status`` None.
"""

from __future__ import annotations

import builtins
from typing import Optional

__all__ = [
    "LizardError",
    "InvalidArgumentError",
    "AuthenticationError",
    "ForbiddenError",
    "NotFoundError",
    "ConflictError",
    "PayloadTooLargeError",
    "RateLimitError",
    "UnavailableError",
    "TimeoutError",
    "APIConnectionError",
    "error_for_status",
]


class LizardError(Exception):
    """Base class of every error the SDK raises."""

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: Optional[str] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        #: Seconds the server asked us to wait (``Retry-After``), if any.
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return "%s(%r, status=%r, code=%r)" % (
            type(self).__name__,
            self.message,
            self.status,
            self.code,
        )


class InvalidArgumentError(LizardError):
    """400: the request was malformed (bad JSON, wrong types, bad path...)."""


class AuthenticationError(LizardError):
    """401: no API key, an unknown key or a revoked key."""


class ForbiddenError(LizardError):
    """403: the key may not do this, or permission denied inside the sandbox."""


class NotFoundError(LizardError):
    """404: unknown id (or an id of another project), missing file, stopped sandbox."""


class ConflictError(LizardError):
    """409: wrong state or the thing already exists."""


class PayloadTooLargeError(LizardError):
    """413: request body too large, or the sandbox's disk is full."""


class RateLimitError(LizardError):
    """429: over a limit (e.g. the project's running-sandbox cap)."""


class UnavailableError(LizardError):
    """503: the host has no capacity right now; see ``retry_after``."""


class TimeoutError(LizardError, builtins.TimeoutError):  # noqa: A001 - SPEC name
    """A wait ran out of time (client-side read timeout, or a server timeout).

    Note: an *exec* that hits its own ``timeout_ms`` is not an error; its
    result has ``timed_out=True``.
    """


class APIConnectionError(LizardError, builtins.ConnectionError):
    """The server could not be reached (refused, reset, DNS...)."""


_BY_STATUS = {
    400: InvalidArgumentError,
    401: AuthenticationError,
    403: ForbiddenError,
    404: NotFoundError,
    408: TimeoutError,
    409: ConflictError,
    413: PayloadTooLargeError,
    429: RateLimitError,
    503: UnavailableError,
    504: TimeoutError,
}

_BY_CODE = {
    "bad_request": InvalidArgumentError,
    "invalid_argument": InvalidArgumentError,
    "unauthorized": AuthenticationError,
    "forbidden": ForbiddenError,
    "not_found": NotFoundError,
    "conflict": ConflictError,
    "too_large": PayloadTooLargeError,
    "rate_limited": RateLimitError,
    "unavailable": UnavailableError,
    "timeout": TimeoutError,
}


def error_for_status(
    status: Optional[int],
    message: str,
    code: Optional[str] = None,
    retry_after: Optional[float] = None,
) -> LizardError:
    """The typed error for an HTTP status (or, for stream errors, a code)."""
    cls = _BY_STATUS.get(status) if status is not None else None
    if cls is None and code is not None:
        cls = _BY_CODE.get(code)
    if cls is None:
        cls = LizardError
    return cls(message, status=status, code=code, retry_after=retry_after)
