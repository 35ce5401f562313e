"""The store interface: all SQL lives behind it.

`Store` (store/contract/) is what the facade needs from a backend: a journal core and one
read protocol per subject, each method's semantics in its docstring. SQLite (`sqlite.py`)
is the embedded default; a PostgreSQL backend implements the same contract.
"""

from __future__ import annotations

from clew.store.contract import (
    ArchiveReads,
    ConversationReads,
    JobReads,
    Journal,
    LedgerReads,
    LifecycleReads,
    RecordReads,
    Store,
    TaskReads,
)


def open_store(location: str, space: str, busy_timeout: float = 5.0) -> Store:
    """Open the backend for `location`: a `postgresql://` URL, else a SQLite file path."""
    from clew.location import is_url

    if is_url(location):
        from clew.store.postgres import PostgresStore  # imports psycopg: only for a URL

        return PostgresStore(location, space, busy_timeout)
    from clew.store.sqlite import SQLiteStore

    return SQLiteStore(location, space, busy_timeout)


__all__ = [
    "ArchiveReads",
    "ConversationReads",
    "JobReads",
    "Journal",
    "LedgerReads",
    "LifecycleReads",
    "RecordReads",
    "Store",
    "TaskReads",
    "open_store",
]
