"""The team backend: a PostgreSQL database through psycopg 3 and a connection pool.

`PostgresStore` (store.py) holds the portable parts (store/portable/, through store/parts.py)
and its own: the portable connection over psycopg (connection.py), the heads' reads
(heads.py), verify into temporary tables (verify.py), the tsvector text index and its query
compiler (search.py), pgvector's index (vectors.py), database roles (roles.py), LangGraph's
checkpoints (graph_checkpoints.py), and its frozen migration text: migrations.py and the
search index they make (search_schema.py).

It may import the store's shared modules (contract/, parts.py, rows.py, sql.py,
migrations.py, forgetting.py), portable/ and projection/; of sqlite/ only what a frozen
migration shares with SQLite's migration 10 (the tables numbered by sequence, from
sqlite/backfill.py). psycopg is imported by store.py, connection.py and graph_checkpoints.py
only (lint-imports' psycopg contract), and only once a postgresql:// store is opened: this
package imports `PostgresStore` on first use, as sqlite/ does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from clew.store.postgres.store import PostgresStore as PostgresStore


def __getattr__(name: str) -> object:
    if name == "PostgresStore":
        from clew.store.postgres.store import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["PostgresStore"]
