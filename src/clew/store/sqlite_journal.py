"""The journal's one write path (append and adopt) and its reads: events in commit order, how
many, which ids a space holds. Portable SQL (store/sql.py), mixed into both stores."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from clew.ids import new_id
from clew.models import Event, Redaction
from clew.store import chain, codec, projection
from clew.store.rows import RowReader, limited
from clew.store.sql import Connection, Row

EVENT_COLUMNS = "seq, id, space, task_id, correlation_id, type, data, created_at, hash"
INSERT_EVENT = (
    "INSERT INTO events (id, space, task_id, correlation_id, type, data, created_at, hash)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


class WriteState(Protocol):
    """What a store keeps for its write transaction in progress."""

    head: str | None  # the space's newest event hash, once read (None: not yet)
    touched: set[tuple[str, str]]  # the projection's per-transaction bookkeeping


class JournalWrites:
    """`append` and `adopt` on one write path: the event chained to its space's head,
    inserted and projected in the store's write transaction. A store provides `_writer`:
    its connection and state in the current write transaction (RuntimeError outside one)."""

    space: str
    _guard: Callable[..., Any]

    def _writer(self) -> tuple[Connection, WriteState]:
        raise NotImplementedError

    def _known_head(self, conn: Connection) -> str | None:
        """The space's newest event hash if the store knows it without reading the journal
        (None: read it). PostgreSQL always reads it: other writers may have added events."""
        return None

    def _inserted_event(self, conn: Connection, row: tuple[Any, ...]) -> int:
        """Insert an event's row (the columns of INSERT_EVENT); return its seq."""
        # RETURNING, not the driver's lastrowid: the journal's seq is a column of its own.
        return int(conn.execute(INSERT_EVENT + " RETURNING seq", row).fetchone()[0])

    def append(
        self,
        *,
        type: str,
        task_id: str | None,
        correlation_id: str,
        data: dict[str, Any],
        created_at: str,
    ) -> Event:
        """`Journal.append`: a new event, with a new id."""
        return self._journal(new_id(), type, task_id, correlation_id, data, created_at)

    def adopt(self, event: Event) -> Event:
        """`Journal.adopt`: an event recorded elsewhere, its fields kept."""
        return self._journal(
            event.id, event.type, event.task_id, event.correlation_id, event.data, event.created_at
        )

    def _journal(
        self,
        event_id: str,
        type: str,
        task_id: str | None,
        correlation_id: str,
        data: dict[str, Any],
        created_at: str,
    ) -> Event:
        conn, state = self._writer()
        text = codec.dumps(data)
        if state.head is None:
            state.head = self._known_head(conn)
        if state.head is None:
            # One indexed read per transaction: the write lock (BEGIN IMMEDIATE on SQLite,
            # the space's advisory lock on PostgreSQL) keeps it the head until commit.
            row = self._guard(
                lambda: conn.execute(
                    "SELECT hash FROM events WHERE space = ? ORDER BY seq DESC LIMIT 1",
                    (self.space,),
                ).fetchone()
            )
            state.head = row[0] if row is not None else ""
        digest = chain.event_hash(
            state.head,
            id=event_id,
            space=self.space,
            task_id=task_id,
            correlation_id=correlation_id,
            type=type,
            data=text,
            created_at=created_at,
        )
        row = (event_id, self.space, task_id, correlation_id, type, text, created_at, digest)
        seq = self._guard(lambda: self._inserted_event(conn, row))
        state.head = digest
        event = Event(
            seq=seq,
            id=event_id,
            space=self.space,
            task_id=task_id,
            correlation_id=correlation_id,
            type=type,
            data=data,
            created_at=created_at,
            hash=digest,
        )
        self._guard(lambda: projection.apply(conn, event, state.touched))  # type: ignore[arg-type]
        self._projected(event)
        return event

    def _projected(self, event: Event) -> None:
        """What a store keeps of each event it has just journaled and projected (nothing)."""


def _event(row: Row) -> Event:
    """Build an Event from its row; data that is not valid JSON is kept as text (`unreadable`)
    so that reading a damaged journal shows the damage instead of failing."""
    try:
        data, unreadable = codec.loads(row["data"]), None
    except (ValueError, TypeError, RecursionError):
        data, unreadable = {}, str(row["data"])
    if not isinstance(data, dict):
        data, unreadable = {}, str(row["data"])
    return Event(
        seq=row["seq"],
        id=row["id"],
        space=row["space"],
        task_id=row["task_id"],
        correlation_id=row["correlation_id"],
        type=row["type"],
        data=data,
        created_at=row["created_at"],
        hash=row["hash"],
        unreadable=unreadable,
    )


class JournalReads(RowReader):
    """The journal's reads (mixed into SQLiteStore and PostgresStore)."""

    # What the store's driver raises: an upgrade that fails on one is shown as stored.
    _driver_errors: tuple[type[Exception], ...] = ()

    def _connection(self) -> Connection:
        """The connection reads run on now (an upgrade of an old event may read rows)."""
        raise NotImplementedError

    def _reading(self) -> AbstractContextManager[Any]:
        """Keep one connection for a read of several statements."""
        raise NotImplementedError

    def list_events(
        self,
        *,
        task_id: str | None = None,
        after: int = 0,
        limit: int | None = None,
        types: tuple[str, ...] = (),
        as_stored: bool = False,
        newest: bool = False,
    ) -> list[Event]:
        """Return journal events in commit order, optionally for one task (with `newest`, the
        newest `limit` of them, read backwards along the index); `as_stored` keeps
        each event's data as it was written (not brought to the current shape), so that the
        data hashes as the chain says (what moving a journal needs)."""
        # One task's: read through events(task_id, seq), not the space's or the type's, which
        # hold every task's (rows.py says why).
        off = "" if task_id is None else self._no_index
        sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE {off}space = ? AND seq > ?"
        params: list[Any] = [self.space, after]
        if task_id is not None:
            sql += " AND task_id = ?"
            params.append(task_id)
        if types:
            sql += f" AND {off}type IN ({', '.join('?' for _ in types)})"
            params += list(types)
        order = " ORDER BY seq DESC" if newest and limit is not None else " ORDER BY seq"
        sql, params = limited(sql + order, params, limit)
        with self._reading():  # an upgrade may read rows: on the same connection
            rows = self._rows(sql, params)
            if order.endswith("DESC"):
                rows = rows[::-1]
            if as_stored:
                return [_event(r) for r in rows]
            return [self._current(_event(r)) for r in rows]

    def _current(self, event: Event) -> Event:
        """Return an event read for display in the current shape, as far as it can be: the
        data of a damaged event is shown as stored rather than failing the whole read."""
        damaged: tuple[type[Exception], ...] = (KeyError, TypeError, ValueError, AttributeError)
        try:
            return projection.current(self._connection(), event)  # type: ignore[arg-type]
        except damaged + self._driver_errors:
            return event

    def stored_links(self, *, after: int = 0, limit: int = 1000) -> list[chain.Link]:
        """`Journal.stored_links`: events after seq `after` as stored, `limit` of them."""
        sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE space = ? AND seq > ? ORDER BY seq"
        sql, params = limited(sql, [self.space, after], limit)
        return [chain.Link(*row) for row in self._rows(sql, params)]

    def list_redactions(
        self,
        *,
        task_id: str | None = None,
        session_id: str | None = None,
        kind: str | None = None,
        limit: int | None = None,
    ) -> list[Redaction]:
        """`Journal.list_redactions`: the redactions projection, newest first."""
        sql = (
            "SELECT event_id, seq, event_type, task_id, session_id, field, kind, count,"
            " created_at FROM redactions WHERE space = ?"
        )
        params: list[Any] = [self.space]
        for column, value in (("task_id", task_id), ("session_id", session_id), ("kind", kind)):
            if value is not None:
                sql += f" AND {column} = ?"
                params.append(value)
        sql, params = limited(sql + " ORDER BY seq DESC, id", params, limit)
        return [Redaction(*row) for row in self._rows(sql, params)]

    def count_events(self) -> int:
        """Return the number of journal events in this space."""
        return int(self._rows("SELECT count(*) FROM events WHERE space = ?", (self.space,))[0][0])

    def event_ids(self, ids: Sequence[str]) -> set[str]:
        """Return which of these event ids this space's journal holds."""
        wanted = list(dict.fromkeys(ids))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):  # under SQLite's limit of bound values
            chunk = wanted[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            rows = self._rows(
                f"SELECT id FROM events WHERE id IN ({marks}) AND space = ?", (*chunk, self.space)
            )
            found.update(r[0] for r in rows)
        return found
