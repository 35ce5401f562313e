"""The `redactions` rows: what each event's data says redaction took out of it (its
"redactions": [{field, kind, count}]), one row per field and kind. Written by
`projection.apply` after any event's own handler, so every event type records them the same
way, and `verify` rebuilds them from the journal like every other projection."""

from __future__ import annotations

from typing import Any

from clew.models import Event
from clew.store.sql import Connection

MAX_FIELD = 200  # characters of a field's path
MAX_KIND = 40


def record(conn: Connection, event: Event, redactions: Any) -> None:
    """Insert the rows of one event's redactions; refuse a record that is not one."""
    if not isinstance(redactions, list):
        raise ValueError("an event's redactions must be a list")
    session = _session_of(event)
    for n, item in enumerate(redactions):
        field = item.get("field") if isinstance(item, dict) else None
        kind = item.get("kind") if isinstance(item, dict) else None
        count = item.get("count") if isinstance(item, dict) else None
        if not (
            isinstance(field, str)
            and isinstance(kind, str)
            and 0 < len(field) <= MAX_FIELD
            and 0 < len(kind) <= MAX_KIND
            and type(count) is int
            and 0 < count < 2**31
        ):
            raise ValueError(f"redaction {n} of the event is not a field, a kind and a count")
        conn.execute(
            "INSERT INTO redactions (id, space, seq, event_id, event_type, task_id, session_id,"
            " field, kind, count, created_at)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
            (
                f"{event.id}/{n}",
                event.space,
                event.seq,
                event.id,
                event.type,
                event.task_id,
                session,
                field,
                kind,
                count,
                event.created_at,
            ),
        )


def _session_of(event: Event) -> str | None:
    """The session an event belongs to, when it is a session's (a turn, a session's change)."""
    data = event.data
    sid = data.get("session_id")
    if sid is None and event.type == "session.started":
        sid = (data.get("session") or {}).get("id")
    return sid if isinstance(sid, str) else None
