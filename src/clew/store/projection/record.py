"""Apply the task record's events to `task_records` and `step_records` (see projection/__init__.py).

A task's record row is made with the task (`task.created` carries a `record`) or by the
first `task.record_set` of a task made before records existed; only the columns an event
names change. The phase timestamps are kept here, from the rows, like a step's timing:
`plan_generated_at` when the plan first has a step, `execution_started_at` when a step
first leaves pending or an action is first recorded, `synthesis_started_at` while every
step is completed or skipped (see record.py). They only update an existing row, so a task
made before records existed gets none from its old events, live or replayed.
"""

from __future__ import annotations

from typing import Any

from clew.core import codec
from clew.models import Event
from clew.store.projection.handlers import conflict, handles
from clew.store.sql import Connection, numbered

_DONE = "('completed', 'skipped')"
# The synthesis timestamp's new value (parameters: $1 the task id, $2 its space, $3 the
# time): set while the plan has steps and all are done, kept if already set, cleared otherwise.
_SYNTHESIS = (
    "CASE WHEN EXISTS (SELECT 1 FROM plan_items WHERE task_id = $1 AND space = $2 AND removed = 0)"
    " AND NOT EXISTS (SELECT 1 FROM plan_items WHERE task_id = $1 AND space = $2 AND removed = 0"
    f" AND status NOT IN {_DONE}) THEN coalesce(synthesis_started_at, $3) ELSE NULL END"
)

TASK_RECORD_FIELDS = frozenset(
    {"answer", "outcome", "error_reason", "error_step_id", "confidence", "domain", "priority"}
    | {"estimate_seconds", "plan_source", "entities", "plan_generated_at"}
    | {"execution_started_at", "synthesis_started_at"}
)
STEP_RECORD_FIELDS = frozenset({"agent", "outcome", "artifacts"})
_JSON = frozenset({"entities", "artifacts"})


def _upsert(
    conn: Connection,
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
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({numbered(len(row))})"
        f" ON CONFLICT {conflict(conn, 'id')} DO UPDATE SET {updates}",
        row,
    )


@handles("task.record_set")
def _task_record_set(conn: Connection, event: Event) -> None:
    key = {"id": event.data["task_id"], "space": event.space}
    _upsert(conn, "task_records", TASK_RECORD_FIELDS, key, event.data["changes"], event.created_at)


@handles("step.record_set")
def _step_record_set(conn: Connection, event: Event) -> None:
    key = {"id": event.data["step_id"], "space": event.space, "task_id": event.data["task_id"]}
    _upsert(conn, "step_records", STEP_RECORD_FIELDS, key, event.data["changes"], event.created_at)


def created(conn: Connection, event: Event) -> None:
    """A new task's record row, from the `record` its `task.created` event carries."""
    data = event.data.get("record")
    if data is None:
        return  # a task made before records existed
    changes = dict(data)
    if event.data.get("plan"):
        changes["plan_generated_at"] = event.created_at
    key = {"id": event.data["task"]["id"], "space": event.space}
    _upsert(conn, "task_records", TASK_RECORD_FIELDS, key, changes, event.created_at)


def plan_changed(conn: Connection, space: str, task_id: str, at: str) -> None:
    """After a replan: the plan may exist for the first time, or be no longer all done."""
    conn.execute(
        "UPDATE task_records SET plan_generated_at = $1 WHERE id = $2 AND space = $3"
        " AND plan_generated_at IS NULL"
        " AND EXISTS (SELECT 1 FROM plan_items WHERE task_id = $4 AND space = $5 AND removed = 0)",
        (at, task_id, space, task_id, space),
    )
    synthesis(conn, space, task_id, at)


def step_changed(conn: Connection, space: str, task_id: str, status: str, at: str) -> None:
    """After a step's status changed: execution may start, synthesis start or stop."""
    if status == "pending":
        synthesis(conn, space, task_id, at)
        return
    # One statement for both (a step begun is the usual change): `acted`'s condition as a
    # coalesce, so the row is found and written once instead of twice.
    conn.execute(
        "UPDATE task_records SET execution_started_at = coalesce(execution_started_at, $3),"
        f" synthesis_started_at = {_SYNTHESIS} WHERE id = $1 AND space = $2",
        (task_id, space, at),
    )


def acted(conn: Connection, space: str, task_id: str, at: str) -> None:
    """Execution starts with the first step begun or action recorded."""
    conn.execute(
        "UPDATE task_records SET execution_started_at = $1 WHERE id = $2 AND space = $3"
        " AND execution_started_at IS NULL",
        (at, task_id, space),
    )


def synthesis(conn: Connection, space: str, task_id: str, at: str) -> None:
    """Synthesis starts when every step is completed or skipped, and stops if one reopens."""
    conn.execute(
        f"UPDATE task_records SET synthesis_started_at = {_SYNTHESIS} WHERE id = $1 AND space = $2",
        (task_id, space, at),
    )
