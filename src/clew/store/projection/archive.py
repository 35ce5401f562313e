"""Apply layer-2 events to their tables: entries with their labels and sources, fixes, the
episodic trace, patterns and guardrails. Registered with `handlers.handles`, so the live
write path and `verify`'s replay run the same code (see projection/__init__.py)."""

from __future__ import annotations

from typing import Any

from clew.core import codec
from clew.models import Event
from clew.store.projection.handlers import handles, insert
from clew.store.sql import Connection


def _entry_children(conn: Connection, event: Event, entry: dict[str, Any]) -> None:
    """The rows an entry brings: one per tag, per relevant step, per source."""
    entry_id = entry["id"]
    for kind, values in (
        ("tag", entry.get("tags", [])),
        ("relevance", entry.get("relevance_to", [])),
    ):
        for value in values:
            insert(
                conn,
                "entry_labels",
                {
                    "id": f"{entry_id}/{kind}/{value}",
                    "space": event.space,
                    "entry_id": entry_id,
                    "kind": kind,
                    "value": value,
                },
            )
    for position, (kind, source_id) in enumerate(entry.get("sources", [])):
        insert(
            conn,
            "entry_sources",
            {
                "id": f"{entry_id}/{kind}/{source_id}",
                "space": event.space,
                "entry_id": entry_id,
                "kind": kind,
                "source_id": source_id,
                "position": position,
            },
        )


def _fix(conn: Connection, event: Event, fix: dict[str, Any] | None) -> None:
    if fix is not None:
        insert(
            conn,
            "fixes",
            {
                "id": fix["id"],
                "space": event.space,
                "fingerprint": fix["fingerprint"],
                "entry_id": fix.get("entry_id"),
                "task_id": event.task_id,
                "description": fix["description"],
                "worked": int(bool(fix["worked"])),
                "created_at": event.created_at,
                "seq": event.seq,
            },
        )


@handles("entry.added")
def _entry_added(conn: Connection, event: Event) -> None:
    e = event.data["entry"]
    resolved = e.get("status") == "resolved"
    insert(
        conn,
        "entries",
        {
            "id": e["id"],
            "space": event.space,
            "task_id": event.task_id,
            "subtask_id": e.get("subtask_id"),
            "type": e["type"],
            "summary": e["summary"],
            "detail": e.get("detail"),
            "tags": e.get("tags", []),
            "relevance_to": e.get("relevance_to", []),
            "status": e.get("status", "active"),
            "resolution": e.get("resolution"),
            "resolved_at": event.created_at if resolved else None,
            "supersedes": e.get("supersedes"),
            "fingerprint": e.get("fingerprint"),
            "created_at": event.created_at,
            "updated_at": event.created_at,
            "origin": e.get("origin"),
            "keep_open": int(bool(e.get("keep_open"))),
        },
    )
    _entry_children(conn, event, e)
    # `also_supersedes`: other records of the same decision or failure (an extracted copy).
    for old in filter(None, [e.get("supersedes"), *e.get("also_supersedes", [])]):
        conn.execute(
            "UPDATE entries SET status = 'superseded', updated_at = $1"
            " WHERE id = $2 AND space = $3",
            (event.created_at, old, event.space),
        )
    _fix(conn, event, event.data.get("fix"))


@handles("entry.resolved")
def _entry_resolved(conn: Connection, event: Event) -> None:
    conn.execute(
        "UPDATE entries SET status = 'resolved', resolution = $1, resolved_at = $2, updated_at = $3"
        " WHERE id = $4 AND space = $5",
        (
            event.data["resolution"],
            event.created_at,
            event.created_at,
            event.data["entry_id"],
            event.space,
        ),
    )
    _fix(conn, event, event.data.get("fix"))


@handles("entry.kept_open")
def _entry_kept_open(conn: Connection, event: Event) -> None:
    conn.execute(
        "UPDATE entries SET keep_open = $1, updated_at = $2 WHERE id = $3 AND space = $4",
        (int(bool(event.data["keep_open"])), event.created_at, event.data["entry_id"], event.space),
    )


@handles("entry.evidence_added")
def _entry_evidence_added(conn: Connection, event: Event) -> None:
    # Ids and a time only: the command is the action's, so forgetting it forgets this too.
    row = conn.execute(
        "SELECT evidence FROM entries WHERE id = $1 AND space = $2",
        (event.data["entry_id"], event.space),
    ).fetchone()
    if row is None:
        return
    evidence = [*codec.loads(row[0] or "[]"), [event.data["action_id"], event.created_at]]
    conn.execute(
        "UPDATE entries SET evidence = $1, updated_at = $2 WHERE id = $3 AND space = $4",
        (codec.dumps(evidence), event.created_at, event.data["entry_id"], event.space),
    )


@handles("fix.recorded")
def _fix_recorded(conn: Connection, event: Event) -> None:
    _fix(conn, event, event.data["fix"])


@handles("trace.decision_recorded")
def _decision_recorded(conn: Connection, event: Event) -> None:
    d = dict(event.data["decision"])
    insert(
        conn,
        "trace_decisions",
        {
            **d,
            "space": event.space,
            "task_id": event.task_id,
            "created_at": event.created_at,
            "seq": event.seq,
        },
    )


@handles("trace.validation_recorded")
def _validation_recorded(conn: Connection, event: Event) -> None:
    v = dict(event.data["validation"])
    v["passed"] = int(bool(v["passed"]))
    insert(
        conn,
        "trace_validations",
        {
            **v,
            "space": event.space,
            "task_id": event.task_id,
            "created_at": event.created_at,
            "seq": event.seq,
        },
    )
    conn.execute(
        "UPDATE trace_decisions SET validation_status = $1 WHERE id = $2 AND space = $3",
        ("passed" if v["passed"] else "failed", v["decision_id"], event.space),
    )


@handles("pattern.added")
def _pattern_added(conn: Connection, event: Event) -> None:
    insert(
        conn,
        "patterns",
        {
            **event.data["pattern"],
            "space": event.space,
            "created_at": event.created_at,
            "updated_at": event.created_at,
            "seq": event.seq,
        },
    )


@handles("pattern.observed")
def _pattern_observed(conn: Connection, event: Event) -> None:
    column = "success_count" if event.data["success"] else "failure_count"
    conn.execute(
        f"UPDATE patterns SET {column} = {column} + 1, last_validated = $1, updated_at = $2"
        " WHERE id = $3 AND space = $4",
        (event.created_at, event.created_at, event.data["pattern_id"], event.space),
    )


@handles("pattern.deprecated")
def _pattern_deprecated(conn: Connection, event: Event) -> None:
    for pattern_id in event.data["pattern_ids"]:
        conn.execute(
            "UPDATE patterns SET deprecated = $1, updated_at = $2 WHERE id = $3 AND space = $4",
            (int(bool(event.data["deprecated"])), event.created_at, pattern_id, event.space),
        )


@handles("guardrail.added")
def _guardrail_added(conn: Connection, event: Event) -> None:
    insert(
        conn,
        "guardrails",
        {
            **event.data["guardrail"],
            "space": event.space,
            "created_at": event.created_at,
            "updated_at": event.created_at,
            "seq": event.seq,
        },
    )


@handles("guardrail.changed")
def _guardrail_changed(conn: Connection, event: Event) -> None:
    conn.execute(
        "UPDATE guardrails SET enabled = $1, updated_at = $2 WHERE id = $3 AND space = $4",
        (
            int(bool(event.data["enabled"])),
            event.created_at,
            event.data["guardrail_id"],
            event.space,
        ),
    )
