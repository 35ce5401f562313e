"""The store interface: all SQL lives behind it.

`Store` (store/contract.py) is what the facade needs from a backend: a journal core and one
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
    """Open the backend for `location` (a file path; PostgreSQL URLs come later)."""
    if location.startswith(("postgres://", "postgresql://")):
        from clew.errors import StoreError

        raise StoreError("PostgreSQL stores are not supported yet; use a SQLite file path")
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
