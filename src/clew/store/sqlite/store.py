"""The embedded store: one SQLite file in WAL mode, stdlib `sqlite3` only.

Invariants:
- Every mutation is one journal row plus its projection, in one transaction
  (`append` inside `transaction(write=True)`); nothing else writes rows.
- Writes take the lock up front (BEGIN IMMEDIATE), so a read-validate-write
  sequence cannot interleave with another process's writer.
- Every query is scoped to the store's space, except `verify`, which checks
  the whole file.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

from clew.core import codec
from clew.core.ids import is_id_prefix
from clew.errors import (
    AmbiguousIdError,
    NotFoundError,
    StoreBusyError,
    StoreError,
    StoreReadOnlyError,
    ValidationError,
)
from clew.models import DatabaseRole, Session
from clew.store.contract import CheckpointStore
from clew.store.migrations import LATEST
from clew.store.parts import Parts
from clew.store.portable.imports import Imports
from clew.store.portable.vectors import RowVectors
from clew.store.projection import conversations as projection_conversations
from clew.store.rows import KIND_TABLES, NOT_UTF8
from clew.store.sql import SQLITE, Connection, Row
from clew.store.sqlite.connection import SQLiteConnection, named
from clew.store.sqlite.file import (
    READ_ONLY_MOUNT,
    busy_opening,
    check_migrations,
    damaged,
    is_busy,
    is_damaged,
    is_read_only,
    recorded_migrations,
)
from clew.store.sqlite.file import connect as connect
from clew.store.sqlite.file import migrate as migrate
from clew.store.sqlite.file import schema_version as schema_version
from clew.store.sqlite.file import unwritable as unwritable
from clew.store.sqlite.heads import HeadReads
from clew.store.sqlite.search import Fts5Index
from clew.store.sqlite.verify import Verification
from clew.store.sqlite.writes import SQLiteWrites


def _fetch_all(cursor: sqlite3.Cursor) -> list[Row]:
    return cursor.fetchall()


def _fetch_tuples(cursor: sqlite3.Cursor) -> list[tuple[Any, ...]]:
    cursor.row_factory = None  # read at each fetch: the connection's rows stay sqlite3.Row
    return cursor.fetchall()


def _json(text: str | None) -> Any:
    return None if text is None else codec.loads(text)


class _WriteState:
    """The head and the projection's bookkeeping of the write transaction in progress."""

    def __init__(self) -> None:
        self.head: str | None = None
        self.touched: set[tuple[str, str]] = set()
        self.bulk = False  # inside bulk_turns: the turns' search index is written at its end
        self.version: int | None = None  # SQLite's data_version, once read (_data_version)
        # The session being appended to as its row stands after this transaction's turns
        # (see SQLiteStore.session_to_append); None: none, or one no longer known.
        self.session: Session | None = None
        self.bulk_start = 0  # the newest turn's seq when the bulk block began
        # The full-text indexes a forget in this transaction touched (None: no forget), and
        # the connection's secure_delete before it (forgetting turns it on).
        self.forgetting: set[str] | None = None
        self.secure_delete = 0


class _Transaction:
    """`SQLiteStore.transaction`: one transaction, or a block joining the open one. A class,
    not a generator context manager: every write runs it (1-2 µs less a call)."""

    __slots__ = ("store", "write")

    def __init__(self, store: SQLiteStore, write: bool) -> None:
        self.store = store
        self.write = write

    def __enter__(self) -> None:
        store = self.store
        store._lock.acquire()
        try:
            if store._depth:
                if self.write and not store._writing:
                    raise RuntimeError("a write cannot start inside a read transaction")
                store._depth += 1
                return
            if self.write and store.read_only:
                raise store._read_only_error()  # before anything runs: nothing half-happens
            conn = store._conn
            store._guard(lambda: conn.execute("BEGIN IMMEDIATE" if self.write else "BEGIN"))
        except BaseException:
            store._lock.release()
            raise
        store._depth, store._writing = 1, self.write
        store._state = _WriteState()

    def __exit__(self, kind: type[BaseException] | None, error: Any, *_: object) -> None:
        store = self.store
        try:
            if store._depth > 1:
                store._depth -= 1
                return
            try:
                if kind is not None:
                    with contextlib.suppress(sqlite3.Error):  # a damaged file may refuse it
                        store._conn.execute("ROLLBACK")
                    if issubclass(kind, sqlite3.DatabaseError) and is_damaged(error, store.path):
                        raise damaged(store.path, error) from None
                    return
                if store._state.forgetting is not None:  # before the commit: in its pages
                    store._guard(store._backend.forgetting_ends)
                store._guard(lambda: store._conn.execute("COMMIT"))
                state = store._state
                if state.version is not None and state.head is not None:
                    store._head = (state.version, state.head)
                if state.version is not None and state.session is not None:
                    store._session = (state.version, store._conn.total_changes, state.session)
            finally:
                store._depth, store._writing = 0, False
                if store._state.forgetting is not None:  # it costs every write: only a forget's
                    secure = store._state.secure_delete
                    store._guard(lambda: store._conn.execute(f"PRAGMA secure_delete = {secure}"))
                if projection_conversations.KNOWN:
                    projection_conversations.KNOWN.pop(id(store._sql), None)
        finally:
            store._lock.release()


_BULK_CACHE_KIB = 64 * 1024  # the page cache of a bulk block (bulk_turns), in KiB


class SQLiteStore(Parts):
    """The Store interface over one SQLite file, bound to one space: the journal core
    (connection, transactions, savepoints, bulk blocks, resolve, errors) is its own; the
    contract's reads and the journal's write path are the parts it holds (store/parts.py)."""

    _driver_errors: tuple[type[Exception], ...] = (sqlite3.Error,)

    def __init__(self, path: str | os.PathLike[str], space: str, busy_timeout: float = 5.0):
        self.path = os.fspath(path)
        self.space = space
        self.dialect = SQLITE
        # The parts (store/parts.py), each reading through this store. SQLite's own: the
        # write path's side that keeps the head and session between writes (which also
        # answers session_to_append), the heads' reads, verify, and the FTS5 index.
        self._backend = SQLiteWrites(self)
        self._appending = self._backend
        self._hold_portable(self, self._backend)
        self._heads = HeadReads(self)
        self._verification = Verification(self)
        self._text = Fts5Index(self, self._archive, self._tasks, self._verification.fts_check)
        self._imports = Imports(self)
        self._vectors = RowVectors(self)
        self.busy_timeout = busy_timeout
        # Why the store cannot be written, if it cannot: then it opens for reading only.
        self.read_only_reason = unwritable(self.path)
        self.read_only: bool = self.read_only_reason is not None
        self._conn = connect(self.path, busy_timeout, read_only=self.read_only)
        # The same connection as the portable modules and the projections take it: `$n`
        # statements (store/sql.py); SQLite's own SQL runs on `_conn` with `?`.
        self._sql = SQLiteConnection(self._conn)
        self._lock = threading.RLock()
        self._depth = 0
        self._writing = False
        self._state = _WriteState()  # of the write transaction in progress
        # The space's newest event hash as this connection's last write committed it, and
        # SQLite's data_version then: while that has not changed, no other connection has
        # committed, so the head is still the newest (see SQLiteWrites.known_head).
        self._head: tuple[int, str] | None = None
        # The session this connection's last committed write appended to, as its row then
        # stood, with data_version and this connection's total_changes then: while neither
        # has moved, no one has written since (SQLiteWrites.session_to_append).
        self._session: tuple[int, int, Session] | None = None
        self._graph_checkpoints: CheckpointStore | None = None
        self._savepoints = 0  # savepoints open in the write transaction (their names)
        try:
            self._guard(self._check_readable if self.read_only else lambda: migrate(self._conn))
        except StoreBusyError:
            self._conn.close()
            raise busy_opening(self.path, busy_timeout) from None
        except BaseException:
            self._conn.close()
            raise

    def _check_readable(self) -> None:
        """A read-only store is read as it is: it must already have the current schema."""
        recorded = recorded_migrations(self._conn)
        check_migrations(recorded)  # another build's store is refused as on a writable one
        applied = max(recorded, default=0)
        if applied == LATEST:
            return
        raise StoreError(
            f"the store {self.path} needs setting up or upgrading (schema {applied} of"
            f" {LATEST}), which writes, but {self.read_only_reason}; open it once with write access"
        )

    # -- database roles: none -----------------------------------------------------------

    def _no_roles(self) -> ValidationError:
        return ValidationError(
            f"the store {self.path} is a SQLite file, which has no database roles: whoever may"
            " read the file reads all of it, keys included, and whoever may write it may add"
            " a key; keep its folder readable only by its user (chmod 700), or use a"
            " PostgreSQL store (docs/team-store.md)"
        )

    def grant_role(self, role: str, kind: str | None, *, apply: bool) -> list[str]:
        """Roles are PostgreSQL's (store/postgres/roles.py): a SQLite file has none."""
        raise self._no_roles()

    def database_roles(self) -> list[DatabaseRole]:
        """Roles are PostgreSQL's (store/postgres/roles.py): a SQLite file has none."""
        raise self._no_roles()

    # -- transactions -----------------------------------------------------------------

    def _guard(self, fn: Any) -> Any:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if is_busy(exc):
                raise StoreBusyError(
                    f"the store {self.path} is busy: another process held its write lock longer"
                    f" than the busy timeout ({self.busy_timeout:g} s); try again, or wait longer"
                    " with --busy-timeout SECONDS ($CLEW_BUSY_TIMEOUT; busy_timeout= in Python)"
                ) from exc
            if is_read_only(exc):
                raise self._read_only_error() from exc
            if is_damaged(exc, self.path):
                raise damaged(self.path, exc) from None
            raise StoreError(f"store error: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            if is_damaged(exc, self.path):
                raise damaged(self.path, exc) from None
            raise StoreError(f"store error: {exc}") from exc
        except UnicodeEncodeError:
            raise ValidationError(NOT_UTF8) from None

    def _read_only_error(self) -> StoreReadOnlyError:
        why = self.read_only_reason or "SQLite refused to write it"
        fix = (
            "remount it read-write"
            if why == READ_ONLY_MOUNT
            else "give this user write access to the file and its folder"
        )
        return StoreReadOnlyError(
            f"the store {self.path} is read-only ({why}): reads work, but this would change"
            f" it; to write, {fix}"
        )

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def transaction(self, *, write: bool = False) -> AbstractContextManager[None]:
        """Run the block in one transaction; writes take the lock up front. Nests."""
        return _Transaction(self, write)

    @property
    def graph_checkpoints(self) -> CheckpointStore:
        """`Journal.graph_checkpoints`: store/sqlite/graph_checkpoints.py, imported on first
        use (the hook path never loads it)."""
        if self._graph_checkpoints is None:
            from clew.store.sqlite.graph_checkpoints import SQLiteGraphCheckpoints

            self._graph_checkpoints = SQLiteGraphCheckpoints(self)
        return self._graph_checkpoints

    @contextlib.contextmanager
    def savepoint(self) -> Iterator[None]:
        """`Journal.savepoint`: SQLite's SAVEPOINT, and the write state's head and
        bookkeeping put back as they were when it is rolled back to."""
        conn, state = self._writer()
        if state.bulk:  # its turns' rows are put off in memory, which no rollback reaches
            raise RuntimeError("a savepoint cannot start inside bulk_turns")
        self._savepoints += 1
        name = f"clew_{self._savepoints}"
        try:
            self._guard(lambda: conn.execute(f"SAVEPOINT {name}"))
            head, touched = state.head, set(state.touched)
            try:
                yield
            except BaseException:
                # A failed statement may have ended the transaction itself (a full disk):
                # then there is no savepoint left, and the enclosing block rolls back.
                with contextlib.suppress(sqlite3.Error):
                    conn.execute(f"ROLLBACK TO {name}")
                    conn.execute(f"RELEASE {name}")
                state.head, state.touched = head, touched
                state.session = None  # the session row kept may hold the undone turns
                projection_conversations.KNOWN.pop(id(conn), None)
                raise
            self._guard(lambda: conn.execute(f"RELEASE {name}"))
        finally:
            self._savepoints -= 1

    @contextlib.contextmanager
    def bulk_turns(self) -> Iterator[None]:
        """`Journal.bulk_turns`: the turns written in the block get their full-text entries
        in one statement at its end instead of one by one from a trigger, which costs ~2.5x
        (store/sqlite/bulk.py says why and how the schema is kept)."""
        from clew.store.sqlite import bulk as sqlite_bulk

        conn, state = self._conn, self._writer()[1]
        if state.bulk:  # an enclosing block indexes them
            yield
            return
        start = conn.execute("SELECT coalesce(max(seq), 0) FROM turns").fetchone()[0]
        saved = self._guard(lambda: sqlite_bulk.strip(conn, ("turns_fts",), inserts_only=True))
        cache = conn.execute("PRAGMA cache_size").fetchone()[0]
        state.bulk, state.bulk_start = True, int(start)
        projection_conversations.put_off(self._sql)
        try:
            # The ids' unique indexes take random inserts: once they outgrow the default
            # 2 MB cache, their pages are written to the WAL and read back again and again
            # (system time). The block's own cache is larger; memory stays bounded.
            conn.execute(f"PRAGMA cache_size = -{_BULK_CACHE_KIB}")
            yield
        finally:
            conn.execute(f"PRAGMA cache_size = {int(cache)}")
            # Also after an error: a caller that goes on in the same transaction must find
            # the index whole (an error that leaves it rolls all of this back anyway).
            state.bulk = False
            self._guard(lambda: projection_conversations.settle(self._sql, end=True))
            if saved:
                from clew.core import meter

                meter.report("indexing for search", 0, None)  # one statement: no steps to tell
                self._guard(
                    lambda: conn.execute(
                        "INSERT INTO turns_fts (rowid, content) SELECT seq, content FROM turns"
                        " WHERE seq > ? ORDER BY seq",
                        (start,),
                    )
                )
                self._guard(lambda: sqlite_bulk.restore(conn, saved))

    def purge(self) -> str | None:
        """`Journal.purge`: after a forget's commit, empty the write-ahead log (a TRUNCATE
        checkpoint), which still holds the pages as they were; a note when it could not."""
        with self._lock:
            if self.read_only:
                return None
            found = self._guard(
                lambda: self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            )
        if found is not None and int(found[0]):
            return (
                "another connection is reading the store, so its write-ahead log could not be"
                " emptied now: it holds the old pages until every connection to the store has"
                " closed (SQLite empties it then)"
            )
        return None

    def _writer(self) -> tuple[Connection, _WriteState]:
        if not self._writing:
            raise RuntimeError("journal writes must run inside transaction(write=True)")
        return self._sql, self._state

    def _connection(self) -> SQLiteConnection:
        return self._sql

    def _reading(self) -> AbstractContextManager[Any]:
        """Hold the connection across a read of several statements (one thread at a time)."""
        return self._lock

    def close(self) -> None:
        """Close the connection (pending WAL pages are checkpointed by SQLite)."""
        with self._lock:
            self._conn.close()

    # -- lookups ------------------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        rows: list[Row] = self._fetch(sql, params, _fetch_all)
        return rows

    def _tuples(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """A read's rows as tuples: no `sqlite3.Row` made and unpacked, which cost ~0.2 µs
        a row (a `where` reads some 300 rows, 200 of them messages)."""
        rows: list[tuple[Any, ...]] = self._fetch(sql, params, _fetch_tuples)
        return rows

    def _fetch(self, sql: str, params: Sequence[Any], fetch: Any) -> Any:
        # The lock keeps another thread's statement out of a transaction in progress.
        with self._lock:
            if projection_conversations.PUT_OFF:  # a bulk block's session states, first
                self._guard(lambda: projection_conversations.settle(self._sql))
            return self._guard(lambda: fetch(self._conn.execute(sql, named(params))))

    def resolve(self, kind: str, ident: str, hint: str = "") -> str:
        """Return the full id of the `kind` record whose id is `ident` or starts with it."""
        table = KIND_TABLES[kind]
        key = ident.strip().lower()
        if not is_id_prefix(key):
            raise NotFoundError(kind, ident, hint)
        # Ids use only [0-9a-z]; '~' sorts after all of them, bounding the prefix range,
        # so one indexed query finds an exact match and every candidate at once. The unary
        # `+` keeps SQLite from choosing an index on space, which would scan the whole space.
        rows = self._rows(
            f"SELECT id FROM {table} WHERE id >= $1 AND id < $2 AND +space = $3"
            " ORDER BY id LIMIT 51",
            (key, key + "~", self.space),
        )
        if not rows:
            raise NotFoundError(kind, ident, hint)
        if len(rows) > 1 and rows[0]["id"] != key:
            raise AmbiguousIdError(kind, ident, [r["id"] for r in rows])
        return str(rows[0]["id"])
