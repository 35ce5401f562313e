"""A DB-API face for a psycopg 3 connection, so the SQL shared with SQLite runs unchanged.

The read modules and the projection handlers write `?` placeholders and read rows by column
name or by position, as `sqlite3` gives them. This adapter turns `?` into psycopg's `%s`,
doubles a literal `%`, leaves quoted text alone, reads a negative `LIMIT ?` as no limit (as
SQLite does), binds text for a bytea column as its UTF-8 bytes, and makes rows that are
tuples also addressable by name. A translation is made once per distinct statement and
cached: the shared SQL is a fixed set of strings.

It never edits what a statement means. Tenancy is the statement's own: every UPDATE and
DELETE names its space in its text (`WHERE id = ? AND space = ?`), and an upsert's target
is the key as this backend has it (`projection_handlers.conflict`: PostgreSQL's keys start
with `space`); row-level security is the second wall behind them. tests/tenancy.py checks
every statement clew sends a PostgreSQL connection while the tests run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

if TYPE_CHECKING:
    import psycopg

# A quoted string or identifier, `LIMIT ?`, a placeholder, or a literal percent sign.
_TOKEN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\bLIMIT\s+\?|\?|%", re.I)


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


class Statement(NamedTuple):
    """A statement translated for psycopg."""

    text: str
    limits: tuple[int, ...]  # positions of plain parameters that are a LIMIT
    binary: tuple[int, ...]  # positions of plain parameters bound to a bytea column


# The bytea columns: command output, text or bytes (its kind in a column beside it). SQLite's
# BLOB takes either; here text goes in as its UTF-8 bytes, and reads decode it by its kind.
BYTEA_COLUMNS = frozenset({"stdout", "stderr"})
_INSERT = re.compile(r"\s*INSERT\s+INTO\s+\w+\s*\(([^)]*)\)\s*VALUES\s*\(", re.I)
_ASSIGNED_TO = re.compile(r"(\w+)\s*=\s*$")


@lru_cache(maxsize=2048)
def translate(sql: str) -> Statement:
    """Return `sql` with psycopg placeholders."""
    limits: list[int] = []
    binary: list[int] = []
    plain = 0
    inserted = _INSERT.match(sql)
    columns = [c.strip() for c in inserted.group(1).split(",")] if inserted else []

    def swap(match: re.Match[str]) -> str:
        nonlocal plain
        token = match.group(0)
        if token == "%":
            return "%%"
        if token == "?":
            assigned = _ASSIGNED_TO.search(sql, 0, match.start())
            column = columns[plain] if plain < len(columns) else assigned and assigned.group(1)
            if column in BYTEA_COLUMNS:
                binary.append(plain)
            plain += 1
            return "%s"
        if token[0] in "lL":  # LIMIT ?: SQLite reads a negative limit as none
            limits.append(plain)
            plain += 1
            return "LIMIT %s"
        return token.replace("%", "%%")  # quoted text: as it is (the driver halves %%)

    text = _TOKEN.sub(swap, sql)
    return Statement(text, tuple(limits), tuple(binary))


def bound(statement: Statement, params: Sequence[Any]) -> list[Any]:
    """The parameters of `statement` as psycopg takes them."""
    values = list(params)
    for at in statement.limits:
        if isinstance(values[at], int) and values[at] < 0:
            values[at] = None  # LIMIT NULL: no limit, as SQLite's LIMIT -1
    for at in statement.binary:
        if isinstance(values[at], str):
            values[at] = values[at].encode("utf-8", "surrogateescape")
    return values


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
    """`execute(sql, params)` with `?` placeholders over one psycopg connection."""

    # What the shared SQL asks of its backend (projection_handlers.conflict): keys here start
    # with `space`.
    dialect = "postgresql"

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.raw = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """Run one statement with `?` placeholders and return its cursor."""
        statement = translate(sql)
        cursor = self.raw.cursor(row_factory=row_factory)
        # Always with parameters (maybe none), so the driver reads every %% as one %.
        cursor.execute(statement.text, bound(statement, params))
        return Cursor(cursor)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each parameter row."""
        statement = translate(sql)
        with self.raw.cursor() as cursor:
            cursor.executemany(statement.text, [bound(statement, r) for r in rows])
