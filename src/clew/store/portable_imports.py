"""The store's record of imports (migration 20), on both backends: who brought which events.

An imported event keeps its correlation id, which names who made it where it came from; the
hash chain covers that text, so it stays, but it is a claim, not a fact about this store.
Who imported it is a fact the store records itself, in the write transaction that adopts the
events, outside the journal (so it never moves with an export or a push, and a journal file
cannot carry one). Reads are held to the store's space.
"""

from __future__ import annotations

import os
from typing import Any

from clew.models import ImportRecord
from clew.store.rows import RowReader

_COLUMNS = "first_seq, last_seq, events, door, key_prefix, user_name, created_at"


class ImportLog(RowReader):
    """The record of imports (mixed into both stores)."""

    space: str

    def _writer(self) -> tuple[Any, Any]:
        raise NotImplementedError

    def _user_name(self, conn: Any) -> str | None:
        """Who this store's connection writes as: the process's user (the database role on
        PostgreSQL, which overrides this)."""
        import pwd

        try:
            return pwd.getpwuid(os.getuid()).pw_name
        except KeyError:  # a uid with no name (a container's): the number says who
            return str(os.getuid())

    def record_import(
        self, first_seq: int, last_seq: int, events: int, door: str, key_prefix: str | None,
        at: str,
    ) -> None:  # fmt: skip
        """Inside the write transaction that adopted them: record who imported these events."""
        conn, _ = self._writer()
        conn.execute(
            f"INSERT INTO clew_imports (space, {_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            (self.space, first_seq, last_seq, events, door, key_prefix, self._user_name(conn), at),
        )

    def imports_between(self, first_seq: int, last_seq: int) -> list[ImportRecord]:
        """The space's import records that added any event of seq `first_seq`..`last_seq`,
        oldest first."""
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM clew_imports WHERE space = $1 AND last_seq >= $2"
            " AND first_seq <= $3 ORDER BY first_seq",
            (self.space, first_seq, last_seq),
        )
        return [ImportRecord(int(r[0]), int(r[1]), int(r[2]), r[3], r[4], r[5], r[6]) for r in rows]
