"""Apply the utility model's events: the job outbox, model calls, running summaries.

Registered with `handlers.handles` like every other handler (see projection/__init__.py)."""

from __future__ import annotations

from clew.core import codec
from clew.models import Event
from clew.store.projection.handlers import handles, insert
from clew.store.sql import Connection


@handles("job.queued")
def _job_queued(conn: Connection, event: Event) -> None:
    job = event.data["job"]
    insert(
        conn,
        "jobs",
        {
            "id": job["id"],
            "space": event.space,
            "kind": job["kind"],
            "task_id": event.task_id,
            "step_id": job.get("step_id"),
            "created_at": event.created_at,
            "updated_at": event.created_at,
            "seq": event.seq,
        },
    )


@handles("job.claimed")
def _job_claimed(conn: Connection, event: Event) -> None:
    conn.execute(
        "UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = $1,"
        " updated_at = $2 WHERE id = $3 AND space = $4",
        (event.data["lease_until"], event.created_at, event.data["job_id"], event.space),
    )


@handles("job.done")
def _job_done(conn: Connection, event: Event) -> None:
    conn.execute(
        "UPDATE jobs SET status = 'done', lease_until = NULL, result = $1, error = NULL,"
        " updated_at = $2 WHERE id = $3 AND space = $4",
        (codec.dumps(event.data["result"]), event.created_at, event.data["job_id"], event.space),
    )


@handles("job.failed")
def _job_failed(conn: Connection, event: Event) -> None:
    # A job that may still be retried goes back to pending; the last failure stays failed.
    status = "pending" if event.data["retry"] else "failed"
    conn.execute(
        "UPDATE jobs SET status = $1, lease_until = NULL, error = $2, updated_at = $3"
        " WHERE id = $4 AND space = $5",
        (status, event.data["error"], event.created_at, event.data["job_id"], event.space),
    )


@handles("model.called")
def _model_called(conn: Connection, event: Event) -> None:
    call = event.data["call"]
    insert(
        conn,
        "model_calls",
        {
            **call,
            "ok": int(bool(call["ok"])),
            "space": event.space,
            "task_id": event.task_id,
            "created_at": event.created_at,
            "seq": event.seq,
        },
    )


@handles("model.output_rejected")
def _output_rejected(conn: Connection, event: Event) -> None:
    """The answer stays in the journal, verbatim; no table holds a rejected answer."""


@handles("summary.recorded")
def _summary_recorded(conn: Connection, event: Event) -> None:
    insert(
        conn,
        "task_summaries",
        {
            **event.data["summary"],
            "space": event.space,
            "task_id": event.task_id,
            "created_at": event.created_at,
            "seq": event.seq,
        },
    )
