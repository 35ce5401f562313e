"""The ClewError tree: every failure a caller can act on has its own type.

Adapters (CLI, MCP, HTTP) map these to their own shape; the message is always
one sentence a person can act on, often naming the command that helps.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AmbiguousIdError",
    "AuthenticationError",
    "ClewError",
    "InvalidTransitionError",
    "ModelAuthError",
    "ModelError",
    "ModelNotFoundError",
    "ModelUnavailableError",
    "NotFoundError",
    "ScopeError",
    "StoreBusyError",
    "StoreError",
    "StoreReadOnlyError",
    "ValidationError",
    "VectorsUnavailable",
]


class ClewError(Exception):
    """Base of every error clew raises on purpose."""


class ValidationError(ClewError, ValueError):
    """An argument is malformed: empty, out of range, of the wrong kind."""


class InvalidTransitionError(ValidationError):
    """A status change that the lifecycle does not allow."""


class NotFoundError(ClewError, LookupError):
    """No record has the given id (or id prefix)."""

    def __init__(self, kind: str, ident: str, hint: str = "", *, message: str = "") -> None:
        self.kind = kind
        self.ident = ident
        message = message or f"no {kind} matches {self.shown}"
        super().__init__(f"{message}; {hint}" if hint else message)

    @property
    def shown(self) -> str:
        """The id as the message quotes it: at most some 60 characters of it."""
        return shown_id(self.ident)


def shown_id(ident: object) -> str:
    """An id (or what was given as one) quoted for a message, cut short when long: a message
    is one line a person reads, whatever was sent."""
    text = repr(ident)
    return text if len(text) <= 60 else f"{text[:40]}… ({len(str(ident)):,} characters)"


class AmbiguousIdError(ClewError, LookupError):
    """An id prefix matches more than one record."""

    def __init__(self, kind: str, prefix: str, candidates: Sequence[str]) -> None:
        self.kind = kind
        self.prefix = prefix
        self.candidates = tuple(sorted(candidates))
        shown = ", ".join(self.candidates[:10])
        more = f" and {len(self.candidates) - 10} more" if len(self.candidates) > 10 else ""
        super().__init__(
            f"{kind} id prefix {shown_id(prefix)} is ambiguous: it matches {shown}{more}; "
            "type more characters"
        )


class AuthenticationError(ClewError):
    """A server request's key is missing, malformed, unknown, revoked or wrong.

    `prefix` is the key prefix the request tried (None: it sent no key of the right shape)
    and `space` that key's space (None: no key has that prefix), for the request log only:
    the message says the same whichever it was."""

    def __init__(
        self, message: str, *, prefix: str | None = None, space: str | None = None
    ) -> None:
        super().__init__(message)
        self.prefix = prefix
        self.space = space


class ScopeError(ClewError, PermissionError):
    """A server request's key is valid but its scope does not allow what was asked."""


class StoreError(ClewError):
    """The store cannot be opened or used (not a clew database, too new, unwritable)."""


class StoreBusyError(StoreError):
    """Another writer held the store's lock for longer than the busy timeout."""


class StoreReadOnlyError(StoreError):
    """The store opened for reading only (a read-only file, folder or mount): writes fail."""


class ModelError(ClewError):
    """A utility model could not answer: clew then takes its deterministic path."""


class ModelAuthError(ModelError):
    """The model's API refused the key (HTTP 401 or 403)."""


class ModelNotFoundError(ModelError):
    """The model's API does not know the model asked for."""


class ModelUnavailableError(ModelError):
    """The model did not answer in time, or kept failing (429, 5xx, network) past the retries."""


class VectorsUnavailable(ClewError):
    """Vectors were asked for, but the `vectors` extra (numpy, tokenizers) is not installed."""
