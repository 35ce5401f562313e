"""The HTTP server's keys and request log, on the Memory facade (`clew keys`, `clew serve`).

A key belongs to one space and has one scope (read, write or admin); a request's space is
the key's, never anything the request says. Keys and the log are server administration,
kept beside the journal but not in it (store/contract.py's KeyStore says why), so they are
written in a write transaction of their own, with no event. Any Memory of the store manages
the keys of every space: the store, not the space, is what a server administers.
"""

from __future__ import annotations

from collections.abc import Sequence

from clew.core import checks, credentials
from clew.core.clock import stamp
from clew.core.credentials import ApiKey, NewKey, RequestLine
from clew.errors import AuthenticationError, NotFoundError, ValidationError
from clew.kernel import Service


class Keys(Service):
    """Keys of the HTTP server and its request log (a service of Memory)."""

    def create_key(self, space: str, scope: str, *, name: str | None = None) -> NewKey:
        """Make a key for `space` with `scope`; its token is returned once, never stored."""
        key_space = checks.space(space)
        checks_scope = credentials.check_scope(scope)
        label = checks.optional_text(name, "key name")
        prefix, token, digest = credentials.new_token()
        key = ApiKey(prefix, key_space, checks_scope, label, self._now(), None, None)
        with self._store.transaction(write=True):
            self._store.put_key(key, digest)
        return NewKey(key, token)

    def list_keys(self, space: str | None = None) -> list[ApiKey]:
        """The keys of `space` (default every space), oldest first, revoked ones included."""
        return self._store.list_keys(None if space is None else checks.space(space))

    def revoke_key(self, prefix: str) -> ApiKey:
        """Revoke the key of `prefix` (or of its whole token): it is refused from now on."""
        wanted = _prefix_of(prefix)
        with self._store.transaction(write=True):
            found = self._store.find_key(wanted)
            if found is None:
                raise NotFoundError("key", wanted, "list keys with `clew keys list`")
            self._store.revoke_key(wanted, self._now())
            found = self._store.find_key(wanted)
        assert found is not None
        return found[0]

    def has_keys(self) -> bool:
        """Whether the store holds any key that is not revoked."""
        return self._store.any_key()

    def authenticate(self, token: str, *, touch: bool = True) -> ApiKey:
        """The key a token is, or AuthenticationError: malformed, unknown, wrong secret or
        revoked all read the same, so a caller learns nothing of which."""
        parsed = credentials.parse_token(token)
        found = self._store.find_key(parsed[0]) if parsed is not None else None
        if (
            parsed is None
            or found is None
            or not credentials.matches(parsed[1], found[1])
            or found[0].revoked_at is not None
        ):
            raise AuthenticationError(
                "the key is not valid (unknown, revoked or mistyped); send"
                " 'Authorization: Bearer clew_...' with a key from `clew keys create`",
                prefix=None if parsed is None else parsed[0],
                space=None if found is None else found[0].space,
            )
        key = found[0]
        if touch:
            at = self._now()
            with self._store.transaction(write=True):
                self._store.touch_key(key.prefix, at)
            key = key._replace(last_used_at=at)
        return key

    def log_requests(self, lines: Sequence[RequestLine]) -> None:
        """Append requests the server answered to its log (a line whose id is there already
        is not added again), and record each key's last use, in one transaction."""
        if not lines:
            return
        used: dict[str, str] = {}
        for line in lines:
            if line.authenticated and line.key_prefix is not None:
                used[line.key_prefix] = max(used.get(line.key_prefix, ""), line.created_at)
        with self._store.transaction(write=True):
            self._store.log_requests(lines)
            for prefix, at in sorted(used.items()):
                self._store.touch_key(prefix, at)

    def list_requests(self, space: str | None = None, *, limit: int = 100) -> list[RequestLine]:
        """The newest requests logged of `space` (default every space), newest first."""
        if limit < 1:
            raise ValidationError(f"limit must be at least 1, not {limit}")
        return self._store.list_requests(
            None if space is None else checks.space(space), limit=limit
        )

    def prune_requests(self, keep_days: int) -> int:
        """Forget logged requests older than `keep_days` days, of every space; return how
        many were deleted."""
        from datetime import timedelta

        days = checks.count(keep_days, "keep_days", most=100_000)
        before = stamp(self._clock() - timedelta(days=days))
        with self._store.transaction(write=True):
            return self._store.prune_requests(before)


def _prefix_of(text: str) -> str:
    """A key's prefix from its prefix or its whole token."""
    parsed = credentials.parse_token(checks.unicode(text, "the key"))
    prefix = parsed[0] if parsed is not None else text.strip()
    if not prefix or len(prefix) > 100:
        raise ValidationError("name the key by its prefix, as `clew keys list` shows it")
    return prefix
