"""Reads of the conversation archive on both backends: sessions, turns by number, tool calls
(search is each backend's own: sqlite/search.py, postgres/search.py)."""

from __future__ import annotations

import json
from typing import Any

from clew.core import turns
from clew.errors import NotFoundError
from clew.models import Session, Turn
from clew.store.projection.conversations import decoded_state
from clew.store.rows import RowReader, limited
from clew.store.sql import Row, numbered, param

TURN_COLUMNS = (
    "id, space, session_id, turn, role, content, text_content, tool_calls, tool_call_id,"
    " tool_name, call_turn, message, token_count, hidden, created_at"
)


def session_from_row(row: Row) -> Session:
    return Session(
        id=row["id"],
        space=row["space"],
        key=row["key"],
        workspace=row["workspace"],
        model=row["model"],
        system_prompt=row["system_prompt"],
        task_id=row["task_id"],
        title=row["title"],
        started_at=row["started_at"],
        last_active_at=row["last_active_at"],
        total_tokens=row["total_tokens"],
        turn_count=row["turn_count"],
        # Decoded here every time: a caller may change what it is given (the projection's
        # decoded states are shared, never handed out).
        state=json.loads(row["state"]),
        active=bool(row["active"]),
    )


def turn_from_row(row: Row | tuple[Any, ...]) -> Turn:
    (
        id,
        space,
        session_id,
        number,
        role,
        content,
        text_content,
        tool_calls,
        call_id,
        tool_name,
        call_turn,
        message,
        token_count,
        hidden,
        created_at,
    ) = tuple(row)[:15]
    calls = tuple(tuple(c) for c in json.loads(tool_calls)) if tool_calls else ()
    return Turn(
        id,
        space,
        session_id,
        number,
        role,
        content,
        turns.restore(message, content, bool(text_content)),
        calls,
        call_id,
        tool_name,
        call_turn,
        token_count,
        bool(hidden),
        created_at,
    )


class ConversationReads(RowReader):
    """The conversation archive's reads (a part both stores hold)."""

    def get_session(self, session_id: str) -> Session:
        rows = self._rows(
            "SELECT * FROM sessions WHERE id = $1 AND space = $2", (session_id, self.space)
        )
        if not rows:
            raise NotFoundError("session", session_id)
        return session_from_row(rows[0])

    def find_session(self, ident: str) -> Session | None:
        """The session whose id or key is exactly `ident`."""
        rows = self._rows(
            "SELECT * FROM sessions WHERE id = $1 AND space = $2 UNION ALL"
            " SELECT * FROM sessions WHERE key = $3 AND space = $4 LIMIT 1",
            (ident, self.space, ident, self.space),
        )
        return session_from_row(rows[0]) if rows else None

    def session_to_append(self, ident: str) -> Session | None:
        """`find_session` with its state decoded once while it stays current: the state is
        the projection's cached copy (a few KB of JSON not decoded on every turn), which the
        append path reads and never changes."""
        rows = self._rows(
            "SELECT * FROM sessions WHERE id = $1 AND space = $2 UNION ALL"
            " SELECT * FROM sessions WHERE key = $3 AND space = $4 LIMIT 1",
            (ident, self.space, ident, self.space),
        )
        if not rows:
            return None
        row = rows[0]
        return Session(
            row["id"],
            row["space"],
            row["key"],
            row["workspace"],
            row["model"],
            row["system_prompt"],
            row["task_id"],
            row["title"],
            row["started_at"],
            row["last_active_at"],
            row["total_tokens"],
            row["turn_count"],
            decoded_state(row["state"]),
            bool(row["active"]),
        )

    def session_by_key(self, key: str) -> Session | None:
        rows = self._rows("SELECT * FROM sessions WHERE space = $1 AND key = $2", (self.space, key))
        return session_from_row(rows[0]) if rows else None

    def list_sessions(
        self, *, active_only: bool = False, limit: int | None = None, offset: int = 0
    ) -> list[Session]:
        """Sessions, the most recently active first."""
        sql = "SELECT * FROM sessions WHERE space = $1"
        if active_only:
            sql += " AND active = 1"
        sql, params = limited(sql + " ORDER BY last_active_at DESC, seq DESC", [self.space], limit)
        if offset:  # after a LIMIT only: SQLite has no OFFSET without one
            sql += f" OFFSET {param(params, offset)}"
        rows = self._rows(sql, params)
        return [session_from_row(r) for r in rows]

    def get_turns(
        self,
        session_id: str,
        *,
        first: int | None = None,
        last: int | None = None,
        include_hidden: bool = True,
        newest: int | None = None,
    ) -> list[Turn]:
        """Turns in order: numbers `first`..`last` (inclusive), or the `newest` N."""
        sql = f"SELECT {TURN_COLUMNS} FROM turns WHERE session_id = $1 AND space = $2"
        params: list[Any] = [session_id, self.space]
        if first is not None:
            sql += f" AND turn >= {param(params, first)}"
        if last is not None:
            sql += f" AND turn <= {param(params, last)}"
        if not include_hidden:
            sql += " AND hidden = 0"
        if newest is not None:
            rows = self._rows(f"{sql} ORDER BY turn DESC LIMIT {param(params, newest)}", params)
            return [turn_from_row(r) for r in reversed(rows)]
        return [turn_from_row(r) for r in self._rows(sql + " ORDER BY turn", params)]

    def turns_numbered(self, session_id: str, numbers: list[int]) -> list[Turn]:
        if not numbers:
            return []
        rows = self._rows(
            f"SELECT {TURN_COLUMNS} FROM turns WHERE session_id = $1 AND space = $2"
            f" AND turn IN ({numbered(len(numbers), 3)}) ORDER BY turn",
            [session_id, self.space, *numbers],
        )
        return [turn_from_row(r) for r in rows]

    def count_turns(self, session_id: str, *, before: int | None = None) -> int:
        """Visible turns (not hidden), all or those numbered below `before`. Turns are
        numbered 1, 2, 3... with no gaps (none is ever deleted), so that is a subtraction
        and a count over the hidden ones' index, never a scan of the session."""
        below = before if before is not None else 2**62
        # CASE, not SQLite's two-argument min(): portable SQL.
        rows = self._rows(
            "SELECT CASE WHEN s.turn_count < $1 THEN s.turn_count ELSE $2 END - (SELECT count(*)"
            " FROM turns WHERE session_id = $3 AND space = $4 AND turn < $5 AND hidden = 1)"
            " FROM sessions s WHERE s.id = $6 AND s.space = $7",
            (below - 1, below - 1, session_id, self.space, below, session_id, self.space),
        )
        return int(rows[0][0]) if rows else 0

    def last_user_turn(self, session_id: str, *, at_most: int) -> int | None:
        """The newest visible user turn numbered `at_most` or below."""
        rows = self._rows(
            "SELECT turn FROM turns WHERE session_id = $1 AND space = $2 AND turn <= $3"
            " AND role = 'user' AND hidden = 0 ORDER BY turn DESC LIMIT 1",
            (session_id, self.space, at_most),
        )
        return int(rows[0][0]) if rows else None

    def turns_by_id(self, ids: list[str]) -> list[Turn]:
        if not ids:
            return []
        # `+space` on SQLite: look each id up (its unique index), never walk the space's
        # turns by time (turns_time: 1.4 s at a million turns).
        rows = self._rows(
            f"SELECT {TURN_COLUMNS} FROM turns WHERE {self._no_index}space = $1 AND id IN"
            f" ({numbered(len(ids), 2)}) ORDER BY session_id, turn",
            [self.space, *ids],
        )
        return [turn_from_row(r) for r in rows]

    def tool_turns(self, session_id: str, tool_name: str, *, limit: int) -> list[Turn]:
        """The results of a tool's calls, newest first."""
        rows = self._rows(
            f"SELECT {TURN_COLUMNS} FROM turns WHERE session_id = $1 AND space = $2"
            " AND tool_name = $3 ORDER BY turn DESC LIMIT $4",
            (session_id, self.space, tool_name, limit),
        )
        return [turn_from_row(r) for r in rows]

    def turn_stats(self, session_id: str) -> dict[str, dict[str, int]]:
        """Turns per role and tool results per tool name."""
        roles = self._rows(
            "SELECT role, count(*) FROM turns WHERE session_id = $1 AND space = $2 GROUP BY role",
            (session_id, self.space),
        )
        tools = self._rows(
            "SELECT tool_name, count(*) FROM turns WHERE session_id = $1 AND space = $2"
            " AND tool_name IS NOT NULL GROUP BY tool_name ORDER BY count(*) DESC, tool_name",
            (session_id, self.space),
        )
        return {"roles": {r[0]: r[1] for r in roles}, "tools": {r[0]: r[1] for r in tools}}
