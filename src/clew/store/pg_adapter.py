"""A DB-API face for a psycopg 3 connection, so the SQL shared with SQLite runs unchanged.

The read modules and the projection handlers write `?` placeholders (and `?N` numbered ones)
and read rows by column name or by position, as `sqlite3` gives them. This adapter turns
`?` into psycopg's `%s` (and `?N` into `%(pN)s`), doubles a literal `%`, leaves quoted text
alone, starts an `ON CONFLICT (...)` target with `space` (every key here does), and makes
rows that are tuples also addressable by name. A translation is made once per distinct
statement and cached: the shared SQL is a fixed set of strings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import psycopg

# A quoted string or identifier, a numbered or plain placeholder, or a literal percent sign.
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\?(\d+)|\?|%")


_CONFLICT = re.compile(r"ON CONFLICT\s*\((?!\s*space\b)\s*", re.IGNORECASE)


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


@lru_cache(maxsize=2048)
def translate(sql: str) -> tuple[str, tuple[int, ...] | None]:
    """Return `sql` with psycopg placeholders, and the order of numbered parameters (None
    when it uses plain `?`s)."""
    numbered: list[int] = []
    plain = False

    def swap(match: re.Match[str]) -> str:
        nonlocal plain
        token = match.group(0)
        if token == "%":
            return "%%"
        if token == "?":
            plain = True
            return "%s"
        if match.group(1) is not None:
            numbered.append(int(match.group(1)))
            return f"%(p{match.group(1)})s"
        return token  # quoted text is left as it is

    # Keys here start with the space (pg_migrations.py): so do the conflict targets.
    text = _TOKEN.sub(swap, _CONFLICT.sub("ON CONFLICT (space, ", sql))
    if plain and numbered:
        raise ValueError("a statement mixes ? and ?N placeholders")
    return text, (tuple(numbered) if numbered else None)


def _params(order: tuple[int, ...] | None, params: Sequence[Any]) -> Any:
    if order is None:
        return tuple(params)
    return {f"p{n}": params[n - 1] for n in set(order)}


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
    def rowcount(self) -> int:
        return self._cursor.rowcount


class Connection:
    """`execute(sql, params)` with `?` placeholders over one psycopg connection."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.raw = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """Run one statement with `?` placeholders and return its cursor."""
        pragma = _PRAGMA_TABLE_INFO.match(sql)
        if pragma:
            return self.execute(_COLUMNS_SQL, (pragma.group(1),))
        text, order = translate(sql)
        cursor = self.raw.cursor(row_factory=row_factory)
        cursor.execute(text, _params(order, params) if params or order else None)
        return Cursor(cursor)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each parameter row."""
        text, order = translate(sql)
        with self.raw.cursor() as cursor:
            cursor.executemany(text, [_params(order, r) for r in rows])


# The projections learn a table's columns with SQLite's PRAGMA table_info: answer it from
# the catalog in the same shape (the column name is the second field).
_PRAGMA_TABLE_INFO = re.compile(r"\s*PRAGMA\s+table_info\((\w+)\)\s*$", re.IGNORECASE)
_COLUMNS_SQL = (
    "SELECT ordinal_position - 1 AS cid, column_name AS name FROM information_schema.columns"
    " WHERE table_name = ? AND table_schema = current_schema() ORDER BY ordinal_position"
)
