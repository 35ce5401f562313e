"""Apply journal events to the current-state tables.

This is the only code that writes projection rows, and it runs both on the live
write path (in the same transaction as the event insert) and when `verify`
replays the journal into a scratch database, so the two cannot drift apart by
construction. Every value a row gets comes from the event: its data, its space
and its timestamp, never the wall clock.

The package: this module applies an event (and upgrades an older one's data), handlers.py
is the registry of handlers by event type, and one module per subject registers its own
(archive, conversations, record, redactions, utility, waits); frozen_turns.py and
frozen_error_lines.py are frozen copies of heuristics as they first shipped, which old
events are replayed with. It may import store/sql.py and nothing else of the store: the
same code runs on both backends and in every replay.
"""

from __future__ import annotations

from typing import Any

from clew.core import codec
from clew.core.clock import seconds_between
from clew.models import FINISHED_STEP_STATUSES, Event, StepStatus, TaskStatus
from clew.store.projection import frozen_error_lines
from clew.store.projection import redactions as projection_redactions
from clew.store.projection.handlers import _HANDLERS as _HANDLERS
from clew.store.projection.handlers import _JSON_COLUMNS as _JSON_COLUMNS
from clew.store.projection.handlers import (
    _UPGRADES,
    OUTPUTS,
    _column_value,
    conflict,
    handles,
    insert,
)
from clew.store.projection.handlers import upgrades as upgrades
from clew.store.sql import Connection

# Columns an event may change, per table: the handlers never interpolate anything else.
_TASK_FIELDS = frozenset({"name", "goal", "workspace", "metadata", "next_objective", "summary"})
_STEP_FIELDS = frozenset({"title", "status", "summary", "active_issue", "depends_on"})
_ACTION_FIELDS = frozenset(
    {"summary", "status", "output", "exit_code", "duration_seconds", "stdout", "stderr"}
    | {"ended_at", "cpu_seconds", "memory_mb", "fingerprint", "stdout_errors", "stderr_errors"}
)
_CLOSED = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})


def current(conn: Connection, event: Event) -> Event:
    """Return `event` with its data in the current shape (the event itself if it is)."""
    for outdated, upgrade in _UPGRADES.get(event.type, ()):
        if outdated(event.data):
            event = event._replace(data=upgrade(conn, event))
    return event


def apply(conn: Connection, event: Event, touched: set[tuple[str, str]] | None = None) -> None:
    """Bring the projection tables up to date with one event.

    A task's `updated_at` becomes the time of its newest event. Events of one call
    share a timestamp, so a caller may pass a `touched` set (per transaction) to skip
    stamping the same task with the same time twice; the result is the same.
    """
    handler = _HANDLERS.get(event.type)
    if handler is None:
        raise ValueError(f"unknown event type {event.type!r}")
    handler(conn, current(conn, event))
    redactions = event.data.get("redactions")
    if redactions is not None:
        projection_redactions.record(conn, event, redactions)
    if event.task_id is None or event.type == "task.created":
        return
    key = (event.task_id, event.created_at)
    if touched is None or key not in touched:
        conn.execute(
            "UPDATE tasks SET updated_at = $1 WHERE id = $2 AND space = $3",
            (event.created_at, event.task_id, event.space),
        )
        if touched is not None:
            touched.add(key)


def output_kinds(values: dict[str, Any]) -> dict[str, str | None]:
    """The kind of each command output among `values`: 'bytes' for output that is not
    UTF-8 text, 'text' for text, None for none; a backend stores each kind as its own type."""
    return {
        f"{name}_kind": None
        if values[name] is None
        else "bytes"
        if isinstance(values[name], bytes)
        else "text"
        for name in ("stdout", "stderr")
        if name in values
    }


def _set(
    conn: Connection,
    table: str,
    allowed: frozenset[str],
    space: str,
    row_id: str,
    changes: dict[str, Any],
    derived: dict[str, Any] | None = None,
) -> None:
    """Update the columns an event names (only `allowed` ones) plus `derived` values
    the handler computed, in one statement."""
    unknown = set(changes) - allowed
    if unknown:
        raise ValueError(f"event changes unknown {table} columns {sorted(unknown)}")
    values = {**changes, **(derived or {})}
    if not values:
        return
    columns = sorted(values)
    assignments = ", ".join(f"{c} = ${n}" for n, c in enumerate(columns, 3))
    output = conn.dialect.output  # a command's output as its column takes it
    conn.execute(
        f"UPDATE {table} SET {assignments} WHERE id = $1 AND space = $2",
        [row_id, space]
        + [output(values[c]) if c in OUTPUTS else _column_value(c, values[c]) for c in columns],
    )


def _insert_step(
    conn: Connection, event: Event, task_id: str, ordinal: int, step: dict[str, Any]
) -> None:
    conn.execute(
        "INSERT INTO plan_items (id, space, task_id, ordinal, title, status, depends_on,"
        " created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8)",
        (
            step["id"],
            event.space,
            task_id,
            ordinal,
            step["title"],
            codec.dumps(step.get("depends_on", [])),
            event.created_at,
            event.created_at,
        ),
    )


@handles("task.created")
def _task_created(conn: Connection, event: Event) -> None:
    task = event.data["task"]
    conn.execute(
        "INSERT INTO tasks (id, space, name, goal, workspace, status, metadata, plan_version,"
        " created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $9)",
        (
            task["id"],
            event.space,
            task["name"],
            task.get("goal"),
            task.get("workspace"),
            TaskStatus.ACTIVE.value,
            codec.dumps(task.get("metadata", {})),
            event.created_at,
            event.created_at,
        ),
    )
    for ordinal, step in enumerate(event.data["plan"], start=1):
        _insert_step(conn, event, task["id"], ordinal, step)
    projection_record.created(conn, event)


@handles("task.updated")
def _task_updated(conn: Connection, event: Event) -> None:
    _set(conn, "tasks", _TASK_FIELDS, event.space, event.data["task_id"], event.data["changes"])


@handles("task.status_changed")
def _task_status_changed(conn: Connection, event: Event) -> None:
    new = TaskStatus(event.data["to"])
    completed_at = event.created_at if new in _CLOSED else None
    conn.execute(
        "UPDATE tasks SET status = $1, completed_at = $2 WHERE id = $3 AND space = $4",
        (new.value, completed_at, event.data["task_id"], event.space),
    )


@handles("task.archived")
def _task_archived(conn: Connection, event: Event) -> None:
    archived = bool(event.data["archived"])
    conn.execute(
        "UPDATE tasks SET archived = $1, archived_at = $2 WHERE id = $3 AND space = $4",
        (int(archived), event.created_at if archived else None, event.data["task_id"], event.space),
    )


@handles("plan.revised")
def _plan_revised(conn: Connection, event: Event) -> None:
    task_id, space = event.data["task_id"], event.space
    # Clear positions first: the unique (task_id, ordinal) index forbids a transient clash.
    conn.execute(
        "UPDATE plan_items SET ordinal = NULL WHERE task_id = $1 AND space = $2", (task_id, space)
    )
    for step_id in event.data["removed"]:
        conn.execute(
            "UPDATE plan_items SET removed = 1, updated_at = $1 WHERE id = $2 AND space = $3",
            (event.created_at, step_id, space),
        )
    added = set(event.data["added"])
    for ordinal, step in enumerate(event.data["plan"], start=1):
        if step["id"] in added:
            _insert_step(conn, event, task_id, ordinal, step)
        else:
            conn.execute(
                "UPDATE plan_items SET ordinal = $1, title = $2, depends_on = $3,"
                " updated_at = CASE WHEN title = $4 AND depends_on = $5 THEN updated_at ELSE $6 END"
                " WHERE id = $7 AND space = $8",
                (
                    ordinal,
                    step["title"],
                    codec.dumps(step.get("depends_on", [])),
                    step["title"],
                    codec.dumps(step.get("depends_on", [])),
                    event.created_at,
                    step["id"],
                    space,
                ),
            )
    conn.execute(
        "UPDATE tasks SET plan_version = $1, last_replanned_at = $2 WHERE id = $3 AND space = $4",
        (event.data["version"], event.created_at, task_id, space),
    )
    projection_record.plan_changed(conn, space, task_id, event.created_at)


@upgrades("step.updated", lambda data: "status" in data["changes"] and "timing" not in data)
def _step_before_timing(conn: Connection, event: Event) -> dict[str, Any]:
    """Derive the timing a status change gave a step, which events written before they
    carried it lack, as the projection then did: a finish reads the step's start from its
    row, which is the start the step had at this event while the journal replays in order."""
    at = event.created_at
    status = StepStatus(event.data["changes"]["status"])
    timing: dict[str, Any] = {"started_at": None, "completed_at": None, "duration_seconds": None}
    if status is StepStatus.ACTIVE:
        timing["started_at"] = at
    elif status in FINISHED_STEP_STATUSES:
        row = conn.execute(
            "SELECT started_at FROM plan_items WHERE id = $1 AND space = $2",
            (event.data["step_id"], event.space),
        )
        found = row.fetchone()
        started = found[0] if found is not None else None
        del timing["started_at"]
        timing["completed_at"] = at
        timing["duration_seconds"] = seconds_between(started, at) if started else None
    return {**event.data, "timing": timing}


@handles("step.updated")
def _step_updated(conn: Connection, event: Event) -> None:
    step_id = event.data["step_id"]
    changes = event.data["changes"]
    # A status change carries the step's timing (tasks.step_timing).
    timing = {"updated_at": event.created_at, **event.data.get("timing", {})}
    _set(conn, "plan_items", _STEP_FIELDS, event.space, step_id, changes, timing)
    if "status" in changes:
        projection_record.step_changed(
            conn, event.space, event.data["task_id"], changes["status"], event.created_at
        )


# What an action.recorded event may carry besides id, type, summary and status.
_ACTION_OPTIONAL = (
    "plan_item_id",
    "input",
    "output",
    "command",
    "cwd",
    "exit_code",
    "duration_seconds",
    "stdout",
    "stderr",
    "tool",
    "decision_id",
    "started_at",
    "ended_at",
    "cpu_seconds",
    "memory_mb",
    "fingerprint",
    "stdout_errors",
    "stderr_errors",
)


@handles("action.recorded")
def _action_recorded(conn: Connection, event: Event) -> None:
    a = event.data["action"]
    row = {"id": a["id"], "space": event.space, "task_id": event.task_id}
    row.update(type=a["type"], summary=a["summary"], status=a["status"])
    row.update({key: a.get(key) for key in _ACTION_OPTIONAL})
    row.update(output_kinds(row))
    insert(
        conn,
        "actions",
        {**row, "seq": event.seq, "created_at": event.created_at, "updated_at": event.created_at},
    )
    projection_record.acted(conn, event.space, row["task_id"], event.created_at)


_STREAMS = ("stdout", "stderr")


@upgrades("action.recorded", lambda data: "stdout_errors" not in data["action"])
def _action_before_error_lines(conn: Connection, event: Event) -> dict[str, Any]:
    """The error lines of the middle of each output, which events written before they
    carried them lack: derived by the frozen copy migration 14 filled their rows with."""
    action = dict(event.data["action"])
    for name in _STREAMS:
        action[f"{name}_errors"] = frozen_error_lines.error_lines(action.get(name))
    return {**event.data, "action": action}


def _output_without_error_lines(data: dict[str, Any]) -> bool:
    return any(n in data["changes"] and f"{n}_errors" not in data["changes"] for n in _STREAMS)


@upgrades("action.updated", _output_without_error_lines)
def _update_before_error_lines(conn: Connection, event: Event) -> dict[str, Any]:
    """The same for an output given when a command finished."""
    changes = dict(event.data["changes"])
    for name in _STREAMS:
        if name in changes:
            changes[f"{name}_errors"] = frozen_error_lines.error_lines(changes[name])
    return {**event.data, "changes": changes}


@handles("action.updated")
def _action_updated(conn: Connection, event: Event) -> None:
    action_id = event.data["action_id"]
    changes = event.data["changes"]
    derived = {"updated_at": event.created_at, **output_kinds(changes)}
    _set(conn, "actions", _ACTION_FIELDS, event.space, action_id, changes, derived)


@handles("action.logged")
def _action_logged(conn: Connection, event: Event) -> None:
    log = event.data["log"]
    conn.execute(
        "INSERT INTO action_logs (id, space, task_id, action_id, type, content, created_at, seq)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        (
            log["id"],
            event.space,
            event.task_id,
            log["action_id"],
            log["type"],
            log["content"],
            event.created_at,
            event.seq,
        ),
    )


@handles("message.added")
def _message_added(conn: Connection, event: Event) -> None:
    m = event.data["message"]
    conn.execute(
        "INSERT INTO task_messages (id, space, task_id, role, type, content, created_at, seq)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        (
            m["id"],
            event.space,
            event.task_id,
            m["role"],
            m["type"],
            m["content"],
            event.created_at,
            event.seq,
        ),
    )


@handles("task.stuck_alerted")
def _stuck_alerted(conn: Connection, event: Event) -> None:
    """The alert's conditions stay in the journal; its message is a row of its own (the
    `message.added` event before this one), which is what the cooldown reads."""


@handles("journal.forgotten")
def _forgotten(conn: Connection, event: Event) -> None:
    """No row of its own. The events it names are rewritten, and their rows brought along,
    when it is journaled (store/forgetting.py); a replay reads those events as they were
    left, so their rows come out forgotten already."""


@handles("task.files_changed")
def _files_changed(conn: Connection, event: Event) -> None:
    # A path first seen as created stays "created" however often it is modified after.
    for change in event.data["files"]:
        created = 1 if change["change"] == "created" else 0
        conn.execute(
            "INSERT INTO task_files (id, space, task_id, path, created, modifications,"
            " first_at, last_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
            f" ON CONFLICT {conflict(conn, 'id')} DO UPDATE SET"
            " created = CASE WHEN excluded.created = 1 THEN 1 ELSE task_files.created END,"
            " modifications = task_files.modifications + excluded.modifications,"
            " last_at = excluded.last_at",
            (
                f"{event.task_id}/{change['path']}",
                event.space,
                event.task_id,
                change["path"],
                created,
                1 - created,
                event.created_at,
                event.created_at,
            ),
        )


# Each subject's module registers its handlers as it is imported.
from clew.store.projection import archive, conversations, utility, waits  # noqa: E402, F401
from clew.store.projection import record as projection_record  # noqa: E402
