"""What SQLite's store does on the journal's write path beyond the shared SQL
(portable_journal.JournalBackend), a part SQLiteStore holds (its `_backend`): the journal's
insert by lastrowid, the space's head and the session being appended to kept between one
connection's writes (so a write reads neither again while no one else has written), and
forgetting's bytes in the file: FTS5 entries taken out and put back, zeroed pages, merged
indexes."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from clew.core.ids import ID_LENGTH, is_id_prefix
from clew.models import Event, Session
from clew.store.projection import conversations as projection_conversations
from clew.store.sql import Connection

if TYPE_CHECKING:
    from clew.store.sqlite.store import SQLiteStore

# The journal's insert, SQLite's own (JournalWrites.INSERT_EVENT's columns): the hot write
# binds its row by position, as sqlite3 takes `?` fastest.
_INSERT_EVENT = (
    "INSERT INTO events (id, space, task_id, correlation_id, type, data, created_at, hash,"
    " forgotten) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)

_WIPE_PIECE = 256 * 1024 * 1024  # bytes of free pages overwritten per blob (forgetting)


def _names(session: Session, ident: str) -> bool:
    """Whether `ident` names `session` as session_to_append's read would find it: by its
    id, or by its key when no id could be the same text (the read prefers an id)."""
    if ident == session.id:
        return True
    return ident == session.key and not (len(ident) == ID_LENGTH and is_id_prefix(ident))


class SQLiteWrites:
    """SQLite's part of the journal's write path, and `session_to_append` (which reads the
    session the write path keeps, else the conversations' read)."""

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def inserted_event(self, conn: Connection, row: tuple[Any, ...]) -> int:
        """`JournalBackend.inserted_event` by the driver's lastrowid: seq is the events'
        INTEGER PRIMARY KEY, so the rowid. SQLite runs an INSERT ... RETURNING through
        temporary storage (a temporary file with the default temp_store), which cost more
        CPU than the insert itself: 29 against 11 µs an event (docs/benchmarks-log.md, session
        import, fifth round)."""
        cursor: sqlite3.Cursor = self._store._conn.execute(_INSERT_EVENT, row)  # `conn` wraps it
        return int(cursor.lastrowid or 0)

    def _data_version(self) -> int:
        """SQLite's data_version, read once per write transaction: read under the write lock
        (no one can commit until ours does), it changes only on another connection's commit,
        never on this one's. A pragma that reads no page."""
        state = self._store._state
        if state.version is None:
            row = self._store._guard(
                lambda: self._store._conn.execute("PRAGMA data_version").fetchone()
            )
            state.version = int(row[0])
        return state.version

    def known_head(self, conn: Connection) -> str | None:
        """The head this connection's last write committed, unless another connection has
        committed since (`_data_version`): instead of a read of the journal's index; every
        event this connection writes goes through `_journal`, which keeps the head."""
        version = self._data_version()
        cached = self._store._head
        return cached[1] if cached is not None and cached[0] == version else None

    def session_to_append(self, ident: str) -> Session | None:
        """`Conversations.session_to_append`, its row kept from this connection's last
        append while no one has written since: the same data_version (no other connection
        has committed) and the same total_changes (this one has changed no row since). The
        row kept is the one read, advanced by each turn appended (`projected`)."""
        if not self._store._writing:
            return self._store._conversations.session_to_append(ident)
        kept = self._store._session
        current = self._store._state.session  # appended to earlier in this transaction
        if current is not None and _names(current, ident):
            found: Session | None = current
        elif (
            kept is not None
            and _names(kept[2], ident)
            and kept[1] == self._store._conn.total_changes
            and kept[0] == self._data_version()
        ):
            found = kept[2]
        else:
            found = self._store._conversations.session_to_append(ident)
        self._store._state.session = found
        if found is not None:  # the projection's overlay of each turn reads no row either
            projection_conversations.KNOWN[id(self._store._sql)] = (found.id, found.state)
        return found

    def projected(self, event: Event) -> None:
        """After each event this connection journals: keep the row of the session being
        appended to as the projection has just written it (projection_conversations'
        _turn_appended: one more turn, its tokens, when it was said, the state's change);
        anything else (or a bulk block, which writes the row later) forgets it."""
        state = self._store._state
        session = state.session
        if session is None:
            return
        data = event.data
        known = projection_conversations.KNOWN.get(id(self._store._sql))
        if (
            event.type != "turn.appended"
            or data["session_id"] != session.id
            or state.bulk
            or "state" not in data["turn"]  # an older shape (adopted): read the row again
            or known is None
        ):
            state.session = None
            projection_conversations.KNOWN.pop(id(self._store._sql), None)
            return
        t = data["turn"]
        state.session = session._replace(
            turn_count=session.turn_count + 1,
            total_tokens=session.total_tokens + t["token_count"],
            last_active_at=t.get("said_at", event.created_at),
            state=known[1],  # the state the projection has just written
        )

    # -- forgetting: the file's bytes (docs/architecture.md, "Forgetting") -------------------

    def forget_begins(self, conn: Connection, type: str) -> None:
        """`JournalBackend.forget_begins`: from the first forget of the transaction on,
        SQLite zeroes what it frees (secure_delete); note the index the event's rows are in."""
        from clew.store import forgetting

        state = self._store._state
        if state.forgetting is None:
            state.secure_delete = int(
                self._store._conn.execute("PRAGMA secure_delete").fetchone()[0]
            )
            self._store._conn.execute("PRAGMA secure_delete = ON")
            state.forgetting = set()
        index = forgetting.INDEXES.get(type)
        if index is not None:
            state.forgetting.add(index)

    def turn_forgetting(self, conn: Connection, old: dict[str, Any]) -> Any:
        """The turn's row number, its text taken out of the turns' index first: the text
        is read from the event, which is about to change (an external-content FTS5 index
        deletes a row by the values it indexed). A turn of the bulk block in progress is
        not indexed yet: the block's end indexes it, forgotten."""
        turn_id = old["turn"]["id"]
        row = self._store._conn.execute("SELECT seq, content FROM turns WHERE id = ?", (turn_id,))
        found = row.fetchone()
        if found is None:
            raise ValueError(f"it forgets turn {turn_id}, which has no row")
        seq, content = found
        indexed = not (self._store._state.bulk and seq > self._store._state.bulk_start)
        if indexed and content is not None:
            self._store._conn.execute(
                "INSERT INTO turns_fts (turns_fts, rowid, content) VALUES ('delete', ?, ?)",
                (seq, content),
            )
        return seq, indexed

    def turn_forgotten(self, conn: Connection, turn: Any, turn_id: str, values: Any) -> None:
        """The row as the view's trigger writes it (its text kept only where the event does
        not hold it), and its text indexed again."""
        seq, indexed = turn
        self._store._conn.execute(
            "UPDATE turn_rows SET content = ?, text_in = ?, message = ?, tool_calls = ?"
            " WHERE seq = ?",
            (
                values.text if values.text_in is None else None,
                values.text_in,
                values.message,
                values.tool_calls,
                seq,
            ),
        )
        if indexed and values.text is not None:
            self._store._conn.execute(
                "INSERT INTO turns_fts (rowid, content) VALUES (?, ?)", (seq, values.text)
            )

    def forgetting_ends(self) -> None:
        """Before a forget's commit: merge each full-text index it touched, so no older
        segment keeps the forgotten words, and overwrite the pages that were already free
        (freed by ordinary writes, which do not zero them) with zeros."""
        conn = self._store._conn
        for index in sorted(self._store._state.forgetting or ()):
            conn.execute(f"INSERT INTO {index} ({index}) VALUES ('optimize')")
        free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
        if not free:
            return
        size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        # A blob takes its pages from the free list first; dropped with secure_delete on,
        # they are zeroed again. In pieces: SQLite's blobs stop at a billion bytes.
        conn.execute("CREATE TABLE clew_wipe (fill BLOB)")
        left = free * size
        while left > 0:
            piece = min(left, _WIPE_PIECE)
            conn.execute("INSERT INTO clew_wipe (fill) VALUES (zeroblob(?))", (piece,))
            left -= piece
        conn.execute("DROP TABLE clew_wipe")
