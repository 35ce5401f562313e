"""Numbered schema migrations, each applied in one transaction and recorded in a table.

A migration is a list of SQL statements. Never edit one that has shipped: add the
next number. Every table carries `space`, the namespace a row belongs to.

The journal (`events`) is the truth; the other tables named in PROJECTION_TABLES
are projections of it that `verify` rebuilds and compares.
"""

from __future__ import annotations

from typing import NamedTuple


class Migration(NamedTuple):
    number: int
    name: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "journal and task tracker",
        (
            """
            CREATE TABLE events (
                seq            INTEGER PRIMARY KEY,
                id             TEXT NOT NULL UNIQUE,
                space          TEXT NOT NULL,
                task_id        TEXT,
                correlation_id TEXT NOT NULL,
                type           TEXT NOT NULL,
                data           TEXT NOT NULL,
                created_at     TEXT NOT NULL
            )
            """,
            "CREATE INDEX events_task ON events(task_id, seq)",
            "CREATE INDEX events_correlation ON events(correlation_id)",
            "CREATE INDEX events_type ON events(type)",
            """
            CREATE TABLE tasks (
                id                TEXT PRIMARY KEY,
                space             TEXT NOT NULL,
                name              TEXT NOT NULL,
                goal              TEXT,
                workspace         TEXT,
                status            TEXT NOT NULL,
                archived          INTEGER NOT NULL DEFAULT 0,
                metadata          TEXT NOT NULL DEFAULT '{}',
                plan_version      INTEGER NOT NULL DEFAULT 1,
                last_replanned_at TEXT,
                created_at        TEXT NOT NULL,
                updated_at        TEXT NOT NULL,
                completed_at      TEXT
            )
            """,
            "CREATE INDEX tasks_space_status ON tasks(space, status, updated_at)",
            """
            CREATE TABLE plan_items (
                id               TEXT PRIMARY KEY,
                space            TEXT NOT NULL,
                task_id          TEXT NOT NULL REFERENCES tasks(id),
                ordinal          INTEGER,
                title            TEXT NOT NULL,
                status           TEXT NOT NULL DEFAULT 'pending',
                started_at       TEXT,
                completed_at     TEXT,
                duration_seconds REAL,
                summary          TEXT,
                active_issue     TEXT,
                depends_on       TEXT NOT NULL DEFAULT '[]',
                removed          INTEGER NOT NULL DEFAULT 0,
                created_at       TEXT NOT NULL,
                updated_at       TEXT NOT NULL
            )
            """,
            # Every task read fetches its plan in order: this index serves it.
            "CREATE INDEX plan_items_task ON plan_items(task_id, removed, ordinal)",
            # Removed steps keep their row (and their actions) with ordinal NULL.
            """
            CREATE UNIQUE INDEX plan_items_position ON plan_items(task_id, ordinal)
            WHERE ordinal IS NOT NULL
            """,
            """
            CREATE TABLE actions (
                id               TEXT PRIMARY KEY,
                space            TEXT NOT NULL,
                task_id          TEXT NOT NULL REFERENCES tasks(id),
                plan_item_id     TEXT REFERENCES plan_items(id),
                type             TEXT NOT NULL,
                summary          TEXT NOT NULL,
                status           TEXT NOT NULL,
                input            TEXT,
                output           TEXT,
                command          TEXT,
                cwd              TEXT,
                exit_code        INTEGER,
                duration_seconds REAL,
                stdout           BLOB,
                stderr           BLOB,
                created_at       TEXT NOT NULL,
                updated_at       TEXT NOT NULL
            )
            """,
            "CREATE INDEX actions_task ON actions(task_id, created_at)",
            "CREATE INDEX actions_step ON actions(plan_item_id)",
            """
            CREATE TABLE action_logs (
                id         TEXT PRIMARY KEY,
                space      TEXT NOT NULL,
                task_id    TEXT NOT NULL REFERENCES tasks(id),
                action_id  TEXT NOT NULL REFERENCES actions(id),
                type       TEXT NOT NULL,
                content    TEXT NOT NULL,
                created_at TEXT NOT NULL
            )
            """,
            "CREATE INDEX action_logs_action ON action_logs(action_id, created_at)",
            """
            CREATE TABLE task_messages (
                id         TEXT PRIMARY KEY,
                space      TEXT NOT NULL,
                task_id    TEXT NOT NULL REFERENCES tasks(id),
                role       TEXT NOT NULL,
                type       TEXT NOT NULL,
                content    TEXT NOT NULL,
                created_at TEXT NOT NULL
            )
            """,
            "CREATE INDEX task_messages_task ON task_messages(task_id, created_at)",
        ),
    ),
    Migration(
        2,
        "archive entries, workspace changes, working context",
        (
            "ALTER TABLE tasks ADD COLUMN next_objective TEXT",
            "ALTER TABLE tasks ADD COLUMN summary TEXT",
            # One fact, one row: decisions, errors, findings, constraints, questions and
            # every later archive entry. tags and relevance_to are JSON arrays.
            """
            CREATE TABLE entries (
                id           TEXT PRIMARY KEY,
                space        TEXT NOT NULL,
                task_id      TEXT REFERENCES tasks(id),
                subtask_id   TEXT REFERENCES plan_items(id),
                type         TEXT NOT NULL,
                summary      TEXT NOT NULL,
                detail       TEXT,
                tags         TEXT NOT NULL DEFAULT '[]',
                relevance_to TEXT NOT NULL DEFAULT '[]',
                status       TEXT NOT NULL DEFAULT 'active',
                resolution   TEXT,
                resolved_at  TEXT,
                supersedes   TEXT REFERENCES entries(id),
                created_at   TEXT NOT NULL,
                updated_at   TEXT NOT NULL
            )
            """,
            "CREATE INDEX entries_task ON entries(task_id, type, status, created_at)",
            "CREATE INDEX entries_space ON entries(space, type, created_at)",
            # A task's workspace changes, one row per path (id: task id, '/', path).
            """
            CREATE TABLE task_files (
                id            TEXT PRIMARY KEY,
                space         TEXT NOT NULL,
                task_id       TEXT NOT NULL REFERENCES tasks(id),
                path          TEXT NOT NULL,
                created       INTEGER NOT NULL DEFAULT 0,
                modifications INTEGER NOT NULL DEFAULT 0,
                first_at      TEXT NOT NULL,
                last_at       TEXT NOT NULL
            )
            """,
            "CREATE INDEX task_files_task ON task_files(task_id, last_at)",
        ),
    ),
)


LATEST = MIGRATIONS[-1].number

# Tables rebuilt from the journal by `verify`, in an order that satisfies foreign keys.
PROJECTION_TABLES: tuple[str, ...] = (
    "tasks",
    "plan_items",
    "actions",
    "action_logs",
    "task_messages",
    "entries",
    "task_files",
)
