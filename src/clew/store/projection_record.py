"""Apply the task record's events to `task_records` and `step_records` (see projection.py).

A record row is made by the first event that sets something on it and updated by the next
ones; only the columns an event names change, and every value comes from the event.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from clew.models import Event
from clew.store import codec
from clew.store.projection import handles

TASK_RECORD_FIELDS = frozenset(
    {"answer", "outcome", "error_reason", "error_step_id", "confidence", "domain", "priority"}
    | {"estimate_seconds", "plan_source", "entities", "plan_generated_at"}
    | {"execution_started_at", "synthesis_started_at"}
)
STEP_RECORD_FIELDS = frozenset({"agent", "outcome", "artifacts"})
_JSON = frozenset({"entities", "artifacts"})


def _upsert(
    conn: sqlite3.Connection,
    table: str,
    allowed: frozenset[str],
    key: dict[str, Any],
    changes: dict[str, Any],
    at: str,
) -> None:
    unknown = set(changes) - allowed
    if unknown:
        raise ValueError(f"event changes unknown {table} columns {sorted(unknown)}")
    values = {c: codec.dumps(v) if c in _JSON else v for c, v in changes.items()}
    columns = [*key, *sorted(values), "updated_at"]
    row = [*key.values(), *(values[c] for c in sorted(values)), at]
    updates = ", ".join(f"{c} = excluded.{c}" for c in [*sorted(values), "updated_at"])
    conn.execute(
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in row)})"
        f" ON CONFLICT(id) DO UPDATE SET {updates}",
        row,
    )


@handles("task.record_set")
def _task_record_set(conn: sqlite3.Connection, event: Event) -> None:
    key = {"id": event.data["task_id"], "space": event.space}
    _upsert(conn, "task_records", TASK_RECORD_FIELDS, key, event.data["changes"], event.created_at)


@handles("step.record_set")
def _step_record_set(conn: sqlite3.Connection, event: Event) -> None:
    key = {"id": event.data["step_id"], "space": event.space, "task_id": event.data["task_id"]}
    _upsert(conn, "step_records", STEP_RECORD_FIELDS, key, event.data["changes"], event.created_at)
