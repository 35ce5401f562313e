"""The projection's registries: the handler of each event type, the upgrades of older event
shapes, and the insert every handler shares. Below projection/__init__.py and its subject modules
(projection/archive.py...), which register here, so none of them imports another to do so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clew.core import codec
from clew.models import Event
from clew.store.sql import Connection, numbered

Handler = Callable[[Connection, Event], None]
_HANDLERS: dict[str, Handler] = {}
# Old events always replay: the journal is append-only (and hashed), so an event written
# in an older shape is never rewritten; an upgrade brings its data to the current shape
# whenever it is read (before projection, and when events are listed). Keyed by event
# type, each with a test for the older shape it knows, run in registration order.
Upgrade = Callable[[Connection, Event], dict[str, Any]]
Outdated = Callable[[dict[str, Any]], bool]
_UPGRADES: dict[str, list[tuple[Outdated, Upgrade]]] = {}

# The columns of a command's output: text or bytes (its kind in a column beside it), which
# each backend's column takes its own way (sql.Dialect.output).
OUTPUTS = frozenset({"stdout", "stderr"})
_JSON_COLUMNS = frozenset(
    {"metadata", "depends_on", "input", "output", "tags", "relevance_to", "context", "result"}
    | {"artifacts", "requirements", "violations", "valid_examples", "invalid_examples"}
)


def handles(event_type: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        _HANDLERS[event_type] = fn
        return fn

    return register


def upgrades(event_type: str, outdated: Outdated) -> Callable[[Upgrade], Upgrade]:
    """Register an upgrade of `event_type` data for which `outdated` holds."""

    def register(fn: Upgrade) -> Upgrade:
        _UPGRADES.setdefault(event_type, []).append((outdated, fn))
        return fn

    return register


def conflict(conn: Connection, *key: str) -> str:
    """The `ON CONFLICT` target of a row keyed by `key` within its space, as `conn`'s backend
    keys it (its dialect's): PostgreSQL's keys start with `space` (postgres/migrations.py: two
    spaces may hold the same journal, so the same ids); SQLite's ids are unique across the
    file and its keys have no `space` (migrations.py)."""
    return conn.dialect.conflict(*key)


def _column_value(column: str, value: Any) -> Any:
    return codec.dumps(value) if column in _JSON_COLUMNS and value is not None else value


_TABLE_COLUMNS: dict[str, frozenset[str]] = {}
# Each insert's statement and the positions of its JSON columns, by table and columns, made
# once: a projection inserts the same columns for every event of a type (an action's row has
# 27, and building its statement and checking each column cost more than running it).
_INSERTS: dict[tuple[str, tuple[str, ...]], tuple[str, tuple[int, ...], tuple[int, ...]]] = {}
_INSERTS_KEPT = 512  # any more column sets are checked and built each time, not kept


def insert(conn: Connection, table: str, values: dict[str, Any]) -> None:
    """Insert one row; JSON columns are encoded. Keys may come from event data, so each must
    be a column of the table: a journal event can never name anything else."""
    columns = tuple(values)
    made = _INSERTS.get((table, columns))
    if made is None:
        known = _TABLE_COLUMNS.get(table)
        if known is None:
            # The columns as any DB-API cursor describes them (no PRAGMA: every backend runs this).
            cursor = conn.execute(f"SELECT * FROM {table} WHERE 1 = 0")
            known = _TABLE_COLUMNS[table] = frozenset(c[0] for c in cursor.description)
        unknown = set(columns) - known
        if unknown:
            raise ValueError(f"event names unknown {table} columns {sorted(unknown)}")
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({numbered(len(columns))})"
        made = (
            sql,
            tuple(i for i, c in enumerate(columns) if c in _JSON_COLUMNS),
            tuple(i for i, c in enumerate(columns) if c in OUTPUTS),
        )
        if len(_INSERTS) < _INSERTS_KEPT:
            _INSERTS[table, columns] = made
    sql, json_at, output_at = made
    params = list(values.values())
    for i in json_at:
        if params[i] is not None:
            params[i] = codec.dumps(params[i])
    for i in output_at:  # a command's output as its BLOB or bytea column takes it
        params[i] = conn.dialect.output(params[i])
    conn.execute(sql, params)
