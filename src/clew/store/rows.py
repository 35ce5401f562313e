"""What the read mixins share: the row reader they are mixed into."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any

from clew.store.sql import Row


def json_ids(text: str) -> tuple[str, ...]:
    """Decode a JSON array of texts; most are empty, and skipping the parse keeps reads cheap."""
    return () if text == "[]" else tuple(json.loads(text))


# Columns that order rows but are no field of the record they hold.
_STORAGE_COLUMNS = frozenset({"seq", "position"})


def fields(row: Row) -> dict[str, Any]:
    """A row as a dict of its record's fields (ordering columns such as `seq` left out)."""
    return {k: v for k, v in zip(row.keys(), tuple(row), strict=True) if k not in _STORAGE_COLUMNS}


def positional(rows: Sequence[Row]) -> Iterable[Any]:
    """`rows` as what reads fastest by position: sqlite3's rows as they are (a tuple of
    each first cost more than the reads), a tuple subclass (PostgreSQL's, whose
    `__getitem__` is Python) as plain tuples."""
    first: object = rows[0] if rows else None
    return map(tuple, rows) if isinstance(first, tuple) else rows


def limited(sql: str, params: Sequence[Any], limit: int | None) -> tuple[str, list[Any]]:
    """`sql` with ` LIMIT $n` (n after `params`) when there is a limit: no limit is no clause."""
    if limit is None:
        return sql, list(params)
    return f"{sql} LIMIT ${len(params) + 1}", [*params, limit]


def like_escaped(text: str) -> str:
    """`text` for a LIKE pattern with `ESCAPE '\\'`: its wildcards match only themselves."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class RowReader:
    """The part of SQLiteStore the read mixins use (SQLiteStore defines it)."""

    space: str
    # What keeps SQLite's planner off an index for a term (`+`): with `task_id = ? AND
    # space = ?` it takes events(space, seq) and walks the whole space's history; PostgreSQL
    # has no such operator on text and needs no hint (postgres.py sets it empty).
    _no_index = "+"

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """A read's rows: `sql` with `$n` placeholders, `params` in their order."""
        raise NotImplementedError

    def _tuples(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """A read's rows as plain tuples, for the hot reads that take columns by position
        (SQLite overrides it to have none of its `sqlite3.Row`s made)."""
        return [tuple(row) for row in self._rows(sql, params)]

    def transaction(self, *, write: bool = False) -> AbstractContextManager[None]:
        raise NotImplementedError

    def fts_check(self, index: str = "entries_fts") -> str | None:
        raise NotImplementedError

    def records_check(self, space: str | None = None) -> str | None:
        raise NotImplementedError

    def outline_check(self, space: str | None = None) -> str | None:
        raise NotImplementedError
