"""Server administration beside the journal: the HTTP server's keys and request log, database
roles, the record of imports. Part of the backend contract (store/contract/__init__.py states
the rules every method keeps)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from clew.core.credentials import ApiKey, RequestLine
from clew.models import (
    DatabaseRole,
    ImportRecord,
)


class KeyStore(Protocol):
    """The HTTP server's keys and request log: server administration, not task memory.

    Not journaled and not scoped to the store's space: a request's key is found by its
    prefix before its space is known, an admin lists and revokes every space's keys, and an
    export or push of a space must never carry credentials. `verify` does not compare them.
    Writes run inside `transaction(write=True)` (RuntimeError outside)."""

    def put_key(self, key: ApiKey, hash: str) -> None:
        """Store a new key with the digest of its secret."""
        ...

    def find_key(self, prefix: str) -> tuple[ApiKey, str] | None:
        """The key of `prefix` (of any space) and its secret's digest, or None."""
        ...

    def list_keys(self, space: str | None = None) -> list[ApiKey]:
        """The keys of `space` (None: every space), oldest first, revoked ones included."""
        ...

    def any_key(self) -> bool:
        """Whether the store holds a key that is not revoked, of any space."""
        ...

    def revoke_key(self, prefix: str, at: str) -> None:
        """Mark the key of `prefix` revoked at `at` (a revoked key stays revoked)."""
        ...

    def touch_key(self, prefix: str, at: str) -> None:
        """Record that the key of `prefix` was last used at `at`."""
        ...

    def log_requests(self, lines: Sequence[RequestLine]) -> None:
        """Append lines to the request log; a line whose id the space's log holds already is
        not added again."""
        ...

    def list_requests(
        self, space: str | None = None, *, limit: int | None = 100
    ) -> list[RequestLine]:
        """The newest `limit` requests logged of `space` (None: every space), newest first."""
        ...

    def prune_requests(self, before: str) -> int:
        """Delete the logged requests made before `before` (a store timestamp), of every
        space; return how many."""
        ...


class RoleAdmin(Protocol):
    """Database roles: what each kind of role may do to the store's tables (PostgreSQL's
    privileges and row-level security; store/postgres/roles.py). A SQLite file has no roles:
    whoever can open it may do anything to it, so there each raises ValidationError."""

    def grant_role(self, role: str, kind: str | None, *, apply: bool) -> list[str]:
        """Give the database role `role` exactly what `kind` (server, member, reader; None:
        nothing) may do to every table of clew's, in one transaction; return the statements.
        With apply=False, only make and return them. ValidationError for a role that does
        not exist, owns the tables, or would keep more than `kind` (superuser, BYPASSRLS,
        inherited rights); StoreError when this connection's role may not grant."""
        ...

    def database_roles(self) -> list[DatabaseRole]:
        """Every role that can reach the store's tables, with the kind its rights match."""
        ...


class ImportLog(Protocol):
    """The store's own record of who imported or pushed which events of its space: outside
    the journal (an event's correlation id is a claim of where it came from; who brought it
    here is the store's to say), written in the write transaction that adopts the events."""

    def record_import(
        self,
        first_seq: int,
        last_seq: int,
        events: int,
        door: str,
        key_prefix: str | None,
        at: str,
    ) -> None:
        """Inside the write transaction that adopted events `first_seq`..`last_seq`: record
        that `key_prefix` (None: the host's user, whom the store names itself) brought them
        through `door` at `at`."""
        ...

    def imports_between(self, first_seq: int, last_seq: int) -> list[ImportRecord]:
        """The space's records of imports that added any event of seq `first_seq`..
        `last_seq`, oldest first."""
        ...
