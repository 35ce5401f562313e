"""The store's record of imports (migration 20), on both backends: who brought which events.

An imported event keeps its correlation id, which names who made it where it came from; the
hash chain covers that text, so it stays, but it is a claim, not a fact about this store.
Who imported it is a fact the store records itself, in the write transaction that adopts the
events, outside the journal (so it never moves with an export or a push, and a journal file
cannot carry one). Reads are held to the store's space.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from clew.models import ImportRecord
from clew.store.sql import Row

_COLUMNS = "first_seq, last_seq, events, door, key_prefix, user_name, created_at"


def process_user(conn: Any) -> str | None:
    """Who a store's connection writes as: the process's user (PostgreSQL's store names its
    database role instead)."""
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # a uid with no name (a container's): the number says who
        return str(os.getuid())


class ImportHost(Protocol):
    """What the record of imports reads and writes through: the store that holds it."""

    space: str

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    def _writer(self) -> tuple[Any, Any]: ...


class Imports:
    """The record of imports, a part both stores hold (their `_imports`) and forward the
    contract's ImportLog to; `user_name` says who a write connection writes as."""

    def __init__(
        self, store: ImportHost, user_name: Callable[[Any], str | None] = process_user
    ) -> None:
        self._store = store
        self.space = store.space
        self._user_name = user_name

    def record_import(
        self,
        first_seq: int,
        last_seq: int,
        events: int,
        door: str,
        key_prefix: str | None,
        at: str,
    ) -> None:
        """Inside the write transaction that adopted them: record who imported these events."""
        conn, _ = self._store._writer()
        conn.execute(
            f"INSERT INTO clew_imports (space, {_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            (self.space, first_seq, last_seq, events, door, key_prefix, self._user_name(conn), at),
        )

    def imports_between(self, first_seq: int, last_seq: int) -> list[ImportRecord]:
        """The space's import records that added any event of seq `first_seq`..`last_seq`,
        oldest first."""
        rows = self._store._rows(
            f"SELECT {_COLUMNS} FROM clew_imports WHERE space = $1 AND last_seq >= $2"
            " AND first_seq <= $3 ORDER BY first_seq",
            (self.space, first_seq, last_seq),
        )
        return [ImportRecord(int(r[0]), int(r[1]), int(r[2]), r[3], r[4], r[5], r[6]) for r in rows]
