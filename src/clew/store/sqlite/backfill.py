"""Backfill of the sequence columns that migration 10 adds to a store made before it.

A row's `seq` is the journal seq of the event that created it (and an entry source's
`position` its place in the entry's list), which the projection writes from the event. A
row made before migration 10 gets the value a replay of the journal gives it: the journal
is replayed into a scratch database and the values copied over by row id, so `verify`
(which replays the same way) finds them exact.
"""

from __future__ import annotations

import os
import sqlite3

from clew.store.projection.frozen_error_lines import OUTPUT_HEAD, OUTPUT_TAIL, error_lines

# The tables with a sequence column, and that column.
SEQUENCED: tuple[tuple[str, str], ...] = (
    ("actions", "seq"),
    ("action_logs", "seq"),
    ("task_messages", "seq"),
    ("sessions", "seq"),
    ("fixes", "seq"),
    ("jobs", "seq"),
    ("task_summaries", "seq"),
    ("model_calls", "seq"),
    ("trace_decisions", "seq"),
    ("trace_validations", "seq"),
    ("patterns", "seq"),
    ("guardrails", "seq"),
    ("entry_sources", "position"),
)


def backfill_sequence(conn: sqlite3.Connection) -> None:
    """Replay the journal into a scratch store and copy each row's seq (and each entry
    source's position) from it by id; a row the replay does not make keeps 0."""
    if conn.execute("SELECT 1 FROM events LIMIT 1").fetchone() is None:
        return  # a new store: nothing to backfill
    # Imported here: neither is needed to open a store that is up to date.
    import tempfile

    from clew.store.sqlite.file import connect, migrate

    with tempfile.TemporaryDirectory(prefix="clew-migrate-") as scratch_dir:
        scratch = connect(os.path.join(scratch_dir, "replay.db"))
        try:
            scratch.execute("PRAGMA synchronous = OFF")
            migrate(scratch)
            _replay(conn, scratch)
            for table, column in SEQUENCED:
                rows = scratch.execute(f"SELECT {column}, id FROM {table}").fetchall()
                conn.executemany(f"UPDATE {table} SET {column} = ? WHERE id = ?", rows)
        finally:
            scratch.close()


def _replay(conn: sqlite3.Connection, scratch: sqlite3.Connection) -> None:
    """Apply every event in seq order; one that cannot be applied is undone and skipped
    (verify reports it; its rows keep 0 here)."""
    from clew.core import codec
    from clew.models import Event
    from clew.store import projection
    from clew.store.sqlite.connection import SQLiteConnection

    rows = conn.execute(
        "SELECT seq, id, space, task_id, correlation_id, type, data, created_at, hash"
        " FROM events ORDER BY seq"
    )
    scratch.execute("BEGIN")
    replay = SQLiteConnection(scratch)  # as the projections take it
    for seq, event_id, space, task_id, correlation_id, type_, data, created_at, digest in rows:
        scratch.execute("SAVEPOINT event")
        try:
            event = Event(
                seq,
                event_id,
                space,
                task_id,
                correlation_id,
                type_,
                codec.loads(data),
                created_at,
                digest,
            )
            projection.apply(replay, event)
        except (ValueError, KeyError, TypeError, AttributeError, sqlite3.Error):
            scratch.execute("ROLLBACK TO event")
        scratch.execute("RELEASE event")
    scratch.execute("COMMIT")


def backfill_error_lines(conn: sqlite3.Connection) -> None:
    """Compute the error lines of the middle of each long command output written before
    migration 14, as the projection computes them for the ones written after."""
    whole = OUTPUT_HEAD + OUTPUT_TAIL
    ids = conn.execute(
        f"SELECT id FROM actions WHERE length(stdout) > {whole} OR length(stderr) > {whole}"
    ).fetchall()
    for (action_id,) in ids:  # one output in memory at a time: each may be megabytes
        # As bytes: a command's output that is not UTF-8 may sit in a text column as it came.
        stdout, stderr = conn.execute(
            "SELECT CAST(stdout AS BLOB), CAST(stderr AS BLOB) FROM actions WHERE id = ?",
            (action_id,),
        ).fetchone()
        found = (error_lines(stdout), error_lines(stderr))
        if found != (None, None):
            conn.execute(
                "UPDATE actions SET stdout_errors = ?, stderr_errors = ? WHERE id = ?",
                (*found, action_id),
            )
