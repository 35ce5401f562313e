"""The HTTP server's keys as values: their scopes, their text and what a request log holds.

A key is `clew_<prefix>_<secret>`: the prefix (12 hex digits) names it in lists and logs,
the secret (43 URL-safe characters, 256 bits from `secrets`) is shown once and stored only
as its SHA-256. A secret that random needs no slow hash: nothing can be guessed from the
digest, and the digest is compared in constant time. Pure: no I/O here (`keys.py` stores).
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from clew.errors import ValidationError

# Each scope can do what the one before it can, and more.
SCOPES = ("read", "write", "admin")
_TOKEN = re.compile(r"clew_([0-9a-f]{12})_([A-Za-z0-9_-]{20,100})")


class ApiKey(NamedTuple):
    """A key as stored: never its secret."""

    prefix: str
    space: str
    scope: str
    name: str | None
    created_at: str
    last_used_at: str | None
    revoked_at: str | None


class NewKey(NamedTuple):
    """A key just made: `token` is the only copy of its secret, shown once."""

    key: ApiKey
    token: str


class Caller(NamedTuple):
    """Who a server request is: its key's prefix (None: a keyless loopback store), space,
    scope and name (shown as who is looking)."""

    prefix: str | None
    space: str
    scope: str
    name: str | None = None


class RequestLine(NamedTuple):
    """One request the server answered: the key it was made with, or the key prefix a refused
    request tried (with that key's space, "" when no key has it); its route as the log keeps
    it (server/edge.py's `route_of`); the milliseconds until its answer began."""

    space: str
    key_prefix: str | None
    method: str
    route: str
    status: int
    created_at: str
    ms: float
    id: str | None = None  # given by the server, so the line is kept once however often sent

    @property
    def authenticated(self) -> bool:
        """Whether the request's key was accepted (not refused as unknown, wrong or revoked,
        nor turned away by the rate limit before it was checked)."""
        return self.key_prefix is not None and self.status not in (401, 429)


def allows(scope: str, needed: str) -> bool:
    """Whether a key of `scope` may do what needs `needed` (read < write < admin)."""
    return SCOPES.index(scope) >= SCOPES.index(needed)


def check_scope(scope: str) -> str:
    """Return `scope` if it is one, else raise ValidationError naming the scopes."""
    if scope not in SCOPES:
        raise ValidationError(f"scope {scope!r} is not one of: {', '.join(SCOPES)}")
    return scope


def new_token() -> tuple[str, str, str]:
    """A fresh key: (prefix, its token `clew_<prefix>_<secret>`, the secret's digest)."""
    import secrets  # here: the store's modules, on the hook's path, import this one

    prefix = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    return prefix, f"clew_{prefix}_{secret}", digest(secret)


def digest(secret: str) -> str:
    """The stored form of a secret: its SHA-256, in hex."""
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()


def parse_token(token: str) -> tuple[str, str] | None:
    """(prefix, secret) of a token of the right shape, else None."""
    found = _TOKEN.fullmatch(token.strip())
    return (found[1], found[2]) if found else None


def matches(secret: str, stored: str) -> bool:
    """Whether `secret` is the one whose digest is `stored` (in constant time)."""
    import hmac

    return hmac.compare_digest(digest(secret), stored)
