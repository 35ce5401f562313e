"""The portable connection (store/sql.py) over a psycopg 3 connection.

The portable SQL numbers its placeholders (`$1`, `$2`...), which PostgreSQL reads as they are:
psycopg's raw cursor sends the statement as written, with no placeholder or `%` handling, so
nothing is rewritten on its way. Rows are tuples that are also addressable by column name,
as `sqlite3.Row`s are. What PostgreSQL spells its own way is the dialect's
(`sql.POSTGRESQL`): no limit is `LIMIT NULL`, a command's text output goes into its bytea
column as UTF-8 bytes, an upsert's key starts with `space`.

Tenancy is the statement's own: every UPDATE and DELETE names its space in its text
(`WHERE id = $1 AND space = $2`), and an upsert's target is the dialect's key; row-level
security is the second wall behind them. tests/tenancy.py checks every statement clew sends
a PostgreSQL connection while the tests run.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

from clew.store.sql import POSTGRESQL, Dialect

if TYPE_CHECKING:
    import psycopg


class Row(tuple[Any, ...]):
    """A result row: a tuple that also answers `row["column"]` and `row.keys()`."""

    _index: ClassVar[dict[str, int]] = {}

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        """The column names, in order (as sqlite3.Row.keys)."""
        return list(self._index)


@lru_cache(maxsize=256)
def _row_class(names: tuple[str, ...]) -> type[Row]:
    return type("Row", (Row,), {"_index": {n: i for i, n in enumerate(names)}, "__slots__": ()})


def row_factory(cursor: Any) -> Any:
    """psycopg row factory making `Row`s (one class per distinct column list, cached)."""
    if cursor.description is None:
        return tuple
    cls = _row_class(tuple(d.name for d in cursor.description))
    return lambda values: cls(values)


class Cursor:
    """The part of a DB-API cursor the shared SQL uses: fetchone, fetchall, iteration."""

    def __init__(self, cursor: psycopg.Cursor[Any]) -> None:
        self._cursor = cursor

    def fetchone(self) -> Any:
        return self._cursor.fetchone() if self._cursor.description is not None else None

    def fetchall(self) -> list[Any]:
        return self._cursor.fetchall() if self._cursor.description is not None else []

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())

    @property
    def description(self) -> tuple[tuple[Any, ...], ...] | None:
        """DB-API's column descriptions (name first), None for a statement with no rows."""
        found = self._cursor.description
        if found is None:
            return None
        return tuple((c.name, c.type_code, None, None, None, None, None) for c in found)

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount


class Connection:
    """`execute(sql, params)` with `$n` placeholders over one psycopg connection."""

    __slots__ = ("_raw_cursor", "raw")
    dialect: ClassVar[Dialect] = POSTGRESQL

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        from psycopg import RawCursor  # psycopg only once a PostgreSQL store is opened

        self.raw = conn
        self._raw_cursor = RawCursor

    def cursor(self) -> psycopg.Cursor[Any]:
        """A cursor that sends `$n` statements as they are, its rows `Row`s."""
        made: psycopg.Cursor[Any] = self._raw_cursor(self.raw, row_factory=row_factory)
        return made

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """Run one statement with `$n` placeholders and return its cursor."""
        cursor = self.cursor()
        cursor.execute(sql, params)
        return Cursor(cursor)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement for each parameter row."""
        with self.cursor() as cursor:
            cursor.executemany(sql, rows)
