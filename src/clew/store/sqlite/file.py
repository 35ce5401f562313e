"""The SQLite file itself: opened (created private, or read-only), recognised as a clew store
or refused, and migrated. Below the store class (sqlite/store.py) and below verify's replay
(sqlite/verify.py), which opens a scratch file the same way, so neither imports the other.
"""

from __future__ import annotations

import os
import sqlite3

from clew.errors import StoreBusyError, StoreError
from clew.store.migrations import FINGERPRINTED_FROM, FINGERPRINTS, LATEST, MIGRATIONS


def is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def is_read_only(exc: sqlite3.Error) -> bool:
    return "readonly" in str(exc).lower()  # SQLITE_READONLY: "attempt to write a readonly ..."


SQLITE_HEADER = b"SQLite format 3\x00"


def is_damaged(exc: BaseException, path: str | None = None) -> bool:
    """Whether SQLite's error says the file is damaged: a page that does not parse
    (SQLITE_CORRUPT), or a file that starts as SQLite's do yet is not one (SQLITE_NOTADB
    of a file with SQLite's header; without that header it is someone else's file)."""
    code = getattr(exc, "sqlite_errorcode", None)
    text = str(exc).lower()
    corrupt = code & 0xFF == 11 if isinstance(code, int) else "malformed" in text
    not_a_database = code & 0xFF == 26 if isinstance(code, int) else "not a database" in text
    if corrupt:
        return True
    if not_a_database and path is not None and os.path.isfile(path):
        with open(path, "rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    return False


def damaged(path: str, exc: BaseException) -> StoreError:
    """The one line for a damaged store file: what SQLite said, and what to do."""
    return StoreError(
        f"the store {path} is damaged (SQLite: {exc}); restore it from a backup (or from a"
        " journal file `clew export` made), or save what can still be read with sqlite3's"
        " .recover"
    )


def busy_opening(path: str, busy_timeout: float) -> StoreBusyError:
    return StoreBusyError(
        f"the store {path} is busy: another process holds it locked (a long write, or"
        " SQLite's exclusive locking mode, which keeps the lock until that process closes"
        f" the file) longer than the busy timeout ({busy_timeout:g} s); try again once it"
        " is done, or wait longer with --busy-timeout SECONDS ($CLEW_BUSY_TIMEOUT;"
        " busy_timeout= in Python)"
    )


READ_ONLY_MOUNT = "it is on a read-only file system"
# A value the facade did not check that holds lone surrogates (bytes a command line could
# not decode): the driver cannot encode it, so it never reaches the store.


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
        # A folder made for a store is its owner's alone (the store holds what agents saw,
        # and the server's key hashes): a folder that exists keeps its own permissions.
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise StoreError(
            f"cannot make the folder {folder} for the store: a file is in the way"
        ) from None
    except OSError as exc:
        raise StoreError(f"cannot make the folder {folder} for the store: {exc.strerror}") from None
    if not os.path.exists(path) and not os.access(folder, os.W_OK):
        raise StoreError(f"cannot create the store {path}: this user may not write {folder}")


def _create_private(path: str) -> None:
    """Make a new store file readable by its owner alone (SQLite gives its -wal and -shm
    files the database file's permissions); a file that exists is left as it is."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    except OSError as exc:
        raise StoreError(f"cannot create the store {path}: {exc.strerror or exc}") from None


def connect(path: str, busy_timeout: float = 5.0, *, read_only: bool = False) -> sqlite3.Connection:
    """Open `path` with clew's connection settings: autocommit driver, foreign keys, busy
    timeout. The file itself is not changed: `migrate` checks it is a clew store first.
    `read_only` opens it with SQLite's `mode=ro`, which never writes the file."""
    if os.path.exists(path) and not os.path.isfile(path) and not os.path.isdir(path):
        # A device or FIFO (/dev/null, /dev/zero): SQLite would fail half-way through opening.
        raise StoreError(f"{path} is not a clew store: it is not a regular file")
    if path != ":memory:" and not read_only:
        make_folder(path)
        _create_private(path)
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
        if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
            raise busy_opening(path, busy_timeout) from None
        if is_damaged(exc, path):
            raise damaged(path, exc) from None
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
        if is_busy(exc):
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
        if is_busy(exc):
            raise
        if "no such table" not in str(exc):
            raise _foreign_or_damaged(conn, exc) from None
    except sqlite3.DatabaseError as exc:
        raise _foreign_or_damaged(conn, exc) from None
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "clew_migrations" in names:  # another process created the schema a moment ago
        return int(conn.execute(version).fetchone()[0] or 0)
    if names:
        raise StoreError("this SQLite file is not a clew store (it has other tables)")
    return 0


def _foreign_or_damaged(conn: sqlite3.Connection, exc: sqlite3.Error) -> StoreError:
    try:
        path = str(conn.execute("PRAGMA database_list").fetchone()[2])
    except sqlite3.Error:
        path = ""
    if is_damaged(exc, path or None):
        return damaged(path or "file", exc)
    return StoreError(f"this file is not a clew store ({exc})")


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
    from clew.core import meter  # here: a store that is up to date (the hook path's) needs none

    pending = [m for m in MIGRATIONS if m.number > applied]
    for done, migration in enumerate(pending):
        meter.report(f"upgrading the store: {migration.name}", done, len(pending))
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have migrated while we waited for the lock.
            if schema_version(conn) < migration.number:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS clew_migrations (number INTEGER PRIMARY KEY,"
                    " name TEXT NOT NULL, applied_at TEXT NOT NULL, fingerprint TEXT)"
                )
                if applied and applied < FINGERPRINTED_FROM:
                    _fingerprint_column(conn)
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


def _fingerprint_column(conn: sqlite3.Connection) -> None:
    """Give a store made before fingerprints (schemas 1-5) the column that records them,
    before the first migration it is missing is recorded (migration 6 fills in the older
    ones' after checking their schema)."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(clew_migrations)")}
    if "fingerprint" not in columns:
        conn.execute("ALTER TABLE clew_migrations ADD COLUMN fingerprint TEXT")
