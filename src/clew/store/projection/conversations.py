"""Apply conversation events: sessions, their verbatim turns, and each session's state.
A turn's event carries what was derived from it when it was appended (its role, text,
tool calls, and what it changed in the session state), so this copies values and never
parses or folds; events older than that are upgraded on read with the heuristics of their
time (frozen_turns). Registered with `handlers.handles` (see projection/__init__.py)."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from clew.models import Event
from clew.store.projection.handlers import handles, insert, upgrades
from clew.store.sql import Connection

_SESSION_FIELDS = ("key", "workspace", "model", "system_prompt", "task_id", "title")


@handles("session.started")
def _session_started(conn: Connection, event: Event) -> None:
    s = event.data["session"]
    insert(
        conn,
        "sessions",
        {
            "id": s["id"],
            "space": event.space,
            **{k: s.get(k) for k in _SESSION_FIELDS},
            # A conversation recorded after it happened says when it started.
            "started_at": s.get("started_at", event.created_at),
            "last_active_at": s.get("started_at", event.created_at),
            "seq": event.seq,
        },
    )


@handles("session.updated")
def _session_updated(conn: Connection, event: Event) -> None:
    changes = event.data["changes"]
    unknown = set(changes) - {*_SESSION_FIELDS, "active"}
    if unknown:
        raise ValueError(f"event changes unknown session columns {sorted(unknown)}")
    for column in sorted(changes):
        value = int(changes[column]) if column == "active" else changes[column]
        conn.execute(
            f"UPDATE sessions SET {column} = $1 WHERE id = $2 AND space = $3",
            (value, event.data["session_id"], event.space),
        )


@upgrades("turn.appended", lambda data: "call_turn" not in data["turn"])
def _turn_before_call_turn(conn: Connection, event: Event) -> dict[str, Any]:
    """Derive `call_turn` and `tool_name`, which turns written before the facade put them in
    the event lack (clew's shape up to commit a0ae60a), as the projection then did: from
    the calls the session state keeps until their results arrive. Replayed in order, the
    state is the one the turn was appended to, so the result is exact; read later (for
    display), the turn's row already holds what the replay derived."""
    from clew.store.projection import frozen_turns  # lazily: only old events need it

    data = event.data
    t = data["turn"]
    row = conn.execute(
        "SELECT tool_name, call_turn FROM turns WHERE id = $1 AND space = $2",
        (t["id"], event.space),
    )
    known = row.fetchone()
    if known is not None:
        return {**data, "turn": {**t, "tool_name": known[0], "call_turn": known[1]}}
    parts = frozen_turns.parse(t["message"])
    calls = _state(conn, event.space, data["session_id"]).get("calls", {})
    call = calls.get(parts.tool_call_id or "", {})
    name = t.get("tool_name") or parts.tool_name or call.get("name")
    return {**data, "turn": {**t, "tool_name": name, "call_turn": call.get("turn")}}


@upgrades("turn.appended", lambda data: "role" not in data["turn"])
def _turn_before_derived(conn: Connection, event: Event) -> dict[str, Any]:
    """Derive the parts and the session state's change, which turns written before events
    carried them lack, with the parser and fold of that time (frozen_turns). The change is
    folded from the session's state, which is the one the turn was appended to only while
    replaying in order: a turn read later (its row exists) gets its parts, not a change."""
    from clew.store.projection import frozen_turns  # lazily: only old events need it

    data = event.data
    t = data["turn"]
    parts = frozen_turns.parse(t["message"])
    calls = [list(c) for c in parts.tool_calls] or None
    turn = {**t, "role": parts.role, "tool_calls": calls, "tool_call_id": parts.tool_call_id}
    # Derived here, not journaled: the row keeps this text itself (see _text_in).
    turn["text"], turn["text_derived"] = parts.text, True
    found = conn.execute("SELECT 1 FROM turns WHERE id = $1 AND space = $2", (t["id"], event.space))
    row = found.fetchone()
    if row is None:
        old = _state(conn, event.space, data["session_id"])
        new = frozen_turns.advance(old, t["number"], parts)
        turn["state"] = {k: v for k, v in new.items() if k not in old or old[k] != v}
    return {**data, "turn": turn}


# The session states last read or written here, by their JSON text: the overlay of a turn's
# change read the stored state (decoding a few KB) and wrote the result (encoding it) on
# every turn. Keyed by the text itself, so a state another process wrote is never mistaken
# for one seen here. Never handed out (a caller could change it): the overlay builds a new
# dict, and reads decode their own copy (portable_conversations.session_from_row).
_DECODED: dict[str, dict[str, Any]] = {}
_DECODED_MAX = 64


def decoded_state(text: str) -> dict[str, Any]:
    """The session state stored as `text`, decoded once while it stays current."""
    found = _DECODED.get(text)
    if found is None:
        found = json.loads(text)
        _remember(text, found)
    return found


def _remember(text: str, state: dict[str, Any]) -> None:
    if len(_DECODED) >= _DECODED_MAX:
        _DECODED.clear()  # sessions written in turn are few; a plain bound, thread-safe
    _DECODED[text] = state


# Each cached state's JSON by member: a turn changes a key or two of the state (the calls
# awaiting results, most often), so the other members' text is reused, not encoded again.
# Keyed by the state's id, holding the state itself so that the id stays its own.
_ENCODED: dict[int, tuple[dict[str, Any], dict[str, str]]] = {}
# json.dumps(value, ensure_ascii=False)'s text, made once. Without the check for circular
# references: what it encodes was decoded from JSON or checked as JSON data (a tree), and
# the check costs a dict entry for every list and dict (a third of encoding a state).
_ENCODE = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def _encoded(old: dict[str, Any], change: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """`old` overlaid with `change`, and its JSON text: exactly json.dumps(state,
    ensure_ascii=False), built from the text of each member ("key": value)."""
    state = {**old, **change}
    known = _ENCODED.get(id(old))
    reuse = known[1] if known is not None and known[0] is old else {}
    parts = {
        k: reuse[k] if k in reuse and k not in change else f"{_ENCODE(k)}: {_ENCODE(v)}"
        for k, v in state.items()
    }
    if len(_ENCODED) >= _DECODED_MAX:
        _ENCODED.clear()
    _ENCODED[id(state)] = (state, parts)
    return state, "{" + ", ".join(parts.values()) + "}"


# Session rows put off to the end of a bulk block (SQLite's bulk_turns, verify's replay), by
# connection: every turn updated its session's row (count, tokens, last active) and wrote its
# state's JSON (a few KB), though only the row after the last of a run of turns is ever read.
# The turn's row is written turn by turn; the session's row by `settle`, which the store runs
# before any read of its own and at the block's end, so no reader sees a session behind its
# turns. Nothing else writes those columns between a session's turns (session.updated
# changes others), so one write of the sums and the last values is the same row.
class _Pending:
    """What a session's turns in a bulk block changed in its row, not written yet."""

    __slots__ = ("said", "space", "state", "tokens", "turns")

    def __init__(self, space: str) -> None:
        self.space = space  # the session's (a block's turns are all of one space)
        self.state: dict[str, Any] | None = None  # None: the turns left it as stored
        self.turns = 0
        self.tokens = 0
        self.said = ""


PUT_OFF: dict[int, dict[str, _Pending]] = {}


def put_off(conn: Connection) -> None:
    """Put off writing session rows on `conn` until `settle` (a bulk block's start)."""
    PUT_OFF.setdefault(id(conn), {})


def drop(conn: Connection) -> None:
    """Forget what was put off on `conn` (its transaction was rolled back)."""
    PUT_OFF.pop(id(conn), None)


def settle(conn: Connection, *, end: bool = False) -> None:
    """Write the session rows put off on `conn`, exactly as the turns one by one would
    have (the state as json.dumps(state, ensure_ascii=False)); `end` stops putting off."""
    pending = PUT_OFF.pop(id(conn), None) if end else PUT_OFF.get(id(conn))
    if not pending:
        return
    for session_id, p in pending.items():
        if p.state is None:
            conn.execute(
                "UPDATE sessions SET turn_count = turn_count + $1, total_tokens = total_tokens"
                " + $2, last_active_at = $3 WHERE id = $4 AND space = $5",
                (p.turns, p.tokens, p.said, session_id, p.space),
            )
            continue
        text = _ENCODE(p.state)
        conn.execute(
            "UPDATE sessions SET turn_count = turn_count + $1, total_tokens = total_tokens + $2,"
            " last_active_at = $3, state = $4 WHERE id = $5 AND space = $6",
            (p.turns, p.tokens, p.said, text, session_id, p.space),
        )
        _remember(text, p.state)
    pending.clear()


# The state of the session a write is appending to, by connection, while the store knows
# its row is current (SQLite keeps the row it last appended to: store/sqlite/store.py): the
# overlay of a turn's change then reads no row. Set by the store for one transaction,
# advanced here by each turn, dropped by the store at the transaction's end.
KNOWN: dict[int, tuple[str, dict[str, Any]]] = {}


def _state(conn: Connection, space: str, session_id: str) -> dict[str, Any]:
    pending = PUT_OFF.get(id(conn)) if PUT_OFF else None
    if pending:
        p = pending.get(session_id)
        if p is not None and p.state is not None:
            return p.state
    known = KNOWN.get(id(conn)) if KNOWN else None
    if known is not None and known[0] == session_id:
        return known[1]
    found = conn.execute(
        "SELECT state FROM sessions WHERE id = $1 AND space = $2", (session_id, space)
    )
    row = found.fetchone()
    return decoded_state(row[0]) if row is not None else {}


# Where the journal holds a turn's text, so that a store may keep it there only (SQLite's
# turn_rows, migration 15): 1 the event's message.content, 2 its message.output, 3 the
# event's turn.text; None when the row must keep it (a text derived when read from an event
# older than derived fields; a text with a NUL, which SQLite's JSON functions cut short).
_TEXT_KEYS = {"content": 1, "output": 2}


def _text_in(t: dict[str, Any], text: str | None) -> int | None:
    if text is None or "text_derived" in t or "\x00" in text:
        return None
    if "text_from" in t:
        return _TEXT_KEYS.get(t["text_from"])
    return 3


_INSERT_TURN = (
    "INSERT INTO turns (id, space, session_id, turn, role, content, text_content, tool_calls,"
    " tool_call_id, tool_name, call_turn, message, token_count, created_at, event_seq,"
    " text_in) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"
)


# In a bulk block (its full-text entries made at its end), the row is inserted into
# turn_rows itself, as the view's INSTEAD OF trigger would (the text kept only where the
# event does not hold it): through the trigger the insert cost 20-35% more CPU
# (docs/benchmarks-log.md, session import, fifth round).
_INSERT_ROW = _INSERT_TURN.replace("INTO turns ", "INTO turn_rows ")


class TurnColumns(NamedTuple):
    """What a turn's row holds that its event says: its text, whether that is the message's
    text content, the message without it (its envelope), its tool calls as JSON, and where
    in the event its text is (`_text_in`)."""

    text: str | None
    text_content: bool
    message: str
    tool_calls: str | None
    text_in: int | None


def turn_columns(t: dict[str, Any]) -> TurnColumns:
    """The columns of a turn's row, from its event's `turn`."""
    message = t["message"]
    text = message[t["text_from"]] if "text_from" in t else t["text"]
    # A text content is stored once, in its own column (turns.restore puts it back).
    text_content = isinstance(message.get("content"), str)
    stored = _ENCODE({**message, "content": None} if text_content else message)
    calls = t["tool_calls"]
    return TurnColumns(
        text, text_content, stored, None if calls is None else _ENCODE(calls), _text_in(t, text)
    )


def encode_state(state: dict[str, Any]) -> str:
    """A session state's JSON as the projection writes it (json.dumps, ensure_ascii=False)."""
    return _ENCODE(state)


@handles("turn.appended")
def _turn_appended(conn: Connection, event: Event) -> None:
    """Insert the turn as its event says, and overlay the session state's change on the
    session's state (a plain read and write: the fold ran when the turn was appended)."""
    t = event.data["turn"]
    session_id = event.data["session_id"]
    text, text_content, stored, calls, text_in = turn_columns(t)
    said = t.get("said_at", event.created_at)
    change = t["state"]
    pending = PUT_OFF.get(id(conn)) if PUT_OFF else None
    if pending is not None:  # a bulk block: the session's row is written once, by `settle`
        # Worked out before the insert, so that an event failing here leaves nothing done.
        p = pending.get(session_id) or _Pending(event.space)
        tokens = p.tokens + t["token_count"]
        state = {**_state(conn, event.space, session_id), **change} if change else p.state
    # The columns are this handler's, not the event's: one fixed statement (no `insert`).
    # text_in: where the event holds the row's text (None: it does not).
    conn.execute(
        _INSERT_TURN if pending is None else _INSERT_ROW,
        (
            t["id"],
            event.space,
            session_id,
            t["number"],
            t["role"],
            text if pending is None or text_in is None else None,
            int(text_content),
            calls,
            t["tool_call_id"],
            t["tool_name"],
            t["call_turn"],
            stored,
            t["token_count"],
            said,
            # The event the row's text can be read from (see _text_in).
            event.seq,
            text_in,
        ),
    )
    if pending is not None:
        p.state, p.turns, p.tokens, p.said = state, p.turns + 1, tokens, said
        pending[session_id] = p
        return
    if not change:
        conn.execute(
            "UPDATE sessions SET turn_count = turn_count + 1, total_tokens = total_tokens + $1,"
            " last_active_at = $2 WHERE id = $3 AND space = $4",
            (t["token_count"], said, session_id, event.space),
        )
        return
    state_now, state_text = _encoded(_state(conn, event.space, session_id), change)
    conn.execute(
        "UPDATE sessions SET turn_count = turn_count + 1, total_tokens = total_tokens + $1,"
        " last_active_at = $2, state = $3 WHERE id = $4 AND space = $5",
        (t["token_count"], said, state_text, session_id, event.space),
    )
    _remember(state_text, state_now)
    if KNOWN and id(conn) in KNOWN:
        KNOWN[id(conn)] = (session_id, state_now)


@handles("turns.hidden")
def _turns_hidden(conn: Connection, event: Event) -> None:
    """Hidden from the session's view (Agents SDK pop / clear), kept in the archive:
    one turn (`turn`) or every turn up to one (`through`)."""
    session_id = event.data["session_id"]
    if "through" in event.data:
        conn.execute(
            "UPDATE turns SET hidden = 1 WHERE session_id = $1 AND space = $2 AND turn <= $3",
            (session_id, event.space, event.data["through"]),
        )
    else:
        conn.execute(
            "UPDATE turns SET hidden = 1 WHERE session_id = $1 AND space = $2 AND turn = $3",
            (session_id, event.space, event.data["turn"]),
        )
