"""What the store's parts share: the store they read through (`StoreHost`, `RowReader`) and
the helpers of their reads."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from clew.store.sql import Connection, Dialect, Row

# Each kind of record `resolve` finds by an id or its prefix, and its table.
KIND_TABLES = {
    "task": "tasks",
    "step": "plan_items",
    "action": "actions",
    "log": "action_logs",
    "message": "task_messages",
    "entry": "entries",
    "decision": "trace_decisions",
    "pattern": "patterns",
    "guardrail": "guardrails",
    "job": "jobs",
    "session": "sessions",
    "turn": "turns",
    "wait": "waits",
}

# What a store says of text it cannot keep (a lone surrogate, from bytes that were not UTF-8).
NOT_UTF8 = "a value given is not valid UTF-8 text (it holds bytes that are not); give it as UTF-8"


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


class Read(Protocol):
    """A read: `sql` with `$n` placeholders, `params` in their order; its rows."""

    def __call__(self, sql: str, params: Sequence[Any] = (), /) -> list[Row]: ...


class ReadTuples(Protocol):
    """A read whose rows are plain tuples, for the hot reads that take columns by position."""

    def __call__(self, sql: str, params: Sequence[Any] = (), /) -> list[tuple[Any, ...]]: ...


class StoreHost(Protocol):
    """What a store's parts read and write through: the store that holds them (both
    SQLiteStore and PostgresStore), with its space and its backend's dialect."""

    space: str
    dialect: Dialect

    def _rows(self, sql: str, params: Sequence[Any] = (), /) -> list[Row]: ...

    def _tuples(self, sql: str, params: Sequence[Any] = (), /) -> list[tuple[Any, ...]]: ...

    def _writer(self) -> tuple[Connection, Any]:
        """The connection and state of the write transaction in progress (RuntimeError
        outside one)."""
        ...

    def _reading(self) -> AbstractContextManager[Any]:
        """Hold one connection for a read of several statements."""
        ...

    def transaction(self, *, write: bool = False) -> AbstractContextManager[None]: ...


class RowReader:
    """A part of a store that reads (and writes) through the store that holds it: the
    store's reads, write connection and transactions, taken once as bound methods so a
    read costs no call more than the store's own."""

    def __init__(self, store: StoreHost) -> None:
        self.space = store.space
        self.dialect = store.dialect
        self._no_index = store.dialect.no_index
        self._rows: Read = store._rows
        self._tuples: ReadTuples = store._tuples
        self._writer: Callable[[], tuple[Connection, Any]] = store._writer
        self._reading: Callable[[], AbstractContextManager[Any]] = store._reading
        self.transaction = store.transaction
