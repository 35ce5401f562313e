"""Apply the lifecycle's events: smart waits and maintenance runs.

Registered with `handlers.handles` like every other handler (see projection/__init__.py). A
wait's row holds what the journal says: what is awaited, its status, the last observation that was
journaled and the evidence it ended with. When it was last polled is not journaled (see
lifecycle.py) and lives in `schedule`, which no handler writes."""

from __future__ import annotations

from clew.core import codec
from clew.models import Event
from clew.store.projection.handlers import handles
from clew.store.sql import Connection, numbered

_WAIT_COLUMNS = (
    "id",
    "step_id",
    "kind",
    "target",
    "description",
    "cwd",
    "poll_seconds",
    "timeout_seconds",
    "run_timeout",
    "deadline",
    "seal",
    "confined_to",
)


@handles("wait.added")
def _wait_added(conn: Connection, event: Event) -> None:
    wait = event.data["wait"]
    values = [wait.get(c) for c in _WAIT_COLUMNS]
    conn.execute(
        f"INSERT INTO waits ({', '.join(_WAIT_COLUMNS)}, space, task_id, criteria, created_at,"
        f" updated_at) VALUES ({numbered(len(_WAIT_COLUMNS) + 5)})",
        [
            *values,
            event.space,
            event.task_id,
            codec.dumps(wait.get("criteria", {})),
            event.created_at,
            event.created_at,
        ],
    )


@handles("wait.checked")
def _wait_checked(conn: Connection, event: Event) -> None:
    conn.execute(
        "UPDATE waits SET observation = $1, checked_at = $2, updated_at = $3"
        " WHERE id = $4 AND space = $5",
        (
            event.data["observation"],
            event.created_at,
            event.created_at,
            event.data["wait_id"],
            event.space,
        ),
    )


def _end(conn: Connection, event: Event, status: str, result: str | None) -> None:
    conn.execute(
        "UPDATE waits SET status = $1, result = $2, ended_at = $3, updated_at = $4"
        " WHERE id = $5 AND space = $6",
        (status, result, event.created_at, event.created_at, event.data["wait_id"], event.space),
    )
    if "observation" in event.data:
        conn.execute(
            "UPDATE waits SET observation = $1, checked_at = $2 WHERE id = $3 AND space = $4",
            (event.data["observation"], event.created_at, event.data["wait_id"], event.space),
        )


@handles("wait.resolved")
def _wait_resolved(conn: Connection, event: Event) -> None:
    _end(conn, event, "resolved", event.data["evidence"])


@handles("wait.timed_out")
def _wait_timed_out(conn: Connection, event: Event) -> None:
    _end(conn, event, "timed_out", event.data["evidence"])


@handles("wait.failed")
def _wait_failed(conn: Connection, event: Event) -> None:
    _end(conn, event, "error", event.data["error"])


@handles("wait.cancelled")
def _wait_cancelled(conn: Connection, event: Event) -> None:
    _end(conn, event, "cancelled", event.data.get("reason"))


@handles("maintenance.ran")
def _maintenance_ran(conn: Connection, event: Event) -> None:
    """A summary of one run for the journal; each action has its own event beside it."""
