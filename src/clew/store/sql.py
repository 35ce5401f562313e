"""The database connection the portable reads are written against: a small DB-API subset.

The read modules run one body of SQL on any backend: `?` placeholders, standard clauses
(COALESCE, `ON CONFLICT`, `LIKE ... ESCAPE`, `LIMIT ?` only when there is a limit), rows
addressable by column name. Python's sqlite3 connection is one; a PostgreSQL backend
adapts its driver's to it. What only SQLite has (FTS5, PRAGMAs, its storage classes) stays
in the modules named `sqlite_*` that need it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol


class Row(Protocol):
    """A result row: by column name (`row["id"]`) or position, iterable, with its names."""

    def __getitem__(self, key: int | str, /) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...

    def __len__(self) -> int: ...

    def keys(self) -> list[str]: ...


class Cursor(Protocol):
    """The result of one statement."""

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """What a read needs of a connection: run one statement with `?` parameters."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...
