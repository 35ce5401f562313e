"""Taking a store back to an older schema, to test what opening it with this clew does."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from clew.core import chain
from clew.models import Event
from clew.store import projection
from clew.store.migrations import (
    FINGERPRINTED_FROM,
    FINGERPRINTS,
    MIGRATIONS,
    OUTLINE_COLUMNS,
    _keep,
    record_text,
)
from clew.store.sqlite.backfill import SEQUENCED
from clew.store.sqlite.connection import SQLiteConnection

# The indexes migration 10 remade with the sequence column, as migrations 1-9 made them.
_INDEXES_BEFORE_10 = (
    ("actions_task", "actions(task_id, created_at)"),
    ("actions_command", "actions(space, command, created_at)"),
    ("action_logs_action", "action_logs(action_id, created_at)"),
    ("task_messages_task", "task_messages(task_id, created_at)"),
    ("fixes_fingerprint", "fixes(fingerprint, created_at)"),
    ("task_summaries_task", "task_summaries(task_id, created_at)"),
    ("model_calls_task", "model_calls(task_id, created_at)"),
    ("trace_decisions_task", "trace_decisions(task_id, created_at)"),
    ("jobs_pending", "jobs(space, status, created_at)"),
    ("sessions_workspace", "sessions(space, workspace, last_active_at)"),
    ("entry_sources_entry", "entry_sources(entry_id)"),
)


def _applied(conn: sqlite3.Connection, number: int) -> bool:
    return (
        conn.execute("SELECT 1 FROM clew_migrations WHERE number = ?", (number,)).fetchone()
        is not None
    )


def undo_migration_26(conn: sqlite3.Connection) -> None:
    """Take a store at schema 26 back to the one before: no search documents of task names,
    goals, steps, answers, patterns or guardrails (search read their rows)."""
    for table in OUTLINE_COLUMNS:
        for event in ("insert", "update", "delete"):
            conn.execute(f"DROP TRIGGER IF EXISTS outline_{table}_{event}")
    conn.execute("DROP TABLE IF EXISTS outline_fts")
    conn.execute("DROP TABLE IF EXISTS outline_docs")
    conn.execute("DELETE FROM clew_migrations WHERE number = 26")
    conn.commit()


def undo_migration_25(conn: sqlite3.Connection) -> None:
    """Take a store at schema 25 (or later) back to the one before: entries without who
    recorded them, errors neither kept open nor with evidence."""
    if _applied(conn, 26):
        undo_migration_26(conn)
    for column in ("origin", "keep_open", "evidence"):
        conn.execute(f"ALTER TABLE entries DROP COLUMN {column}")
    conn.execute("DELETE FROM clew_migrations WHERE number = 25")
    conn.commit()


def undo_migration_24(conn: sqlite3.Connection) -> None:
    """Take a store at schema 24 (or later) back to the one before: request log lines
    without ids."""
    if _applied(conn, 25):
        undo_migration_25(conn)
    conn.execute("DROP INDEX IF EXISTS clew_requests_line")
    conn.execute("ALTER TABLE clew_requests DROP COLUMN line_id")
    conn.execute("DELETE FROM clew_migrations WHERE number = 24")
    conn.commit()


def undo_migration_23(conn: sqlite3.Connection) -> None:
    """Take a store at schema 23 (or later) back to the one before: nothing but its record
    (a SQLite file has no roles; PostgreSQL's migration 23 is tested in test_db_roles.py)."""
    if _applied(conn, 24):
        undo_migration_24(conn)
    conn.execute("DELETE FROM clew_migrations WHERE number = 23")
    conn.commit()


def undo_migration_22(conn: sqlite3.Connection) -> None:
    """Take a store at schema 22 (or later) back to the one before: no redactions table."""
    if _applied(conn, 23):
        undo_migration_23(conn)
    conn.execute("DROP TABLE IF EXISTS redactions")
    conn.execute("DELETE FROM clew_migrations WHERE number = 22")
    conn.commit()


def undo_migration_21(conn: sqlite3.Connection) -> None:
    """Take a store at schema 21 (or later) back to 20: no tombstones, every
    event chained with version 1 of the hash again, the journal's guard refusing every
    update, no update triggers of message and decision search documents."""
    from clew.core import chain

    if _applied(conn, 22):
        undo_migration_22(conn)
    if conn.execute("SELECT 1 FROM events WHERE forgotten IS NOT NULL").fetchone():
        raise ValueError("a store that forgot something cannot go back to version 1")
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("DROP TRIGGER records_message_update")
    conn.execute("DROP TRIGGER records_decision_update")
    conn.execute("ALTER TABLE events DROP COLUMN forgotten")
    rows = conn.execute(
        "SELECT seq, id, space, task_id, correlation_id, type, data, created_at, hash"
        " FROM events ORDER BY seq"
    ).fetchall()
    links = [chain.Link(*row) for row in rows]
    conn.executemany(
        "UPDATE events SET hash = ? WHERE seq = ?", [(h, q) for q, h in chain.chained_v1(links)]
    )
    conn.execute(MIGRATIONS[5].statements[-2])  # migration 6's guard: no update at all
    conn.execute("DELETE FROM clew_migrations WHERE number = 21")
    conn.commit()


def undo_migration_20(conn: sqlite3.Connection) -> None:
    """Take a store at schema 20 (or later) back to 19: waits without seal or folder, no
    record of imports."""
    if _applied(conn, 21):
        undo_migration_21(conn)
    conn.execute("ALTER TABLE waits DROP COLUMN seal")
    conn.execute("ALTER TABLE waits DROP COLUMN confined_to")
    conn.execute("DROP TABLE IF EXISTS clew_imports")
    conn.execute("DELETE FROM clew_migrations WHERE number = 20")
    conn.commit()


def undo_migration_19(conn: sqlite3.Connection) -> None:
    """Take a store at schema 19 (or later) back to 18: events by correlation id and
    sessions by workspace indexed again."""
    if _applied(conn, 20):
        undo_migration_20(conn)
    conn.execute("CREATE INDEX IF NOT EXISTS events_correlation ON events(correlation_id)")
    conn.execute(
        "CREATE INDEX IF NOT EXISTS sessions_workspace"
        " ON sessions(space, workspace, last_active_at, seq)"
    )
    conn.execute("DELETE FROM clew_migrations WHERE number = 19")
    conn.commit()


def undo_migration_18(conn: sqlite3.Connection) -> None:
    """Take a store at schema 18 (or 19) back to 17: no LangGraph checkpoint tables."""
    if _applied(conn, 19):
        undo_migration_19(conn)
    for table in ("langgraph_writes", "langgraph_blobs", "langgraph_checkpoints"):
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    conn.execute("DELETE FROM clew_migrations WHERE number = 18")
    conn.commit()


def undo_migration_17(conn: sqlite3.Connection) -> None:
    """Take a store at schema 17 (or 18) back to 16: no server keys, no request log."""
    if _applied(conn, 18):
        undo_migration_18(conn)
    conn.execute("DROP TABLE IF EXISTS clew_requests")
    conn.execute("DROP TABLE IF EXISTS clew_keys")
    conn.execute("DELETE FROM clew_migrations WHERE number = 17")
    conn.commit()


def undo_migration_16(conn: sqlite3.Connection) -> None:
    """Take a store at schema 16 (or 17) back to 15: no index of open wait actions."""
    if _applied(conn, 17):
        undo_migration_17(conn)
    conn.execute("DROP INDEX IF EXISTS actions_open_wait")
    conn.execute("DELETE FROM clew_migrations WHERE number = 16")
    conn.commit()


def undo_migration_15(conn: sqlite3.Connection) -> None:
    """Take a store at schema 15 (or 16) back to 14: `turns` a table holding each turn's
    text (as migration 5 made it, kept in the search index by triggers); no turn_rows, no
    view."""
    if _applied(conn, 16):
        undo_migration_16(conn)
    conn.execute(
        "CREATE TEMP TABLE turns_14 AS SELECT seq, id, space, session_id, turn, role, content,"
        " text_content, tool_calls, tool_call_id, tool_name, call_turn, message, token_count,"
        " hidden, created_at FROM turns"
    )
    conn.execute("DROP VIEW turns")
    conn.execute("DROP TABLE turn_rows")
    made = MIGRATIONS[4].statements  # migration 5: the table, its indexes, the search index
    for statement in made[3:6]:
        conn.execute(str(statement))
    # The search index keeps its rows (by seq, the same text): only its triggers come back.
    conn.execute("INSERT INTO turns SELECT * FROM temp.turns_14 ORDER BY seq")
    conn.execute("DROP TABLE temp.turns_14")
    for statement in made[7:9]:
        conn.execute(str(statement))
    conn.execute("CREATE INDEX turns_time ON turns(space, created_at)")
    conn.execute("DELETE FROM clew_migrations WHERE number = 15")
    conn.commit()


def undo_migration_14(conn: sqlite3.Connection) -> None:
    """Take a store at schema 14 (or 15) back to 13: a command output is indexed by its head
    and tail alone, by the triggers of migration 7; no columns of error lines."""
    if _applied(conn, 15):
        undo_migration_15(conn)
    conn.execute(
        "INSERT INTO records_fts (records_fts, rowid, title, body, stderr)"
        " SELECT 'delete', seq, title, body, stderr FROM record_docs WHERE kind = 'action'"
    )
    for trigger in ("insert", "delete", "update"):
        conn.execute(f"DROP TRIGGER records_action_{trigger}")
    conn.execute("ALTER TABLE actions DROP COLUMN stdout_errors")
    conn.execute("ALTER TABLE actions DROP COLUMN stderr_errors")
    for statement in _keep("action", "actions", "summary, command, stdout, stderr"):
        conn.execute(statement)
    title, body, stderr = record_text("action", "a.")
    conn.execute(
        f"UPDATE record_docs SET (title, body, stderr) = (SELECT {title}, {body}, {stderr}"
        " FROM actions a WHERE a.id = record_docs.ref_id) WHERE kind = 'action'"
    )
    conn.execute(
        "INSERT INTO records_fts (rowid, title, body, stderr)"
        " SELECT seq, title, body, stderr FROM record_docs WHERE kind = 'action'"
    )
    conn.execute("DELETE FROM clew_migrations WHERE number = 14")
    conn.commit()


def undo_migration_13(conn: sqlite3.Connection) -> None:
    """Take a store at schema 13 (or 14) back to 12: no index of turns by time."""
    if _applied(conn, 14):
        undo_migration_14(conn)
    conn.execute("DROP INDEX IF EXISTS turns_time")
    conn.execute("DELETE FROM clew_migrations WHERE number = 13")
    conn.commit()


def undo_migration_11(conn: sqlite3.Connection) -> None:
    """Take a store at schema 11 (or later) back to 10: no vector index (its rows were
    derived); the migrations after it are undone first."""
    if _applied(conn, 12):
        undo_migration_12(conn)
    conn.execute("DROP TABLE IF EXISTS embeddings")
    conn.execute("DELETE FROM sqlite_sequence WHERE name = 'embeddings'")
    conn.execute("DELETE FROM clew_migrations WHERE number = 11")
    conn.commit()


def undo_migration_10(conn: sqlite3.Connection) -> None:
    """Take a store at schema 10, 11 or 12 back to 9: no sequence columns, no output kinds;
    command output keeps the storage class (TEXT or BLOB) that said its kind before.
    Migrations after 10 are undone first (the schema version is the highest one applied)."""
    undo_migration_11(conn)
    for index, on in _INDEXES_BEFORE_10:
        conn.execute(f"DROP INDEX {index}")
        conn.execute(f"CREATE INDEX {index} ON {on}")
    for table, column in SEQUENCED:
        conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    conn.execute("ALTER TABLE actions DROP COLUMN stdout_kind")
    conn.execute("ALTER TABLE actions DROP COLUMN stderr_kind")
    conn.execute("DELETE FROM clew_migrations WHERE number = 10")
    conn.commit()


def undo_migration_12(conn: sqlite3.Connection) -> None:
    """Take a store at schema 12 back to 11: trace decisions have no search documents and
    no triggers that make them (migration 13 undone first)."""
    if _applied(conn, 13):
        undo_migration_13(conn)
    conn.execute("DROP TRIGGER records_decision_insert")
    conn.execute("DROP TRIGGER records_decision_delete")
    conn.execute(
        "INSERT INTO records_fts (records_fts, rowid, title, body, stderr)"
        " SELECT 'delete', seq, title, body, stderr FROM record_docs WHERE kind = 'decision'"
    )
    conn.execute("DELETE FROM record_docs WHERE kind = 'decision'")
    conn.execute("DELETE FROM clew_migrations WHERE number = 12")
    conn.commit()


# -- a store of any older schema ---------------------------------------------------------------


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def store_at(path: Path, number: int, events: Sequence[chain.Link] = ()) -> None:
    """A store as clew's schema `number` made it: migrations 1 to `number` applied by their
    own steps, recorded as that release recorded them (no fingerprints before migration 6),
    holding `events` (as that release wrote them: see `as_released`) and the rows today's
    projection makes of them, in the tables and columns that schema had (what today's
    projection writes beyond them goes to scratch copies that leave with the connection)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    fingerprints = number >= FINGERPRINTED_FROM
    conn.execute(
        "CREATE TABLE clew_migrations (number INTEGER PRIMARY KEY, name TEXT NOT NULL,"
        " applied_at TEXT NOT NULL" + (", fingerprint TEXT)" if fingerprints else ")")
    )
    for migration in MIGRATIONS[:number]:
        conn.execute("BEGIN")
        for step in migration.statements:
            if isinstance(step, str):
                conn.execute(step)
            else:
                step.fn(conn)
        row = (migration.number, migration.name, "then")
        if fingerprints:
            conn.execute("INSERT INTO clew_migrations VALUES (?, ?, ?, ?)",
                         (*row, FINGERPRINTS[migration.number]))  # fmt: skip
        else:
            conn.execute("INSERT INTO clew_migrations VALUES (?, ?, ?)", row)
        conn.execute("COMMIT")
    if events:
        _project(conn, number, events)
    conn.close()


def _project(conn: sqlite3.Connection, number: int, events: Sequence[chain.Link]) -> None:
    """Write `events` and today's projection of them into a schema-`number` store."""
    from clew.store.sqlite.store import connect, migrate

    today = connect(":memory:")
    migrate(today)
    conn.execute("BEGIN")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    added: list[tuple[str, str]] = []
    for (table,) in today.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        if table.startswith(("sqlite_", "clew_")) or "_fts" in table:
            continue
        if table not in tables:  # a table of a later schema: a scratch copy takes its rows
            conn.execute(f"CREATE TEMP TABLE {table} ({', '.join(_columns(today, table))})")
            continue
        old = _columns(conn, table)
        for column in _columns(today, table):
            if column not in old and (table, column) != ("events", "hash"):
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
                added.append((table, column))
    today.close()
    hashed = "hash" in _columns(conn, "events")
    links = list(events)
    if hashed:
        hashes = [h for _, h in chain.chained(links)]
        links = [link._replace(hash=h) for link, h in zip(links, hashes, strict=True)]
    for link in links:
        values = (link.seq, link.id, link.space, link.task_id, link.correlation_id, link.type,
                  link.data, link.created_at)  # fmt: skip
        if hashed:
            conn.execute("INSERT INTO events (seq, id, space, task_id, correlation_id, type,"
                         " data, created_at, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         (*values, link.hash))  # fmt: skip
        else:
            conn.execute("INSERT INTO events (seq, id, space, task_id, correlation_id, type,"
                         " data, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", values)  # fmt: skip
        event = Event(link.seq, link.id, link.space, link.task_id, link.correlation_id,
                      link.type, json.loads(link.data), link.created_at, link.hash)  # fmt: skip
        projection.apply(SQLiteConnection(conn), event)
    for table, column in added:
        conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    conn.execute("COMMIT")


def as_released(links: Sequence[chain.Link], number: int) -> list[chain.Link]:
    """Events as the release of schema `number` wrote them: no jobs before the outbox
    (migration 4); before the task record (migration 9) a created task carried no `record`;
    no hashes (the maker chains them)."""
    out = []
    for link in links:
        if link.type.startswith("job.") and number < 4:
            continue  # no job outbox yet
        if link.type == "task.created" and number < 9:
            data = json.loads(link.data)
            data.pop("record", None)
            link = link._replace(data=json.dumps(data))
        out.append(link._replace(hash=None))
    return out
