"""The embedded backend: one SQLite file through the standard library's sqlite3.

`SQLiteStore` (store.py) holds the portable parts (store/portable/, through store/parts.py)
and its own: the file opened, recognised and migrated (file.py), the portable connection over
sqlite3 (connection.py), SQLite's side of the journal's write path (writes.py), the heads'
reads (heads.py), verify (verify.py), the FTS5 text index (search.py), bulk blocks of turns
(bulk.py), LangGraph's checkpoints (graph_checkpoints.py), and migration 10's replay
(backfill.py: frozen, with the migrations of store/migrations.py).

It may import the store's shared modules (contract/, parts.py, rows.py, sql.py,
migrations.py, forgetting.py), portable/ and projection/, never postgres/; nothing outside
the standard library. `SQLiteStore` is imported on first use: the frozen migrations import
backfill.py, which must not load the store (and the migrations again) on the way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clew.store.sqlite.store import SQLiteStore as SQLiteStore


def __getattr__(name: str) -> object:
    if name == "SQLiteStore":
        from clew.store.sqlite.store import SQLiteStore

        return SQLiteStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SQLiteStore"]
