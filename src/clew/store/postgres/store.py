"""The team store: PostgreSQL through psycopg 3 and a connection pool.

Invariants (the same as the SQLite store's, held the PostgreSQL way):
- Every mutation is one journal row plus its projection, in one transaction.
- Writers serialize per space: a write transaction takes `pg_advisory_xact_lock` on a hash of
  its space before anything else, so a read-validate-write sequence cannot interleave with
  another writer of that space (SQLite's BEGIN IMMEDIATE, per space instead of per file).
  The lock is held to commit, so a space's events commit in `seq` order and its hash chain
  has one head at a time.
- Every transaction sets `clew.space` (transaction-local), which the row-level security
  policies of every table compare with each row's `space`: the second wall behind the
  `space = $n` of every query. Superusers bypass it; a team store connects as an ordinary role.
- The read SQL and the projection handlers are the portable modules SQLite's store runs too
  (`$n` placeholders, sent as written through postgres/connection.py), held as parts
  (store/parts.py); only the journal core, connections, errors and verify are here.

psycopg is imported only when a PostgreSQL URL is opened: the CLI on a SQLite store never
loads it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from clew.core.ids import is_id_prefix
from clew.core.location import shown
from clew.errors import (
    AmbiguousIdError,
    NotFoundError,
    StoreBusyError,
    StoreError,
    StoreReadOnlyError,
    ValidationError,
)
from clew.models import DatabaseRole, VerifyReport
from clew.store.contract import CheckpointStore
from clew.store.migrations import ADMIN_TABLES
from clew.store.parts import Parts
from clew.store.portable.imports import Imports
from clew.store.portable.journal import PortableBackend
from clew.store.postgres import connection as pg_connection
from clew.store.postgres import migrations as pg_migrations
from clew.store.postgres import roles as pg_roles
from clew.store.postgres import vectors as pg_vectors
from clew.store.postgres.heads import PgHeadReads
from clew.store.postgres.migrations import collated
from clew.store.postgres.search import TsIndex
from clew.store.postgres.vectors import PgVectors
from clew.store.rows import KIND_TABLES, NOT_UTF8
from clew.store.sql import POSTGRESQL, Row

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

MIGRATION_LOCK = 0x636C6577  # "clew": one migrator at a time per database


def _import_psycopg() -> tuple[Any, Any]:
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        from clew.core.installation import install_command

        raise StoreError(
            f"a PostgreSQL store needs psycopg and psycopg-pool: {install_command('postgres')}"
        ) from None
    return psycopg, psycopg_pool


def _numeric_loader(psycopg: Any) -> type:
    """A loader of `numeric` (what sum() of bigints gives) as int when whole, else float, as
    SQLite gives them: callers compare and print these as plain numbers."""

    class NumericLoader(psycopg.adapt.Loader):  # type: ignore[misc]
        def load(self, data: Any) -> int | float:
            text = bytes(data).decode("ascii")
            return float(text) if any(c in text for c in ".eEN") else int(text)

    return NumericLoader


class _Txn:
    """One thread's transaction in progress: its connection and nesting."""

    def __init__(self, raw: psycopg.Connection[Any]) -> None:
        self.raw = raw
        self.conn = pg_connection.Connection(raw)
        self.depth = 0
        self.writing = False
        self.touched: set[tuple[str, str]] = set()
        self.head: str | None = None
        self.savepoints = 0  # savepoints open in it (their names)


class PgVerification:
    """`verify` and `fts_check` for PostgresStore (its `_verification`)."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    def verify(self, *, all_spaces: bool = False) -> VerifyReport:
        """Check the journal chain, replay the journal into a temporary schema made by the
        same migrations, and compare every projection row of the space (of every space with
        `all_spaces`)."""
        from clew.store.postgres.verify import verify

        store = self._store
        report: VerifyReport = store._guard(lambda: verify(store, all_spaces=all_spaces))
        return report

    def fts_check(self, index: str = "entries_fts") -> str | None:
        """SQLite's FTS5 indexes do not exist here: nothing to check."""
        return None


class PostgresStore(Parts):
    """The Store interface over one PostgreSQL database, bound to one space.

    Its reads are the portable parts SQLite's store holds too (through pg_connection); its own
    are the journal core: connections, transactions, resolve, errors; and the parts only it
    has: verify (PgVerification), the heads' reads (postgres/heads.py), full-text search (TsIndex,
    store/postgres/search.py) and pgvector's index (postgres/vectors.py)."""

    def __init__(self, url: str, space: str, busy_timeout: float = 5.0, *, max_size: int = 4):
        psycopg, pool = _import_psycopg()
        self._psycopg = psycopg
        self._driver_errors: tuple[type[Exception], ...] = (psycopg.Error,)
        self.url = url
        self.path = shown(url)
        self.space = space
        self.dialect = POSTGRESQL
        # The parts (store/parts.py), each reading through this store; the write path has
        # nothing beyond the shared SQL here, and a session to append to is read afresh.
        self._hold_portable(self, PortableBackend(space))
        self._appending = self._conversations
        self._heads = PgHeadReads(self)
        self._verification = PgVerification(self)
        self._text = TsIndex(self, self._archive, self._tasks)
        self._imports = Imports(self, self._user_name)
        self._graph_checkpoints: CheckpointStore | None = None
        self.busy_timeout = busy_timeout
        self._lock = threading.RLock()
        self._local = threading.local()
        literal = psycopg.sql.Literal(space).as_string(None)
        self._begin_read = f"BEGIN; SELECT set_config('clew.space', {literal}, true)"
        # verify --all-spaces: reads see every space (the policies allow it for SELECT only).
        self._begin_all = (
            f"BEGIN READ ONLY; SELECT set_config('clew.space', {literal}, true),"
            " set_config('clew.all_spaces', 'on', true)"
        )
        # The lock first: nothing of this space is read before it is ours (BEGIN IMMEDIATE).
        self._begin_write = (
            f"BEGIN; SET LOCAL lock_timeout = {max(1, int(busy_timeout * 1000))};"
            f" SELECT set_config('clew.space', {literal}, true),"
            f" pg_advisory_xact_lock(hashtextextended({literal}, 0))"
        )
        self._loader = _numeric_loader(psycopg)
        # One connection first, in this thread: an unreachable server or a refused login is
        # one clear error now, not a pool retrying in the background.
        try:
            first = psycopg.connect(url, autocommit=True, connect_timeout=_seconds(busy_timeout))
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot reach the PostgreSQL store {self.path}: {_why(exc, self.url)}"
            ) from None
        try:
            self.read_only_reason = self._guard(lambda: self._server_read_only(first))
            self.read_only: bool = self.read_only_reason is not None
            self._guard(lambda: self._set_up(first))
            self._vectors = PgVectors(self, native=pg_vectors.set_up(first))
        finally:
            first.close()
        logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())
        # psycopg logs the error of a failed pipeline it ignores (the read's own error is
        # raised, and says it): not printed to the user's terminal as a second line.
        logging.getLogger("psycopg").addHandler(logging.NullHandler())
        self._pool: psycopg_pool.ConnectionPool[Any] = pool.ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            kwargs={"autocommit": True, "connect_timeout": _seconds(busy_timeout)},
            configure=self._configure,
            timeout=max(busy_timeout, 1.0),
            open=True,
        )

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        conn.adapters.register_loader("numeric", self._loader)

    # -- set-up ---------------------------------------------------------------------------

    def _server_read_only(self, raw: psycopg.Connection[Any]) -> str | None:
        row = raw.execute(
            "SELECT pg_is_in_recovery(), current_setting('default_transaction_read_only'),"
            " current_user::text, to_regclass('events') IS NOT NULL"
            " AND NOT has_table_privilege('events', 'INSERT')"
        ).fetchone()
        assert row is not None
        self.role: str = row[2]
        if row[0]:
            return "it is a read replica"
        if row[1] == "on":
            return "the server's default_transaction_read_only is on"
        if row[3]:  # a reader (docs/team-store.md, section 2): it may not add to the journal
            return f"the role {self.role!r} may only read it"
        return None

    def _recorded(self, raw: psycopg.Connection[Any]) -> dict[int, str | None]:
        found = raw.execute("SELECT to_regclass('clew_migrations'), to_regclass('events')")
        row = found.fetchone()
        assert row is not None
        if row[0] is None:
            if row[1] is not None:
                raise StoreError(
                    f"the database {self.path} is not a clew store (it has an events table"
                    " but no clew_migrations)"
                )
            return {}
        rows = raw.execute("SELECT number, fingerprint FROM clew_migrations").fetchall()
        return {int(r[0]): r[1] for r in rows}

    def _check(self, recorded: dict[int, str | None]) -> int:
        applied = max(recorded, default=0)
        if applied > pg_migrations.LATEST:
            raise StoreError(
                f"the store has schema version {applied} but this clew knows only"
                f" {pg_migrations.LATEST}; upgrade clew"
            )
        for number, found in recorded.items():
            if pg_migrations.FINGERPRINTS.get(number) != found:
                raise StoreError(
                    f"the store's schema step {number} differs from this clew's; it was made by"
                    " a different build of clew: open it with that one"
                )
        return applied

    def _set_up(self, raw: psycopg.Connection[Any]) -> None:
        """Check the database is a clew store made by these migrations (or empty) and apply
        those not yet applied; a read-only server's store must already be current."""
        applied = self._check(self._recorded(raw))
        if applied == pg_migrations.LATEST:
            return
        if not self.read_only:
            try:
                migrate(raw)
            except self._psycopg.errors.InsufficientPrivilege as exc:
                raise StoreError(
                    f"the store {self.path} needs setting up or upgrading (schema {applied} of"
                    f" {pg_migrations.LATEST}), which only the owner of its tables may do, and"
                    f" this is role {self.role!r} ({_why(exc, self.url)}): run `clew init` once"
                    " as the owner"
                ) from None
            return
        if applied != pg_migrations.LATEST:
            raise StoreError(
                f"the store {self.path} needs setting up or upgrading (schema {applied} of"
                f" {pg_migrations.LATEST}), which writes, but {self.read_only_reason}"
            )

    # -- transactions ---------------------------------------------------------------------

    def _guard(self, fn: Any) -> Any:
        psycopg = self._psycopg
        try:
            return fn()
        except psycopg.errors.LockNotAvailable as exc:
            raise StoreBusyError(
                f"the store {self.path} is busy: another process held the write lock of space"
                f" {self.space!r} longer than the busy timeout ({self.busy_timeout:g} s); try"
                " again, or wait longer with --busy-timeout SECONDS ($CLEW_BUSY_TIMEOUT;"
                " busy_timeout= in Python)"
            ) from exc
        except psycopg.errors.ReadOnlySqlTransaction as exc:
            raise self._read_only_error() from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(self._refused(exc)) from exc
        except psycopg.DataError as exc:
            if "NUL (0x00)" in str(exc):  # checked by the driver before anything is sent
                raise ValidationError(
                    "a PostgreSQL store cannot keep text holding the NUL character (\\x00);"
                    " remove it, or send that output as bytes"
                ) from exc
            raise StoreError(f"store error: {_why(exc, self.url)}") from exc
        except psycopg.OperationalError as exc:
            raise StoreError(
                f"lost the PostgreSQL store {self.path}: {_why(exc, self.url)}"
            ) from exc
        except psycopg.Error as exc:
            raise StoreError(f"store error: {_why(exc, self.url)}") from exc
        except UnicodeEncodeError:
            raise ValidationError(NOT_UTF8) from None
        except Exception as exc:
            if type(exc).__name__ == "PoolTimeout":
                raise StoreBusyError(
                    f"the store {self.path} is busy: no connection came free within the busy"
                    f" timeout ({self.busy_timeout:g} s)"
                ) from exc
            raise

    def _refused(self, exc: BaseException) -> str:
        """What to say when the server refused the role something (docs/team-store.md,
        section 2, says what each kind of role may do)."""
        why = _why(exc, self.url)
        role = getattr(self, "role", "?")
        if any(f"table {t}" in why for t in ADMIN_TABLES):
            return (
                f"the store {self.path} refused this to role {role!r} ({why}): only the owner"
                " of clew's tables and roles granted `clew db grant ROLE --as server` may use"
                " the server's keys and request log"
            )
        return (
            f"the store {self.path} refused this to role {role!r} ({why}); if clew was just"
            " upgraded, the tables' owner grants the role again: clew db grant ROLE --as KIND"
        )

    def _read_only_error(self) -> StoreReadOnlyError:
        why = self.read_only_reason or "the server refused to write"
        fix = (
            "connect as a role granted more (clew db grant ROLE --as member)"
            if why.startswith("the role")
            else "connect to the primary"
        )
        return StoreReadOnlyError(
            f"the store {self.path} is read-only ({why}): reads work, but this would change it;"
            f" to write, {fix}"
        )

    @property
    def _txn(self) -> _Txn | None:
        return getattr(self._local, "txn", None)

    def _connection(self) -> pg_connection.Connection:
        """The connection of this thread's transaction (the projections run on it)."""
        txn = self._txn
        if txn is None:
            raise RuntimeError("no transaction in progress")
        return txn.conn

    def _reading(self) -> contextlib.AbstractContextManager[None]:
        """A read of several statements: one transaction, one connection."""
        return self.transaction()

    @property
    def in_transaction(self) -> bool:
        return self._txn is not None

    def transaction(self, *, write: bool = False) -> contextlib.AbstractContextManager[None]:
        """Run the block in one transaction; writes take the space's lock up front. Nests."""
        return self._transaction(self._begin_write if write else self._begin_read, write)

    def _reading_all(self) -> contextlib.AbstractContextManager[None]:
        """A read-only transaction that sees every space (for verify --all-spaces)."""
        if self._txn is not None:
            raise RuntimeError("an all-spaces read cannot nest in another transaction")
        return self._transaction(self._begin_all, False)

    @contextlib.contextmanager
    def _transaction(self, begin: str, write: bool) -> Iterator[None]:
        txn = self._txn
        if txn is not None:
            if write and not txn.writing:
                raise RuntimeError("a write cannot start inside a read transaction")
            txn.depth += 1
            try:
                yield
            finally:
                txn.depth -= 1
            return
        if write and self.read_only:
            raise self._read_only_error()
        raw = self._guard(lambda: self._begin(begin))
        txn = _Txn(raw)
        try:
            txn.depth, txn.writing = 1, write
            self._local.txn = txn
            try:
                yield
            except BaseException as exc:
                with contextlib.suppress(Exception):
                    raw.execute("ROLLBACK")
                if isinstance(exc, self._psycopg.Error):  # one a statement raised unguarded
                    failed = exc
                    self._guard(lambda: _raise(failed))  # the ClewError a guarded one gets
                raise
            else:
                self._guard(lambda: raw.execute("COMMIT"))
        finally:
            self._local.txn = None
            self._pool.putconn(raw)

    def _begin(self, begin: str) -> psycopg.Connection[Any]:
        """A pooled connection with `begin` run on it. A connection the server dropped (a
        restart, an idle timeout) is discarded and another tried: nothing had run on it."""
        for _ in range(self._pool.max_size):
            raw: psycopg.Connection[Any] = self._pool.getconn()
            try:
                raw.execute(begin)
            except self._psycopg.OperationalError:
                dropped = raw.broken
                self._pool.putconn(raw)  # the pool discards a broken one
                if dropped:
                    continue
                raise
            return raw
        raw = self._pool.getconn()  # the last try: its error is the one to report
        try:
            raw.execute(begin)
        except BaseException:
            self._pool.putconn(raw)
            raise
        return raw

    @property
    def graph_checkpoints(self) -> CheckpointStore:
        """`Journal.graph_checkpoints`: store/postgres/graph_checkpoints.py, made on first use."""
        if self._graph_checkpoints is None:
            from clew.store.postgres.graph_checkpoints import PgGraphCheckpoints

            self._graph_checkpoints = PgGraphCheckpoints(self)
        return self._graph_checkpoints

    @contextlib.contextmanager
    def savepoint(self) -> Iterator[None]:
        """`Journal.savepoint`: PostgreSQL's SAVEPOINT, and the transaction's head and
        bookkeeping put back as they were when it is rolled back to."""
        _, txn = self._writer()
        raw = txn.raw
        txn.savepoints += 1
        name = f"clew_{txn.savepoints}"
        try:
            self._guard(lambda: raw.execute(f"SAVEPOINT {name}"))
            head, touched = txn.head, set(txn.touched)
            try:
                yield
            except BaseException as exc:
                with contextlib.suppress(Exception):  # a lost connection: the outer block fails
                    raw.execute(f"ROLLBACK TO SAVEPOINT {name}")
                    raw.execute(f"RELEASE SAVEPOINT {name}")
                txn.head, txn.touched = head, touched
                if isinstance(exc, self._psycopg.Error):  # one a statement raised unguarded
                    failed = exc
                    self._guard(lambda: _raise(failed))  # the ClewError a guarded one gets
                raise
            self._guard(lambda: raw.execute(f"RELEASE SAVEPOINT {name}"))
        finally:
            txn.savepoints -= 1

    @contextlib.contextmanager
    def bulk_turns(self) -> Iterator[None]:
        """`Journal.bulk_turns`: nothing to put off here (a turn's tsvector is a generated
        column, made with its row)."""
        self._writer()  # inside a write transaction, as on every backend
        yield

    def _writer(self) -> tuple[pg_connection.Connection, _Txn]:
        txn = self._txn
        if txn is None or not txn.writing:
            raise RuntimeError("journal writes must run inside transaction(write=True)")
        return txn.conn, txn

    def _user_name(self, conn: Any) -> str | None:
        """Who a write connection writes as, for the record of imports (portable/imports.py):
        the database role this store writes as (the server's own
        word for who wrote, whatever the client says)."""
        return str(conn.execute("SELECT current_user").fetchone()[0])

    def close(self) -> None:
        """Close the pool and its connections."""
        self._pool.close()

    # -- lookups --------------------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        if self._txn is not None:
            conn = self._connection()
            rows: list[Row] = self._guard(lambda: conn.execute(sql, params).fetchall())
            return rows
        found: list[Row] = self._guard(lambda: self._read_alone(sql, params))
        return found

    def _tuples(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """A read's rows as plain tuples (psycopg's rows are tuples of a class of its own)."""
        return [tuple(row) for row in self._rows(sql, params)]

    def _read_alone(self, sql: str, params: Sequence[Any]) -> list[Row]:
        """One read in a transaction of its own, sent as one pipeline (BEGIN, the space, the
        query, COMMIT): one round trip instead of three. A connection the server dropped is
        replaced (a read is safe to send again)."""
        for attempt in range(self._pool.max_size + 1):
            raw: psycopg.Connection[Any] = self._pool.getconn()
            try:
                with raw.pipeline():
                    raw.execute("BEGIN")
                    raw.execute("SELECT set_config('clew.space', %s, true)", (self.space,))
                    cursor = pg_connection.Connection(raw).cursor()
                    cursor.execute(sql, params)
                    raw.execute("COMMIT")
                return cursor.fetchall() if cursor.description is not None else []
            except self._psycopg.OperationalError:
                if not raw.broken or attempt == self._pool.max_size:
                    raise
            finally:
                self._pool.putconn(raw)  # a broken one is discarded; a failed read rolled back
        raise AssertionError("unreachable")

    def resolve(self, kind: str, ident: str, hint: str = "") -> str:
        """Return the full id of the `kind` record whose id is `ident` or starts with it."""
        table = KIND_TABLES[kind]
        key = ident.strip().lower()
        if not is_id_prefix(key):
            raise NotFoundError(kind, ident, hint)
        # Ids use only [0-9a-z] and text compares bytewise (COLLATE "C"): '~' sorts after
        # them all, so one range scan of the (space, id) key finds the match and candidates.
        rows = self._rows(
            f"SELECT id FROM {table} WHERE space = $1 AND id >= $2 AND id < $3"
            " ORDER BY id LIMIT 51",
            (self.space, key, key + "~"),
        )
        if not rows:
            raise NotFoundError(kind, ident, hint)
        if len(rows) > 1 and rows[0]["id"] != key:
            raise AmbiguousIdError(kind, ident, [r["id"] for r in rows])
        return str(rows[0]["id"])

    # -- database roles (store/postgres/roles.py) ------------------------------------------------

    def grant_role(self, role: str, kind: str | None, *, apply: bool) -> list[str]:
        """Give `role` exactly what `kind` may do to every table of clew's (None: nothing),
        in one transaction of a pooled connection; return the statements."""
        if apply and self.read_only:
            raise self._read_only_error()

        def run() -> list[str]:
            with self._pool.connection() as raw:
                return pg_roles.grant(raw, role, kind, apply=apply, lock=MIGRATION_LOCK)

        made: list[str] = self._guard(run)
        return made

    def database_roles(self) -> list[DatabaseRole]:
        """Every role that can reach clew's tables, with the kind its rights match."""

        def run() -> list[DatabaseRole]:
            with self._pool.connection() as raw:
                return pg_roles.held_roles(raw)

        found: list[DatabaseRole] = self._guard(run)
        return found

    def purge(self) -> str | None:
        """`Journal.purge`: PostgreSQL keeps an updated row's old version in the table's
        files until VACUUM reclaims it (which does not clear it), and in its write-ahead log;
        neither is clew's to clear."""
        return (
            "PostgreSQL keeps the rows' old versions in its files until `VACUUM FULL` rewrites"
            " the tables (events and those the forget changed), and in its write-ahead log"
            " and backups"
        )


def migrate(raw: psycopg.Connection[Any]) -> None:
    """Apply every migration not yet recorded, each in its own transaction, one migrator at
    a time."""
    for migration in pg_migrations.MIGRATIONS:
        raw.execute("BEGIN")
        try:
            raw.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            raw.execute(
                "CREATE TABLE IF NOT EXISTS clew_migrations (number bigint PRIMARY KEY,"
                ' name text COLLATE "C" NOT NULL, applied_at text COLLATE "C" NOT NULL,'
                ' fingerprint text COLLATE "C")'
            )
            done = raw.execute(
                "SELECT 1 FROM clew_migrations WHERE number = %s", (migration.number,)
            ).fetchone()
            if done is not None:  # another process applied it while we waited
                raw.execute("COMMIT")
                continue
            for step in migration.statements:
                if isinstance(step, pg_migrations.PgRun):
                    step.fn(raw)
                else:
                    raw.execute((collated(step) if isinstance(step, str) else step.sql).encode())
            raw.execute(
                "INSERT INTO clew_migrations (number, name, applied_at, fingerprint)"
                " VALUES (%s, %s, to_char(clock_timestamp() AT TIME ZONE 'UTC',"
                ' \'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\'), %s)',
                (migration.number, migration.name, pg_migrations.FINGERPRINTS[migration.number]),
            )
            raw.execute("COMMIT")
        except BaseException:
            raw.execute("ROLLBACK")
            raise


def _raise(exc: BaseException) -> None:
    raise exc


def _seconds(timeout: float) -> int:
    """libpq's connect_timeout: whole seconds, at least 2 (it treats 1 as 2 and 0 as never)."""
    return max(2, int(timeout + 0.999))


def _why(exc: BaseException, url: str = "") -> str:
    """The first line of a driver error, with the URL's password (if it shows) hidden."""
    text = str(exc).strip().split("\n", 1)[0] or type(exc).__name__
    password = _password(url)
    return text.replace(password, "***") if password else text


def _password(url: str) -> str | None:
    from urllib.parse import unquote, urlsplit

    try:
        found = urlsplit(url).password
    except ValueError:
        return None
    return unquote(found) if found else None
