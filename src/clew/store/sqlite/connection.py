"""The portable connection (store/sql.py) over a `sqlite3` connection.

The portable SQL numbers its placeholders (`$1`, `$2`...). SQLite reads `$1` as a parameter
named "1", so its parameters in order are bound by those names: parameter binding, the
statement as it was written. SQLite's own SQL (`sqlite_*` modules) keeps `?` and runs on
`raw`, the `sqlite3` connection itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from clew.store.sql import SQLITE, Dialect

# "1", "2", ...: the names SQLite gives `$1`, `$2`..., made once for the usual statement
# (a batch of vectors binds thousands: their names are made as it runs).
_NAMES = tuple(str(n) for n in range(1, 1001))
_KEPT = len(_NAMES)


def named(params: Sequence[Any]) -> dict[str, Any]:
    """`params` in order, bound to `$1`, `$2`... by the names SQLite reads there."""
    if len(params) > _KEPT:
        return {str(n): value for n, value in enumerate(params, 1)}
    return dict(zip(_NAMES, params, strict=False))


class SQLiteConnection:
    """`execute(sql, params)` with `$n` placeholders over one `sqlite3` connection."""

    __slots__ = ("raw",)
    dialect: ClassVar[Dialect] = SQLITE

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run one statement; its rows are the connection's (`sqlite3.Row`)."""
        if len(params) > _KEPT:
            return self.raw.execute(sql, named(params))
        return self.raw.execute(sql, dict(zip(_NAMES, params, strict=False)))  # named's, inline

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        """Run one statement for each parameter row."""
        return self.raw.executemany(sql, map(named, rows))
