"""Apply conversation events: sessions, their verbatim turns, and each session's state,
folded from its turns by `session_state.advance` (so replaying the journal rebuilds the
state exactly). Registered with `projection.handles` (see projection.py)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from clew import session_state, turns
from clew.models import Event
from clew.store.projection import handles, insert, upgrades

_SESSION_FIELDS = ("key", "workspace", "model", "system_prompt", "task_id", "title")


@handles("session.started")
def _session_started(conn: sqlite3.Connection, event: Event) -> None:
    s = event.data["session"]
    insert(conn, "sessions", {
        "id": s["id"], "space": event.space, **{k: s.get(k) for k in _SESSION_FIELDS},
        "started_at": event.created_at, "last_active_at": event.created_at,
        "seq": event.seq,
    })  # fmt: skip


@handles("session.updated")
def _session_updated(conn: sqlite3.Connection, event: Event) -> None:
    changes = event.data["changes"]
    unknown = set(changes) - {*_SESSION_FIELDS, "active"}
    if unknown:
        raise ValueError(f"event changes unknown session columns {sorted(unknown)}")
    for column in sorted(changes):
        value = int(changes[column]) if column == "active" else changes[column]
        conn.execute(
            f"UPDATE sessions SET {column} = ? WHERE id = ?", (value, event.data["session_id"])
        )


@upgrades("turn.appended", lambda data: "call_turn" not in data["turn"])
def _turn_before_call_turn(conn: sqlite3.Connection, data: dict[str, Any]) -> dict[str, Any]:
    """Derive `call_turn` and `tool_name`, which turns written before the facade put them in
    the event lack (clew's shape up to commit a0ae60a), as the projection then did: from
    the calls the session state keeps until their results arrive. Replayed in order, the
    state is the one the turn was appended to, so the result is exact; read later (for
    display), the turn's row already holds what the replay derived."""
    t = data["turn"]
    row = conn.execute("SELECT tool_name, call_turn FROM turns WHERE id = ?", (t["id"],))
    known = row.fetchone()
    if known is not None:
        return {**data, "turn": {**t, "tool_name": known[0], "call_turn": known[1]}}
    parts = turns.parse(t["message"])
    row = conn.execute("SELECT state FROM sessions WHERE id = ?", (data["session_id"],))
    found = row.fetchone()
    state = json.loads(found[0]) if found is not None else {}
    call = state.get("calls", {}).get(parts.tool_call_id or "", {})
    name = t.get("tool_name") or parts.tool_name or call.get("name")
    return {**data, "turn": {**t, "tool_name": name, "call_turn": call.get("turn")}}


@handles("turn.appended")
def _turn_appended(conn: sqlite3.Connection, event: Event) -> None:
    t = event.data["turn"]
    session_id = event.data["session_id"]
    message = t["message"]
    parts = turns.parse(message)
    stored, _, text_content = turns.split(message)
    calls = [list(c) for c in parts.tool_calls] or None
    insert(conn, "turns", {
        "id": t["id"], "space": event.space, "session_id": session_id, "turn": t["number"],
        "role": parts.role, "content": parts.text, "text_content": int(text_content),
        "tool_calls": None if calls is None else json.dumps(calls, ensure_ascii=False),
        "tool_call_id": parts.tool_call_id, "tool_name": t["tool_name"],
        "call_turn": t["call_turn"], "message": stored, "token_count": t["token_count"],
        "created_at": event.created_at,
    })  # fmt: skip
    row = conn.execute("SELECT state FROM sessions WHERE id = ?", (session_id,)).fetchone()
    state = session_state.advance(json.loads(row[0]), t["number"], parts)
    conn.execute(
        "UPDATE sessions SET turn_count = turn_count + 1, total_tokens = total_tokens + ?,"
        " last_active_at = ?, state = ? WHERE id = ?",
        (t["token_count"], event.created_at, json.dumps(state, ensure_ascii=False), session_id),
    )


@handles("turns.hidden")
def _turns_hidden(conn: sqlite3.Connection, event: Event) -> None:
    """Hidden from the session's view (Agents SDK pop / clear), kept in the archive:
    one turn (`turn`) or every turn up to one (`through`)."""
    session_id = event.data["session_id"]
    if "through" in event.data:
        conn.execute(
            "UPDATE turns SET hidden = 1 WHERE session_id = ? AND turn <= ?",
            (session_id, event.data["through"]),
        )
    else:
        conn.execute(
            "UPDATE turns SET hidden = 1 WHERE session_id = ? AND turn = ?",
            (session_id, event.data["turn"]),
        )
