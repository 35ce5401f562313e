"""The journal's one write path (append and adopt) and its reads: events in commit order, how
many, which ids a space holds. Portable SQL (store/sql.py): parts both stores hold
(`JournalWrites`, `JournalReads`), the write path handed what its backend does beyond the
shared SQL (`JournalBackend`: `PortableBackend` here for PostgreSQL, sqlite/writes.py's for
SQLite)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from clew.core import chain, codec
from clew.core.ids import new_id
from clew.models import Event, Redaction, Tombstone
from clew.store import projection
from clew.store.portable.trace import output
from clew.store.portable.vectors import dropped
from clew.store.projection import conversations as projection_conversations
from clew.store.rows import RowReader, StoreHost, limited
from clew.store.sql import Connection, Row, numbered, param, param_list

EVENT_COLUMNS = "seq, id, space, task_id, correlation_id, type, data, created_at, hash, forgotten"
FORGOTTEN = "journal.forgotten"  # the event that forgets (store/forgetting.py applies it)
INSERT_EVENT = (
    "INSERT INTO events (id, space, task_id, correlation_id, type, data, created_at, hash,"
    " forgotten) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
)

# Every space with an event, each found by one seek of the (space, seq) index (a loose
# index scan): a store of a few spaces and millions of events costs a few reads, not a scan.
SPACES = (
    "WITH RECURSIVE s(space) AS (SELECT min(space) FROM events UNION ALL"
    " SELECT (SELECT min(space) FROM events WHERE space > s.space) FROM s"
    " WHERE s.space IS NOT NULL) SELECT space FROM s WHERE space IS NOT NULL"
)


class WriteState(Protocol):
    """What a store keeps for its write transaction in progress."""

    head: str | None  # the space's newest event hash, once read (None: not yet)
    touched: set[tuple[str, str]]  # the projection's per-transaction bookkeeping


class JournalHost(StoreHost, Protocol):
    """What the journal's parts need of the store beyond its reads: its guard (a driver's
    error as the ClewError it is), the connection of the transaction in progress, and what
    its driver raises (an upgrade of an event that fails on one shows the event as stored)."""

    @property
    def _driver_errors(self) -> tuple[type[Exception], ...]: ...

    def _guard(self, fn: Any) -> Any: ...

    def _connection(self) -> Connection: ...


class JournalBackend(Protocol):
    """What a backend does on the journal's write path beyond the shared SQL (SQLite: the
    head and session kept between writes, the insert by lastrowid, the file's bytes and FTS5
    indexes on a forget; PostgreSQL: nothing more, `PortableBackend`)."""

    def known_head(self, conn: Connection) -> str | None:
        """The space's newest event hash if the store knows it without reading the journal
        (None: read it)."""
        ...

    def inserted_event(self, conn: Connection, row: tuple[Any, ...]) -> int:
        """Insert an event's row (the columns of INSERT_EVENT); return its seq."""
        ...

    def forget_begins(self, conn: Connection, type: str) -> None:
        """Before an event of `type` is rewritten in this write transaction."""
        ...

    def turn_forgetting(self, conn: Connection, old: dict[str, Any]) -> Any:
        """Before a turn's event is rewritten: what the store needs of its row."""
        ...

    def turn_forgotten(self, conn: Connection, turn: Any, turn_id: str, values: Any) -> None:
        """Write a rewritten turn's row (`values`: projection_conversations.TurnColumns)."""
        ...

    def projected(self, event: Event) -> None:
        """What the store keeps of each event it has just journaled and projected."""
        ...


class PortableBackend:
    """The journal's write path with nothing beyond the shared SQL: PostgreSQL's."""

    def __init__(self, space: str) -> None:
        self.space = space

    def known_head(self, conn: Connection) -> str | None:
        """Always read: other writers may have added events since this store's last."""
        return None

    def inserted_event(self, conn: Connection, row: tuple[Any, ...]) -> int:
        """RETURNING, not the driver's lastrowid: the journal's seq is a column of its own."""
        return int(conn.execute(INSERT_EVENT + " RETURNING seq", row).fetchone()[0])

    def forget_begins(self, conn: Connection, type: str) -> None:
        """Nothing: the server's files are not clew's to wipe (`Journal.purge` says so)."""

    def turn_forgetting(self, conn: Connection, old: dict[str, Any]) -> Any:
        """The turn's id."""
        return old["turn"]["id"]

    def turn_forgotten(self, conn: Connection, turn: Any, turn_id: str, values: Any) -> None:
        """The turn's row, which keeps its text (its tsvector is a generated column)."""
        conn.execute(
            "UPDATE turns SET content = $1, text_in = $2, message = $3, tool_calls = $4"
            " WHERE space = $5 AND id = $6",
            (values.text, values.text_in, values.message, values.tool_calls, self.space, turn_id),
        )

    def projected(self, event: Event) -> None:
        """Nothing kept."""


class JournalWrites(RowReader):
    """`append` and `adopt` on one write path: the event chained to its space's head,
    inserted and projected in the store's write transaction; a part both stores hold (their
    `_writes`), handed their backend's part of the write path and the space's schedules (a
    forget counts the vector drops it makes there)."""

    def __init__(
        self,
        store: JournalHost,
        backend: JournalBackend,
        mark_schedule: Callable[[str, str], None],
    ) -> None:
        super().__init__(store)
        self._guard = store._guard
        self._backend = backend
        self.mark_schedule = mark_schedule

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

    def adopt(self, event: Event, *, forgets: bool = True) -> Event:
        """`Journal.adopt`: an event recorded elsewhere, its fields kept (its tombstone too,
        when its content was forgotten there)."""
        return self._journal(
            event.id,
            event.type,
            event.task_id,
            event.correlation_id,
            event.data,
            event.created_at,
            event.forgotten,
            forgets,
        )

    def _journal(
        self,
        event_id: str,
        type: str,
        task_id: str | None,
        correlation_id: str,
        data: dict[str, Any],
        created_at: str,
        forgotten: Tombstone | None = None,
        forgets: bool = True,
    ) -> Event:
        conn, state = self._writer()
        text = codec.dumps(data)
        if state.head is None:
            state.head = self._backend.known_head(conn)
        if state.head is None:
            # One indexed read per transaction: the write lock (BEGIN IMMEDIATE on SQLite,
            # the space's advisory lock on PostgreSQL) keeps it the head until commit.
            row = self._guard(
                lambda: conn.execute(
                    "SELECT hash FROM events WHERE space = $1 ORDER BY seq DESC LIMIT 1",
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
            # A forgotten event's hash covers the data it had (its tombstone keeps the digest).
            digest=chain.data_digest(text) if forgotten is None else forgotten.digest,
            created_at=created_at,
        )
        tomb = None if forgotten is None else chain.tombstone_text(forgotten)
        row = (event_id, self.space, task_id, correlation_id, type, text, created_at, digest, tomb)
        seq = self._guard(lambda: self._backend.inserted_event(conn, row))
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
            forgotten=forgotten,
        )
        self._guard(lambda: projection.apply(conn, event, state.touched))
        if type == FORGOTTEN:
            self._guard(lambda: self._forget(conn, event, forgets))
        self._backend.projected(event)
        return event

    # -- forgetting (store/forgetting.py; docs/architecture.md, "Forgetting") ---------------

    def _forget(self, conn: Connection, event: Event, rewrites: bool = True) -> None:
        """Apply a `journal.forgotten` event: rewrite each event it names, with its tombstone,
        and bring the rows, search documents and vectors it made to what a replay of the
        rewritten event makes. An event already forgotten by this very forget (it arrived so,
        in an imported journal) is left as it is; anything else it cannot apply exactly, or
        an event it would rewrite when not `rewrites` (an adopter who may not forget),
        raises ValueError, which fails the whole write."""
        # A bulk block's session rows put off so far: written first, so they are current.
        projection_conversations.settle(conn)
        from clew.store import forgetting  # only a forget needs it: off the hook path

        by = event.data.get("by")
        if not isinstance(by, str) or not by:
            raise ValueError("it does not say who forgot")
        records: set[tuple[str, str]] = set()
        for item in forgetting.items(event.data):
            row = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE space = $1 AND id = $2",
                (self.space, item.id),
            ).fetchone()
            if row is None:
                raise ValueError(f"it forgets event {item.id}, which this space does not hold")
            link = chain.Link(*row)
            now = chain.data_digest(link.data)
            held = chain.tombstone(link.forgotten)
            if held is not None and held.event == event.id and now == item.after:
                continue  # forgotten where it came from, and adopted so
            if now != item.before:
                raise ValueError(
                    f"it forgets event {item.id} from data that event no longer holds (it was"
                    " changed or forgotten since)"
                )
            if not rewrites:
                raise ValueError(
                    f"it forgets the content of event {item.id}, which this space holds:"
                    " forgetting needs the local user or an admin key"
                )
            old = forgetting.base(forgetting.event_of(link))
            new = forgetting.rewrite(old, item.fields)
            text = codec.dumps(new)
            if chain.data_digest(text) != item.after:
                raise ValueError(f"forgetting event {item.id} does not leave the data it says")
            tomb = Tombstone(now if held is None else held.digest, by, event.created_at, event.id)
            self._backend.forget_begins(conn, link.type)
            turn = (
                self._backend.turn_forgetting(conn, old) if link.type == "turn.appended" else None
            )
            conn.execute(
                "UPDATE events SET data = $1, forgotten = $2 WHERE space = $3 AND id = $4",
                (text, chain.tombstone_text(tomb), self.space, item.id),
            )
            self._forget_rows(conn, link.type, old, new)
            if turn is not None:
                self._forget_turn(conn, turn, old, new)
            if item.record is not None:
                records.add(item.record)
        self._forget_vectors(conn, records, event.created_at)

    def _forget_rows(
        self, conn: Connection, event_type: str, old: dict[str, Any], new: dict[str, Any]
    ) -> None:
        """Each content column the rewritten event sets: the row gets the new value where
        it still holds the old one (the last event that sets a column wins)."""
        from clew.store import forgetting

        for col in forgetting.ROWS.get(event_type, ()):
            was, now = forgetting.get(old, col.path), forgetting.get(new, col.path)
            if was is forgetting.MISSING or (type(was) is type(now) and was == now):
                continue
            key = (self.space, forgetting.get(new, col.key))
            where = f"FROM {col.table} WHERE space = $1 AND id = $2"
            if col.kind == "output":
                found = conn.execute(f"SELECT {col.column}, {col.column}_kind {where}", key)
                current = found.fetchone()
                if current is None or output(current[0], current[1]) != was:
                    continue
                conn.execute(
                    f"UPDATE {col.table} SET {col.column} = $1, {col.column}_kind = $2"
                    " WHERE space = $3 AND id = $4",
                    (conn.dialect.output(now), forgetting.output_kind(now), *key),
                )
                continue
            current = conn.execute(f"SELECT {col.column} {where}", key).fetchone()
            if current is None or current[0] != forgetting.stored(was, col.kind):
                continue
            conn.execute(
                f"UPDATE {col.table} SET {col.column} = $1 WHERE space = $2 AND id = $3",
                (forgetting.stored(now, col.kind), *key),
            )

    def _forget_turn(
        self, conn: Connection, turn: Any, old: dict[str, Any], new: dict[str, Any]
    ) -> None:
        """A rewritten turn's row made again from its event, and the session state's keys
        that its state change set brought along, key by key, as the rows above."""
        values = projection_conversations.turn_columns(new["turn"])
        self._backend.turn_forgotten(conn, turn, new["turn"]["id"], values)
        was, now = old["turn"].get("state") or {}, new["turn"].get("state") or {}
        changed = [k for k in now if k in was and was[k] != now[k]]
        if not changed:
            return
        key = (self.space, new["session_id"])
        found = conn.execute("SELECT state FROM sessions WHERE space = $1 AND id = $2", key)
        row = found.fetchone()
        if row is None:
            return
        state = json.loads(row[0])
        hits = [k for k in changed if k in state and state[k] == was[k]]
        if hits:
            state.update({k: now[k] for k in hits})
            conn.execute(
                "UPDATE sessions SET state = $1 WHERE space = $2 AND id = $3",
                (projection_conversations.encode_state(state), *key),
            )

    def _forget_vectors(self, conn: Connection, records: set[tuple[str, str]], at: str) -> None:
        """Delete the vectors of the forgotten records, and move the drop count of each
        model that had one, so every process loads its vectors again without them."""
        models: set[str] = set()
        for kind, ref in sorted(records):
            key = (self.space, kind, ref)
            found = conn.execute(
                "SELECT DISTINCT model FROM embeddings"
                " WHERE space = $1 AND kind = $2 AND ref_id = $3",
                key,
            )
            models.update(r[0] for r in found.fetchall())
            conn.execute(
                "DELETE FROM embeddings WHERE space = $1 AND kind = $2 AND ref_id = $3", key
            )
        for model in sorted(models):
            self.mark_schedule(dropped(model), at)


def _event(row: Row) -> Event:
    """Build an Event from its row; data that is not valid JSON is kept as text (`unreadable`)
    so that reading a damaged journal shows the damage instead of failing."""
    try:
        data, unreadable = codec.loads(row["data"]), None
    except (ValueError, TypeError, RecursionError):
        data, unreadable = {}, str(row["data"])
    if not isinstance(data, dict):
        data, unreadable = {}, str(row["data"])
    try:
        forgotten = chain.tombstone(row["forgotten"])
    except ValueError:  # a damaged tombstone: verify says so; a read shows the event
        forgotten = None
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
        forgotten=forgotten,
    )


class JournalReads(RowReader):
    """The journal's reads: a part both stores hold (their `_events`)."""

    def __init__(self, store: JournalHost) -> None:
        super().__init__(store)
        self._store = store

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
        sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE {off}space = $1 AND seq > $2"
        params: list[Any] = [self.space, after]
        if task_id is not None:
            sql += f" AND task_id = {param(params, task_id)}"
        if types:
            sql += f" AND {off}type IN ({param_list(params, types)})"
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
            return projection.current(self._store._connection(), event)
        except damaged + self._store._driver_errors:
            return event

    def stored_links(self, *, after: int = 0, limit: int = 1000) -> list[chain.Link]:
        """`Journal.stored_links`: events after seq `after` as stored, `limit` of them."""
        sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE space = $1 AND seq > $2 ORDER BY seq"
        sql, params = limited(sql, [self.space, after], limit)
        return [chain.Link(*row) for row in self._rows(sql, params)]

    def record_links(
        self, kind: str, record_id: str, *, after: int = 0, limit: int = 1000
    ) -> list[chain.Link]:
        """`Journal.record_links`: the events after seq `after` among which are all that
        wrote a record, as stored, `limit` of them in seq order: a message's event; the
        action events of an action's task; the entry events of the space; a turn's event
        and those of the later turns of its session (whose state change may carry it)."""
        cut = (limit,)
        if kind == "message":
            sql = (
                f"SELECT {EVENT_COLUMNS} FROM events WHERE space = $1 AND seq > $2 AND seq ="
                " (SELECT seq FROM task_messages WHERE space = $3 AND id = $4) LIMIT $5"
            )
            params: tuple[Any, ...] = (self.space, after, self.space, record_id, *cut)
        elif kind == "action":
            sql = (
                f"SELECT {EVENT_COLUMNS} FROM events WHERE space = $1 AND seq > $2"
                " AND task_id = (SELECT task_id FROM actions WHERE space = $3 AND id = $4)"
                " AND type IN ('action.recorded', 'action.updated', 'action.logged')"
                " ORDER BY seq LIMIT $5"
            )
            params = (self.space, after, self.space, record_id, *cut)
        elif kind == "entry":
            sql = (
                f"SELECT {EVENT_COLUMNS} FROM events WHERE space = $1 AND seq > $2"
                " AND type IN ('entry.added', 'entry.resolved', 'fix.recorded')"
                " ORDER BY seq LIMIT $3"
            )
            params = (self.space, after, *cut)
        elif kind == "turn":
            # By each turn's reference to its event (migration 15); a turn older than that
            # reference has its event found by type.
            sql = (
                f"SELECT {EVENT_COLUMNS} FROM events e WHERE space = $1 AND seq > $2"
                " AND type = 'turn.appended' AND (seq IN (SELECT l.event_seq FROM turns t"
                " JOIN turns l ON l.space = t.space AND l.session_id = t.session_id"
                " AND l.turn >= t.turn WHERE t.space = $3 AND t.id = $4) OR EXISTS (SELECT 1"
                " FROM turns t JOIN turns l ON l.space = t.space"
                " AND l.session_id = t.session_id AND l.turn >= t.turn"
                " WHERE t.space = $5 AND t.id = $6 AND l.event_seq IS NULL))"
                " ORDER BY seq LIMIT $7"
            )
            params = (self.space, after, self.space, record_id, self.space, record_id, *cut)
        else:
            raise ValueError(f"no record of kind {kind!r} can be forgotten")
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
            " created_at FROM redactions WHERE space = $1"
        )
        params: list[Any] = [self.space]
        for column, value in (("task_id", task_id), ("session_id", session_id), ("kind", kind)):
            if value is not None:
                sql += f" AND {column} = {param(params, value)}"
        sql, params = limited(sql + " ORDER BY seq DESC, id", params, limit)
        return [Redaction(*row) for row in self._rows(sql, params)]

    def count_events(self) -> int:
        """Return the number of journal events in this space."""
        return int(self._rows("SELECT count(*) FROM events WHERE space = $1", (self.space,))[0][0])

    def event_ids(self, ids: Sequence[str]) -> set[str]:
        """Return which of these event ids this space's journal holds."""
        wanted = list(dict.fromkeys(ids))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):  # under SQLite's limit of bound values
            chunk = wanted[start : start + 500]
            rows = self._rows(
                f"SELECT id FROM events WHERE space = $1 AND id IN ({numbered(len(chunk), 2)})",
                (self.space, *chunk),
            )
            found.update(r[0] for r in rows)
        return found
