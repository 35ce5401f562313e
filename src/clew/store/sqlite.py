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
from typing import Any

from clew.errors import (
    AmbiguousIdError,
    NotFoundError,
    StoreBusyError,
    StoreError,
    StoreReadOnlyError,
)
from clew.ids import is_id_prefix, new_id
from clew.models import (
    Action,
    ActionLog,
    Event,
    FileChanges,
    Message,
    MessageRole,
    MessageType,
    PlanItem,
    StepStatus,
    Task,
    TaskStatus,
)
from clew.store import chain, codec, projection
from clew.store.migrations import (
    FINGERPRINTED_FROM,
    FINGERPRINTS,
    LATEST,
    MIGRATIONS,
)
from clew.store.rows import json_ids, limited
from clew.store.sql import Row
from clew.store.sqlite_archive import ArchiveReads
from clew.store.sqlite_conversations import ConversationReads
from clew.store.sqlite_record import RecordReads
from clew.store.sqlite_search import SearchReads
from clew.store.sqlite_trace import TraceReads, action_from_row
from clew.store.sqlite_utility import UtilityReads
from clew.store.sqlite_verify import EVENT_COLUMNS, Verification
from clew.store.sqlite_waits import WaitReads

KIND_TABLES = {
    "task": "tasks",
    "step": "plan_items",
    "action": "actions",
    "log": "action_logs",
    "message": "task_messages",
    "entry": "entries",
    "decision": "trace_decisions",
    "pattern": "patterns",
    "guardrail": "guardrails",
    "job": "jobs",
    "session": "sessions",
    "turn": "turns",
    "wait": "waits",
}


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _is_read_only(exc: sqlite3.Error) -> bool:
    return "readonly" in str(exc).lower()  # SQLITE_READONLY: "attempt to write a readonly ..."


READ_ONLY_MOUNT = "it is on a read-only file system"


def unwritable(path: str) -> str | None:
    """Say why the existing store at `path` cannot be written (None if it can, or is new).

    A file, folder or mount this user cannot write opens for reading instead of being
    refused; os.access asks the kernel, so it also sees read-only mounts (EROFS)."""
    if path == ":memory:" or not os.path.isfile(path):
        return None
    folder = os.path.dirname(os.path.abspath(path))
    if hasattr(os, "statvfs") and os.statvfs(folder).f_flag & os.ST_RDONLY:
        return READ_ONLY_MOUNT
    if not os.access(path, os.W_OK):
        return "this user may not write the file"
    if not os.access(folder, os.W_OK):
        return "this user may not write its folder"
    return None


def make_folder(path: str) -> None:
    """Make the folder that will hold the store file, or raise StoreError saying why not."""
    if os.path.isdir(path):
        store = os.path.join(path, ".clew", "clew.db")
        raise StoreError(f"{path} is a folder, not a store file; a store in it is like {store}")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise StoreError(
            f"cannot make the folder {folder} for the store: a file is in the way"
        ) from None
    except OSError as exc:
        raise StoreError(f"cannot make the folder {folder} for the store: {exc.strerror}") from None
    if not os.path.exists(path) and not os.access(folder, os.W_OK):
        raise StoreError(f"cannot create the store {path}: this user may not write {folder}")


def connect(path: str, busy_timeout: float = 5.0, *, read_only: bool = False) -> sqlite3.Connection:
    """Open `path` with clew's connection settings: autocommit driver, foreign keys, busy
    timeout. The file itself is not changed: `migrate` checks it is a clew store first.
    `read_only` opens it with SQLite's `mode=ro`, which never writes the file."""
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        # A device or FIFO (/dev/null, /dev/zero): SQLite would fail half-way through opening.
        raise StoreError(f"{path} is not a clew store: it is not a regular file")
    if path != ":memory:" and not read_only:
        make_folder(path)
    try:
        if read_only:
            conn = _connect_read_only(path, busy_timeout)
        else:
            conn = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=busy_timeout
            )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the store at {path}: {exc}") from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        conn.execute("PRAGMA foreign_keys = ON")
        # NORMAL in WAL mode survives a crash of the process (the kernel keeps the
        # written pages); only a power loss can take the newest commits.
        conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.Error as exc:
        conn.close()
        raise StoreError(f"{path} is not a clew store ({exc})") from exc
    conn.row_factory = sqlite3.Row
    return conn


def _connect_read_only(path: str, busy_timeout: float) -> sqlite3.Connection:
    from urllib.parse import quote  # only read-only stores need a URI

    uri = f"file:{quote(os.path.abspath(path), safe='/')}?mode=ro"

    def attempt(suffix: str) -> sqlite3.Connection:
        conn = sqlite3.connect(
            uri + suffix,
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            timeout=busy_timeout,
        )
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except BaseException:
            conn.close()
            raise
        return conn

    try:
        return attempt("")
    except sqlite3.OperationalError as exc:
        # A WAL store needs its -shm file, which a reader cannot create in a folder it
        # may not write. With no -wal file every commit is in the main file, so reading
        # it as immutable is exact; with one, its commits would be missed: refuse.
        if _is_busy(exc):
            raise
        if os.path.exists(f"{path}-wal"):
            raise StoreError(
                f"cannot read the store {path}: its write-ahead log ({path}-wal) needs a -shm"
                " file that this user cannot create there; open it once with write access"
            ) from None
        return attempt("&immutable=1")


def schema_version(conn: sqlite3.Connection) -> int:
    """Return the newest migration applied to the file (0 for an empty file), reading only.

    Raises StoreError for a file that is not a clew store, so that someone else's
    database or document is refused before anything writes to it."""
    version = "SELECT max(number) FROM clew_migrations"
    try:
        return int(conn.execute(version).fetchone()[0] or 0)
    except sqlite3.OperationalError as exc:
        if _is_busy(exc):
            raise
        if "no such table" not in str(exc):
            raise StoreError(f"this file is not a clew store ({exc})") from None
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"this file is not a clew store ({exc})") from None
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "clew_migrations" in names:  # another process created the schema a moment ago
        return int(conn.execute(version).fetchone()[0] or 0)
    if names:
        raise StoreError("this SQLite file is not a clew store (it has other tables)")
    return 0


def recorded_migrations(conn: sqlite3.Connection) -> dict[int, str | None]:
    """Return each applied migration's recorded fingerprint (None where the store was made
    before fingerprints were recorded), reading only."""
    if not schema_version(conn):
        return {}
    rows = conn.execute("SELECT * FROM clew_migrations").fetchall()
    has = bool(rows) and "fingerprint" in rows[0].keys()  # noqa: SIM118 - Row is no mapping
    return {r["number"]: r["fingerprint"] if has else None for r in rows}


def check_migrations(recorded: dict[int, str | None]) -> None:
    """Refuse a store whose recorded migrations are not this clew's, one line saying why."""
    applied = max(recorded, default=0)
    if applied > LATEST:
        raise StoreError(
            f"the store has schema version {applied} but this clew knows only {LATEST}; "
            "upgrade clew"
        )
    for number, code in FINGERPRINTS.items():
        if number > applied:
            break
        if number not in recorded:
            raise StoreError(
                f"the store has schema version {applied} without step {number} of this clew's"
                " schema; it was made by a different build of clew: open it with that one"
            )
        found = recorded[number]
        if found is None and applied < FINGERPRINTED_FROM:
            continue  # made before fingerprints existed: that migration checks and records them
        if found != code:
            raise StoreError(
                f"the store's schema step {number} differs from this clew's (fingerprint"
                f" {(found or 'none')[:12]}, expected {code[:12]}); it was made by a different"
                " build of clew: open it with that one"
            )
    unknown = sorted(set(recorded) - set(FINGERPRINTS))
    if unknown:
        raise StoreError(
            f"the store has schema step {unknown[0]}, which this clew does not know; "
            "it was made by a different build of clew: open it with that one"
        )


def migrate(conn: sqlite3.Connection) -> None:
    """Check the file is a clew store (or empty) made by these migrations, switch it to
    WAL, and apply every migration not yet recorded, each in its own transaction."""
    recorded = recorded_migrations(conn)
    check_migrations(recorded)
    applied = max(recorded, default=0)
    conn.execute("PRAGMA journal_mode = WAL")  # persistent; a no-op once set
    if applied == LATEST:
        return
    for migration in (m for m in MIGRATIONS if m.number > applied):
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while we waited for the lock.
            if schema_version(conn) < migration.number:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS clew_migrations (number INTEGER PRIMARY KEY,"
                    " name TEXT NOT NULL, applied_at TEXT NOT NULL, fingerprint TEXT)"
                )
                for step in migration.statements:
                    if isinstance(step, str):
                        conn.execute(step)
                    else:
                        step.fn(conn)
                conn.execute(
                    "INSERT INTO clew_migrations (number, name, applied_at, fingerprint)"
                    " VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ'), ?)",
                    (migration.number, migration.name, FINGERPRINTS[migration.number]),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _json(text: str | None) -> Any:
    return None if text is None else codec.loads(text)


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


# Plan rows are read on every task read, so they are selected in PlanItem's field order
# and unpacked by position: several times faster than building them by column name.
_STEP_COLUMNS = ", ".join(PlanItem._fields)
_STEP_STATUS = {s.value: s for s in StepStatus}


def _step(row: Row | tuple[Any, ...]) -> PlanItem:
    (
        id, space, task_id, ordinal, title, status, started_at, completed_at,
        duration, summary, issue, depends_on, removed, created_at, updated_at,
    ) = row  # fmt: skip
    return PlanItem(
        id, space, task_id, ordinal, title, _STEP_STATUS[status], started_at, completed_at,
        duration, summary, issue, json_ids(depends_on), bool(removed), created_at, updated_at,
    )  # fmt: skip


# Task fields in Task's order (all but the plan), selected by position like steps.
_TASK_FIELDS = Task._fields[:-1]
_TASK_STATUS = {s.value: s for s in TaskStatus}
_TASKS_WITH_PLANS = (
    f"SELECT {', '.join('t.' + c for c in _TASK_FIELDS)},"
    f" {', '.join('p.' + c for c in PlanItem._fields)}"
    " FROM tasks t LEFT JOIN plan_items p ON p.task_id = t.id AND p.removed = 0"
)
_TASK_WITH_PLAN = f"{_TASKS_WITH_PLANS} WHERE t.id = ? AND t.space = ? ORDER BY p.ordinal"


def _tasks_with_plans(rows: Sequence[Row]) -> list[Task]:
    """Fold rows of tasks joined to their steps (a task's rows together, its steps in
    order) into tasks with their plans, in the rows' order."""
    width = len(_TASK_FIELDS)
    heads: dict[str, Row] = {}
    plans: dict[str, list[PlanItem]] = {}
    for row in rows:
        heads.setdefault(row[0], row)
        steps = plans.setdefault(row[0], [])
        if row[width] is not None:
            steps.append(_step(tuple(row)[width:]))
    return [_task(tuple(head)[:width], tuple(plans[tid])) for tid, head in heads.items()]


def _task(row: Row | tuple[Any, ...], plan: tuple[PlanItem, ...]) -> Task:
    (
        id, space, name, goal, workspace, status, archived, metadata, plan_version,
        last_replanned_at, created_at, updated_at, completed_at, next_objective, summary,
    ) = row  # fmt: skip
    return Task(
        id, space, name, goal, workspace, _TASK_STATUS[status], bool(archived),
        {} if metadata == "{}" else codec.loads(metadata), plan_version, last_replanned_at,
        created_at, updated_at, completed_at, next_objective, summary, plan,
    )  # fmt: skip


def _log(row: Row) -> ActionLog:
    return ActionLog(
        id=row["id"],
        space=row["space"],
        task_id=row["task_id"],
        action_id=row["action_id"],
        type=row["type"],
        content=row["content"],
        created_at=row["created_at"],
    )


def _message(row: Row) -> Message:
    return Message(
        id=row["id"],
        space=row["space"],
        task_id=row["task_id"],
        role=MessageRole(row["role"]),
        type=MessageType(row["type"]),
        content=row["content"],
        created_at=row["created_at"],
    )


class SQLiteStore(
    Verification,  # first: its fts_check wraps ArchiveReads' for read-only stores
    ArchiveReads,
    TraceReads,
    UtilityReads,
    ConversationReads,
    SearchReads,
    WaitReads,
    RecordReads,
):
    """The Store interface over one SQLite file, bound to one space."""

    def __init__(self, path: str | os.PathLike[str], space: str, busy_timeout: float = 5.0):
        self.path = os.fspath(path)
        self.space = space
        self.busy_timeout = busy_timeout
        # Why the store cannot be written, if it cannot: then it opens for reading only.
        self.read_only_reason = unwritable(self.path)
        self.read_only: bool = self.read_only_reason is not None
        self._conn = connect(self.path, busy_timeout, read_only=self.read_only)
        self._lock = threading.RLock()
        self._depth = 0
        self._writing = False
        self._touched: set[tuple[str, str]] = set()
        self._head: str | None = None  # this space's last event hash, within a write
        try:
            self._guard(self._check_readable if self.read_only else lambda: migrate(self._conn))
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

    # -- transactions -----------------------------------------------------------------

    def _guard(self, fn: Any) -> Any:
        try:
            return fn()
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                raise StoreBusyError(
                    f"the store {self.path} is busy: another process held its write lock longer"
                    f" than the busy timeout ({self.busy_timeout:g} s); try again, or wait longer"
                    " with --busy-timeout SECONDS ($CLEW_BUSY_TIMEOUT; busy_timeout= in Python)"
                ) from exc
            if _is_read_only(exc):
                raise self._read_only_error() from exc
            raise StoreError(f"store error: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"store error: {exc}") from exc

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

    @contextlib.contextmanager
    def transaction(self, *, write: bool = False) -> Iterator[None]:
        """Run the block in one transaction; writes take the lock up front. Nests."""
        with self._lock:
            if self._depth:
                if write and not self._writing:
                    raise RuntimeError("a write cannot start inside a read transaction")
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            if write and self.read_only:
                raise self._read_only_error()  # before anything runs, so nothing half-happens
            self._guard(lambda: self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN"))
            self._depth, self._writing = 1, write
            self._touched.clear()
            self._head = None
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._guard(lambda: self._conn.execute("COMMIT"))
            finally:
                self._depth, self._writing = 0, False

    def append(
        self,
        *,
        type: str,
        task_id: str | None,
        correlation_id: str,
        data: dict[str, Any],
        created_at: str,
    ) -> Event:
        """Journal one event and apply it to the projections (inside a write transaction)."""
        if not self._writing:
            raise RuntimeError("append must run inside transaction(write=True)")
        event_id = new_id()
        text = codec.dumps(data)
        if self._head is None:
            # One indexed read per transaction: the lock taken by BEGIN IMMEDIATE keeps
            # it the head until commit, and this store's own appends move it on.
            row = self._guard(
                lambda: self._conn.execute(
                    "SELECT hash FROM events WHERE space = ? ORDER BY seq DESC LIMIT 1",
                    (self.space,),
                ).fetchone()
            )
            self._head = row[0] if row is not None else ""
        digest = chain.event_hash(
            self._head,
            id=event_id,
            space=self.space,
            task_id=task_id,
            correlation_id=correlation_id,
            type=type,
            data=text,
            created_at=created_at,
        )
        # RETURNING, not the driver's lastrowid: the journal's seq is a column of its own.
        seq = self._guard(
            lambda: self._conn.execute(
                "INSERT INTO events"
                " (id, space, task_id, correlation_id, type, data, created_at, hash)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
                (event_id, self.space, task_id, correlation_id, type, text, created_at, digest),
            ).fetchone()[0]
        )
        self._head = digest
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
        self._guard(lambda: projection.apply(self._conn, event, self._touched))
        return event

    def close(self) -> None:
        """Close the connection (pending WAL pages are checkpointed by SQLite)."""
        with self._lock:
            self._conn.close()

    # -- lookups ------------------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        # The lock keeps another thread's statement out of a transaction in progress.
        with self._lock:
            rows: list[Row] = self._guard(lambda: self._conn.execute(sql, params).fetchall())
        return rows

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
            f"SELECT id FROM {table} WHERE id >= ? AND id < ? AND +space = ? ORDER BY id LIMIT 51",
            (key, key + "~", self.space),
        )
        if not rows:
            raise NotFoundError(kind, ident, hint)
        if len(rows) > 1 and rows[0]["id"] != key:
            raise AmbiguousIdError(kind, ident, [r["id"] for r in rows])
        return str(rows[0]["id"])

    def get_plan(self, task_id: str, *, include_removed: bool = False) -> tuple[PlanItem, ...]:
        """Return a task's steps in plan order; removed steps last when asked for."""
        # Current steps have unique ordinals; removed ones (ordinal NULL) follow by time.
        where = (
            " ORDER BY removed, ordinal, updated_at"
            if include_removed
            else (" AND removed = 0 ORDER BY ordinal")
        )
        rows = self._rows(
            f"SELECT {_STEP_COLUMNS} FROM plan_items WHERE task_id = ? AND space = ?{where}",
            (task_id, self.space),
        )
        return tuple(_step(r) for r in rows)

    def get_task(self, task_id: str) -> Task:
        """Return one task with its current plan (one query: the task joined to its steps)."""
        rows = self._rows(_TASK_WITH_PLAN, (task_id, self.space))
        if not rows:
            raise NotFoundError("task", task_id)
        return _tasks_with_plans(rows)[0]

    def get_task_status(self, task_id: str) -> TaskStatus:
        """Return just a task's status: the hot write path's only check."""
        rows = self._rows(
            "SELECT status FROM tasks WHERE id = ? AND space = ?", (task_id, self.space)
        )
        if not rows:
            raise NotFoundError("task", task_id)
        return TaskStatus(rows[0]["status"])

    def list_tasks(
        self, statuses: tuple[TaskStatus, ...] = (), *, include_archived: bool = False
    ) -> list[Task]:
        """Return tasks, most recently updated first, each with its plan (one query: the
        tasks joined to their steps, so a listing costs the same at any number of tasks)."""
        sql = f"{_TASKS_WITH_PLANS} WHERE t.space = ?"
        params: list[Any] = [self.space]
        if statuses:
            sql += f" AND t.status IN ({', '.join('?' for _ in statuses)})"
            params += [s.value for s in statuses]
        if not include_archived:
            sql += " AND t.archived = 0"
        sql += " ORDER BY t.updated_at DESC, t.id, p.ordinal"
        return _tasks_with_plans(self._rows(sql, params))

    def get_step(self, step_id: str) -> PlanItem:
        """Return one plan item by id."""
        rows = self._rows(
            f"SELECT {_STEP_COLUMNS} FROM plan_items WHERE id = ? AND space = ?",
            (step_id, self.space),
        )
        if not rows:
            raise NotFoundError("step", step_id)
        return _step(rows[0])

    def get_action(self, action_id: str) -> Action:
        """Return one action by id."""
        rows = self._rows(
            "SELECT * FROM actions WHERE id = ? AND space = ?", (action_id, self.space)
        )
        if not rows:
            raise NotFoundError("action", action_id)
        return action_from_row(rows[0])

    def list_actions(
        self, task_id: str, *, plan_item_id: str | None = None, limit: int | None = None
    ) -> list[Action]:
        """Return a task's actions, newest first."""
        sql = "SELECT * FROM actions WHERE task_id = ? AND space = ?"
        params: list[Any] = [task_id, self.space]
        if plan_item_id is not None:
            sql += " AND plan_item_id = ?"
            params.append(plan_item_id)
        sql += " ORDER BY created_at DESC, seq DESC"
        return [action_from_row(r) for r in self._rows(*limited(sql, params, limit))]

    def linked_actions(self, action_ids: Sequence[str]) -> dict[str, str | None]:
        """Which of these actions an error entry names as its source: each with None while
        such an entry is active, else when the last of them was closed."""
        if not action_ids:
            return {}
        marks = ", ".join("?" * len(action_ids))
        rows = self._rows(
            # CASE, not max() of a comparison: PostgreSQL has no max of booleans.
            "SELECT s.source_id, MAX(CASE WHEN e.status = 'active' THEN 1 ELSE 0 END) AS open,"
            " MAX(COALESCE(e.resolved_at, e.updated_at)) AS closed_at"
            " FROM entry_sources s JOIN entries e ON e.id = s.entry_id"
            " WHERE s.space = ? AND s.kind = 'action' AND e.type = 'error'"
            f" AND s.source_id IN ({marks}) GROUP BY s.source_id",
            (self.space, *action_ids),
        )
        return {r["source_id"]: None if r["open"] else r["closed_at"] for r in rows}

    def list_action_logs(self, action_id: str) -> list[ActionLog]:
        """Return an action's log lines, oldest first."""
        rows = self._rows(
            "SELECT * FROM action_logs WHERE action_id = ? AND space = ? ORDER BY created_at, seq",
            (action_id, self.space),
        )
        return [_log(r) for r in rows]

    def list_messages(self, task_id: str, *, limit: int | None = None) -> list[Message]:
        """Return a task's messages, newest first."""
        rows = self._rows(*limited(
            "SELECT * FROM task_messages WHERE task_id = ? AND space = ?"
            " ORDER BY created_at DESC, seq DESC",
            (task_id, self.space), limit,
        ))  # fmt: skip
        return [_message(r) for r in rows]

    def get_message(self, message_id: str) -> Message:
        """Return one task message by id."""
        rows = self._rows(
            "SELECT * FROM task_messages WHERE id = ? AND space = ?", (message_id, self.space)
        )
        if not rows:
            raise NotFoundError("message", message_id)
        return _message(rows[0])

    def file_changes(self, task_id: str, *, newest: int | None = 5) -> FileChanges:
        """Summarise the files a task created or modified."""
        with self.transaction():
            totals = self._rows(
                "SELECT sum(created), count(*) - sum(created), max(last_at) FROM task_files"
                " WHERE task_id = ? AND space = ?",
                (task_id, self.space),
            )[0]
            paths = self._rows(*limited(
                "SELECT path FROM task_files WHERE task_id = ? AND space = ?"
                " ORDER BY last_at DESC, path",
                (task_id, self.space), newest,
            ))  # fmt: skip
        return FileChanges(
            created=totals[0] or 0,
            modified=totals[1] or 0,
            last_change=totals[2],
            newest=tuple(r[0] for r in paths),
        )

    def list_events(
        self,
        *,
        task_id: str | None = None,
        after: int = 0,
        limit: int | None = None,
        types: tuple[str, ...] = (),
    ) -> list[Event]:
        """Return journal events in commit order, optionally for one task."""
        sql = f"SELECT {EVENT_COLUMNS} FROM events WHERE space = ? AND seq > ?"
        params: list[Any] = [self.space, after]
        if task_id is not None:
            sql += " AND task_id = ?"
            params.append(task_id)
        if types:
            sql += f" AND type IN ({', '.join('?' for _ in types)})"
            params += list(types)
        sql, params = limited(sql + " ORDER BY seq", params, limit)
        with self._lock:
            return [self._current(_event(r)) for r in self._rows(sql, params)]

    def _current(self, event: Event) -> Event:
        """Return an event read for display in the current shape, as far as it can be: the
        data of a damaged event is shown as stored rather than failing the whole read."""
        try:
            return projection.current(self._conn, event)
        except (KeyError, TypeError, ValueError, AttributeError, sqlite3.Error):
            return event

    def count_events(self) -> int:
        """Return the number of journal events in this space."""
        return int(self._rows("SELECT count(*) FROM events WHERE space = ?", (self.space,))[0][0])
