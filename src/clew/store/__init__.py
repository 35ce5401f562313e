"""The store interface: all SQL lives behind it.

`Store` (contract/) is what the facade needs from a backend: a journal core and one read
protocol per subject, each method's semantics in its docstring. SQLite (sqlite/) is the
embedded default; PostgreSQL (postgres/) implements the same contract for a team.

The package, by what each part owns and may import:

- contract/: the protocols; nothing of SQL or a driver. conformance.py: the contract's
  tests every backend runs.
- The shared foundation at this level: parts.py (the parts a store holds and the contract
  methods each answers), rows.py (the store as its parts see it), sql.py (the portable
  connection and dialect), migrations.py (SQLite's frozen schema steps and the tables' lists
  both backends read), forgetting.py (a forget as the store applies it).
- portable/ and projection/: the SQL and the row writes both backends run; they import the
  foundation, never a backend.
- sqlite/ and postgres/: each backend's store and its own parts; each imports the foundation,
  portable/ and projection/, never the other backend (but for the frozen list of tables
  migration 10 numbered, which PostgreSQL's migrations share). psycopg is imported only when a
  postgresql:// store is opened.
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
    from clew.core.location import is_url

    if is_url(location):
        from clew.store.postgres.store import PostgresStore  # imports psycopg: only for a URL

        return PostgresStore(location, space, busy_timeout)
    from clew.store.sqlite.store import SQLiteStore

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
