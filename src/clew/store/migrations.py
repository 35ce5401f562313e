"""Numbered schema migrations, each applied in one transaction and recorded in a table.

A migration is a list of steps: SQL statements, or (rarely) a Python function of the
connection for what SQL cannot do, such as hashing the journal. Never edit one that has
shipped: add the next number. Each migration's fingerprint (its number, name and steps) is
recorded with it, so a store made by a different build of a migration is refused when it
opens rather than failing later on a missing column. Every table carries `space`, the
namespace a row belongs to.

The journal (`events`) is the truth; the other tables named in PROJECTION_TABLES
are projections of it that `verify` rebuilds and compares.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from typing import NamedTuple

from clew.core import chain, codec
from clew.errors import StoreError
from clew.store.projection.frozen_error_lines import OUTPUT_HEAD as OUTPUT_HEAD
from clew.store.projection.frozen_error_lines import OUTPUT_TAIL as OUTPUT_TAIL
from clew.store.sqlite.backfill import SEQUENCED, backfill_error_lines, backfill_sequence


class Run(NamedTuple):
    """A Python step of a migration: what it does, in words, and the function that does it.
    Its fingerprint covers the words and the function's name (not its docstring, which
    `python -OO` strips), so say there everything the function does."""

    does: str
    fn: Callable[[sqlite3.Connection], None]


Step = str | Run


class Migration(NamedTuple):
    number: int
    name: str
    statements: tuple[Step, ...]


def fingerprint(migration: Migration) -> str:
    """Return the fingerprint of what a migration does: its number, name and steps."""
    parts = [str(migration.number), migration.name]
    for step in migration.statements:
        parts.append(
            step if isinstance(step, str) else f"python {step.fn.__qualname__}: {step.does}"
        )
    return chain.fields_hash(b"clew-migration-1", parts, 16)


def _schema(conn: sqlite3.Connection) -> set[tuple[str, str, str]]:
    rows = conn.execute(
        "SELECT type, name, coalesce(sql, '') FROM sqlite_master"
        " WHERE name NOT LIKE 'sqlite_%' AND name != 'clew_migrations'"
    )
    return {(r[0], r[1], r[2]) for r in rows}


def _record_fingerprints(conn: sqlite3.Connection) -> None:
    """Record the fingerprints of migrations applied before fingerprints existed, after
    checking the store's schema is exactly what this clew's migrations 1-5 make."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(clew_migrations)")}
    if "fingerprint" not in columns:
        conn.execute("ALTER TABLE clew_migrations ADD COLUMN fingerprint TEXT")
    missing = [
        r[0] for r in conn.execute("SELECT number FROM clew_migrations WHERE fingerprint IS NULL")
    ]
    if not missing:
        return
    known = sqlite3.connect(":memory:")
    try:
        for migration in MIGRATIONS:
            if migration.number >= FINGERPRINTED_FROM:
                break
            for step in migration.statements:
                assert isinstance(step, str)  # the shipped migrations 1-5 are plain SQL
                known.execute(step)
        expected = _schema(known)
    finally:
        known.close()
    found = _schema(conn)
    if found != expected:
        names = sorted({name for _, name, _ in found ^ expected})
        raise StoreError(
            "this store was made by a development build of clew whose schema differs from"
            f" this clew's ({', '.join(names[:3])}); open it with the clew that made it"
        )
    for migration in MIGRATIONS:
        if migration.number in missing:
            conn.execute(
                "UPDATE clew_migrations SET fingerprint = ? WHERE number = ?",
                (fingerprint(migration), migration.number),
            )


def _hash_journal(conn: sqlite3.Connection) -> None:
    """Give every existing event its hash, chained per space in seq order (chain.py)."""
    rows = conn.execute(
        "SELECT seq, id, space, task_id, correlation_id, type, data, created_at, hash"
        " FROM events ORDER BY seq"
    )
    links = (chain.Link(*row) for row in rows.fetchall())
    conn.executemany(
        "UPDATE events SET hash = ? WHERE seq = ?", ((h, q) for q, h in chain.chained_v1(links))
    )


def rechain(conn: sqlite3.Connection) -> None:
    """Chain every event again with version 2 of the hash (over its data's digest), space
    by space in seq order, a page at a time (chain.py)."""
    heads: dict[str, str] = {}
    seq = 0
    while True:
        rows = conn.execute(
            "SELECT seq, id, space, task_id, correlation_id, type, data, created_at, hash,"
            " forgotten FROM events WHERE seq > ? ORDER BY seq LIMIT 5000",
            (seq,),
        ).fetchall()
        if not rows:
            return
        changed = []
        for row in rows:
            link = chain.Link(*row)
            heads[link.space] = chain.row_hash(heads.get(link.space, ""), link)
            changed.append((heads[link.space], link.seq))
        conn.executemany("UPDATE events SET hash = ? WHERE seq = ?", changed)
        seq = rows[-1][0]


def entry_owners(
    rows: Iterable[tuple[str, str, str]],
) -> dict[str, tuple[bool, list[list[str]]]]:
    """What `entry.kept_open` and `entry.evidence_added` events (type, data, created_at; in
    seq order) leave on their entries: kept open or not, and the evidence, by entry id."""
    found: dict[str, tuple[bool, list[list[str]]]] = {}
    for kind, data, at in rows:
        said = json.loads(data)
        kept, evidence = found.get(said["entry_id"], (False, []))
        if kind == "entry.kept_open":
            kept = bool(said["keep_open"])
        else:
            evidence = [*evidence, [said["action_id"], at]]
        found[said["entry_id"]] = (kept, evidence)
    return found


def backfill_entry_owners(conn: sqlite3.Connection) -> None:
    """Who recorded each entry, whether it is kept open and its evidence, from the journal:
    a store whose events say so (written by a build that knew, then taken back) gets what
    verify's replay gives; an older one has no such events, and its rows keep the defaults."""
    conn.execute(
        "UPDATE entries SET origin = (SELECT json_extract(e.data, '$.entry.origin')"
        " FROM events e WHERE e.type = 'entry.added' AND e.space = entries.space"
        " AND json_extract(e.data, '$.entry.id') = entries.id)"
        " WHERE id IN (SELECT json_extract(data, '$.entry.id') FROM events"
        " WHERE type = 'entry.added' AND json_extract(data, '$.entry.origin') IS NOT NULL)"
    )
    rows = conn.execute(
        "SELECT type, data, created_at FROM events"
        " WHERE type IN ('entry.kept_open', 'entry.evidence_added') ORDER BY seq"
    ).fetchall()
    for entry_id, (kept, evidence) in entry_owners(rows).items():
        conn.execute(
            "UPDATE entries SET keep_open = ?, evidence = ? WHERE id = ?",
            (int(kept), codec.dumps(evidence), entry_id),
        )


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
            # every later archive entry. tags and relevance_to are JSON arrays. `seq` is a
            # stable integer key (rowids of a table without one change on VACUUM), so the
            # full-text index can point at it.
            """
            CREATE TABLE entries (
                seq          INTEGER PRIMARY KEY,
                id           TEXT NOT NULL UNIQUE,
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
                fingerprint  TEXT,
                created_at   TEXT NOT NULL,
                updated_at   TEXT NOT NULL
            )
            """,
            "CREATE INDEX entries_task ON entries(task_id, type, status, created_at)",
            "CREATE INDEX entries_space ON entries(space, type, created_at)",
            "CREATE INDEX entries_fingerprint ON entries(fingerprint)",
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
    Migration(
        3,
        "archive search and links, command ledger, trace, patterns, guardrails",
        (
            # Where an entry came from: actions, messages, conversation turns, other entries.
            """
            CREATE TABLE entry_sources (
                id        TEXT PRIMARY KEY,
                space     TEXT NOT NULL,
                entry_id  TEXT NOT NULL REFERENCES entries(id),
                kind      TEXT NOT NULL,
                source_id TEXT NOT NULL
            )
            """,
            "CREATE INDEX entry_sources_entry ON entry_sources(entry_id)",
            "CREATE INDEX entry_sources_source ON entry_sources(kind, source_id)",
            # Tags and relevance_to, one row per value, for exact indexed matching.
            """
            CREATE TABLE entry_labels (
                id       TEXT PRIMARY KEY,
                space    TEXT NOT NULL,
                entry_id TEXT NOT NULL REFERENCES entries(id),
                kind     TEXT NOT NULL,
                value    TEXT NOT NULL
            )
            """,
            "CREATE INDEX entry_labels_value ON entry_labels(kind, value, entry_id)",
            "CREATE INDEX entry_labels_entry ON entry_labels(entry_id)",
            # Full-text search over entries, kept by triggers; porter stemming.
            """
            CREATE VIRTUAL TABLE entries_fts USING fts5(
                summary, detail, tags, resolution,
                content='entries', content_rowid='seq',
                tokenize='porter unicode61 remove_diacritics 2'
            )
            """,
            """
            CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries BEGIN
                INSERT INTO entries_fts (rowid, summary, detail, tags, resolution)
                VALUES (new.seq, new.summary, new.detail, new.tags, new.resolution);
            END
            """,
            """
            CREATE TRIGGER entries_fts_update AFTER UPDATE OF summary, detail, tags, resolution
            ON entries BEGIN
                INSERT INTO entries_fts (entries_fts, rowid, summary, detail, tags, resolution)
                VALUES ('delete', old.seq, old.summary, old.detail, old.tags, old.resolution);
                INSERT INTO entries_fts (rowid, summary, detail, tags, resolution)
                VALUES (new.seq, new.summary, new.detail, new.tags, new.resolution);
            END
            """,
            """
            CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries BEGIN
                INSERT INTO entries_fts (entries_fts, rowid, summary, detail, tags, resolution)
                VALUES ('delete', old.seq, old.summary, old.detail, old.tags, old.resolution);
            END
            """,
            # Fixes tried for an error fingerprint, and whether they worked.
            """
            CREATE TABLE fixes (
                id          TEXT PRIMARY KEY,
                space       TEXT NOT NULL,
                fingerprint TEXT NOT NULL,
                entry_id    TEXT REFERENCES entries(id),
                task_id     TEXT REFERENCES tasks(id),
                description TEXT NOT NULL,
                worked      INTEGER NOT NULL,
                created_at  TEXT NOT NULL
            )
            """,
            "CREATE INDEX fixes_fingerprint ON fixes(fingerprint, created_at)",
            # The command ledger is the actions table; tool calls of the trace add these.
            "ALTER TABLE actions ADD COLUMN tool TEXT",
            "ALTER TABLE actions ADD COLUMN decision_id TEXT",
            "ALTER TABLE actions ADD COLUMN started_at TEXT",
            "ALTER TABLE actions ADD COLUMN ended_at TEXT",
            "ALTER TABLE actions ADD COLUMN cpu_seconds REAL",
            "ALTER TABLE actions ADD COLUMN memory_mb REAL",
            "ALTER TABLE actions ADD COLUMN fingerprint TEXT",
            "CREATE INDEX actions_command ON actions(space, command, created_at)",
            "CREATE INDEX actions_fingerprint ON actions(fingerprint)",
            "CREATE INDEX actions_decision ON actions(decision_id) WHERE decision_id IS NOT NULL",
            # The episodic trace: the agent's decisions and their validations.
            """
            CREATE TABLE trace_decisions (
                id                TEXT PRIMARY KEY,
                space             TEXT NOT NULL,
                task_id           TEXT NOT NULL REFERENCES tasks(id),
                plan_item_id      TEXT REFERENCES plan_items(id),
                trace_id          TEXT NOT NULL,
                parent_id         TEXT REFERENCES trace_decisions(id),
                state             TEXT,
                agent             TEXT,
                context           TEXT,
                prompt_tokens     INTEGER,
                completion_tokens INTEGER,
                model             TEXT,
                temperature       REAL,
                action            TEXT NOT NULL,
                artifacts         TEXT,
                validation_status TEXT,
                outcome           TEXT NOT NULL,
                error             TEXT,
                created_at        TEXT NOT NULL
            )
            """,
            "CREATE INDEX trace_decisions_task ON trace_decisions(task_id, created_at)",
            "CREATE INDEX trace_decisions_trace ON trace_decisions(trace_id)",
            """
            CREATE TABLE trace_validations (
                id           TEXT PRIMARY KEY,
                space        TEXT NOT NULL,
                task_id      TEXT NOT NULL REFERENCES tasks(id),
                decision_id  TEXT NOT NULL REFERENCES trace_decisions(id),
                validator    TEXT NOT NULL,
                passed       INTEGER NOT NULL,
                requirements TEXT,
                violations   TEXT,
                feedback     TEXT,
                created_at   TEXT NOT NULL
            )
            """,
            "CREATE INDEX trace_validations_decision ON trace_validations(decision_id)",
            # Semantic memory: patterns with evidence, and guardrails.
            """
            CREATE TABLE patterns (
                id             TEXT PRIMARY KEY,
                space          TEXT NOT NULL,
                domain         TEXT NOT NULL,
                name           TEXT NOT NULL,
                kind           TEXT,
                description    TEXT,
                example        TEXT,
                context        TEXT,
                success_count  INTEGER NOT NULL DEFAULT 0,
                failure_count  INTEGER NOT NULL DEFAULT 0,
                last_validated TEXT,
                deprecated     INTEGER NOT NULL DEFAULT 0,
                version        INTEGER NOT NULL DEFAULT 1,
                created_at     TEXT NOT NULL,
                updated_at     TEXT NOT NULL
            )
            """,
            "CREATE INDEX patterns_domain ON patterns(space, domain, deprecated)",
            """
            CREATE TABLE guardrails (
                id               TEXT PRIMARY KEY,
                space            TEXT NOT NULL,
                rule_type        TEXT NOT NULL,
                text             TEXT NOT NULL,
                enforcement      TEXT NOT NULL,
                pattern          TEXT,
                valid_examples   TEXT NOT NULL DEFAULT '[]',
                invalid_examples TEXT NOT NULL DEFAULT '[]',
                enabled          INTEGER NOT NULL DEFAULT 1,
                created_at       TEXT NOT NULL,
                updated_at       TEXT NOT NULL
            )
            """,
            "CREATE INDEX guardrails_space ON guardrails(space, enabled)",
        ),
    ),
    Migration(
        4,
        "utility model: job outbox, model calls, running summaries",
        (
            # The outbox: work queued in the same transaction as the change that calls for
            # it, done by a worker after the commit (extraction, running summaries).
            """
            CREATE TABLE jobs (
                id          TEXT PRIMARY KEY,
                space       TEXT NOT NULL,
                kind        TEXT NOT NULL,
                task_id     TEXT NOT NULL REFERENCES tasks(id),
                step_id     TEXT REFERENCES plan_items(id),
                status      TEXT NOT NULL DEFAULT 'pending',
                attempts    INTEGER NOT NULL DEFAULT 0,
                lease_until TEXT,
                result      TEXT,
                error       TEXT,
                created_at  TEXT NOT NULL,
                updated_at  TEXT NOT NULL
            )
            """,
            "CREATE INDEX jobs_pending ON jobs(space, status, created_at)",
            "CREATE INDEX jobs_task ON jobs(task_id, kind, status)",
            # Every model call, for the cost governor and `clew usage`.
            """
            CREATE TABLE model_calls (
                id                TEXT PRIMARY KEY,
                space             TEXT NOT NULL,
                task_id           TEXT REFERENCES tasks(id),
                purpose           TEXT NOT NULL,
                role              TEXT NOT NULL,
                provider          TEXT NOT NULL,
                model             TEXT NOT NULL,
                prompt_tokens     INTEGER NOT NULL DEFAULT 0,
                completion_tokens INTEGER NOT NULL DEFAULT 0,
                seconds           REAL,
                ok                INTEGER NOT NULL,
                error             TEXT,
                created_at        TEXT NOT NULL
            )
            """,
            "CREATE INDEX model_calls_task ON model_calls(task_id, created_at)",
            "CREATE INDEX model_calls_day ON model_calls(space, created_at)",
            # Running summaries, newest last; the live query reads the newest.
            """
            CREATE TABLE task_summaries (
                id            TEXT PRIMARY KEY,
                space         TEXT NOT NULL,
                task_id       TEXT NOT NULL REFERENCES tasks(id),
                text          TEXT NOT NULL,
                message_count INTEGER NOT NULL,
                source        TEXT NOT NULL,
                model         TEXT,
                created_at    TEXT NOT NULL
            )
            """,
            "CREATE INDEX task_summaries_task ON task_summaries(task_id, created_at)",
        ),
    ),
    Migration(
        5,
        "conversation archive: sessions and verbatim turns",
        (
            """
            CREATE TABLE sessions (
                id             TEXT PRIMARY KEY,
                space          TEXT NOT NULL,
                key            TEXT,
                workspace      TEXT,
                model          TEXT,
                system_prompt  TEXT,
                task_id        TEXT REFERENCES tasks(id),
                title          TEXT,
                started_at     TEXT NOT NULL,
                last_active_at TEXT NOT NULL,
                total_tokens   INTEGER NOT NULL DEFAULT 0,
                turn_count     INTEGER NOT NULL DEFAULT 0,
                state          TEXT NOT NULL DEFAULT '{}',
                active         INTEGER NOT NULL DEFAULT 1
            )
            """,
            "CREATE INDEX sessions_workspace ON sessions(space, workspace, last_active_at)",
            # The caller's own name for a session (an Agents SDK session_id), unique per space.
            "CREATE UNIQUE INDEX sessions_key ON sessions(space, key) WHERE key IS NOT NULL",
            # One row per message, verbatim: `message` is the message as given, with a text
            # `content` moved to its own column (searchable, and stored once).
            """
            CREATE TABLE turns (
                seq          INTEGER PRIMARY KEY,
                id           TEXT NOT NULL UNIQUE,
                space        TEXT NOT NULL,
                session_id   TEXT NOT NULL REFERENCES sessions(id),
                turn         INTEGER NOT NULL,
                role         TEXT NOT NULL,
                content      TEXT,
                text_content INTEGER NOT NULL,
                tool_calls   TEXT,
                tool_call_id TEXT,
                tool_name    TEXT,
                call_turn    INTEGER,
                message      TEXT NOT NULL,
                token_count  INTEGER NOT NULL DEFAULT 0,
                hidden       INTEGER NOT NULL DEFAULT 0,
                created_at   TEXT NOT NULL,
                UNIQUE (session_id, turn)
            )
            """,
            "CREATE INDEX turns_tool ON turns(session_id, tool_name, turn)"
            " WHERE tool_name IS NOT NULL",
            # Hidden turns are few (popped) or one run (cleared): counting the visible turns
            # before a number is that number less the hidden ones, found here.
            "CREATE INDEX turns_hidden ON turns(session_id, turn) WHERE hidden = 1",
            """
            CREATE VIRTUAL TABLE turns_fts USING fts5(
                content, content='turns', content_rowid='seq',
                tokenize='porter unicode61 remove_diacritics 2'
            )
            """,
            """
            CREATE TRIGGER turns_fts_insert AFTER INSERT ON turns BEGIN
                INSERT INTO turns_fts (rowid, content) VALUES (new.seq, new.content);
            END
            """,
            """
            CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns BEGIN
                INSERT INTO turns_fts (turns_fts, rowid, content)
                VALUES ('delete', old.seq, old.content);
            END
            """,
        ),
    ),
    Migration(
        6,
        "tamper-evident journal: a hash chain per space, append-only events",
        (
            Run(
                "record the fingerprints of migrations applied before fingerprints existed,"
                " after checking the schema is exactly what migrations 1-5 make",
                _record_fingerprints,
            ),
            # Each event's hash covers the one before it in its space (store/chain.py).
            # Nullable only because ALTER TABLE cannot add a NOT NULL column; every event
            # has one once this migration is done.
            "ALTER TABLE events ADD COLUMN hash TEXT",
            # The write path reads its space's last hash through this index, and so do
            # the journal's reads by space.
            "CREATE INDEX events_space ON events(space, seq)",
            Run(
                "give every event its chain-1 hash (store/chain.py), chained per space in seq"
                " order",
                _hash_journal,
            ),
            # Made after the hashes are written: from here on no event changes.
            """
            CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN
                SELECT RAISE(ABORT, 'the journal is append-only: an event cannot be changed');
            END
            """,
            """
            CREATE TRIGGER events_no_delete BEFORE DELETE ON events BEGIN
                SELECT RAISE(ABORT, 'the journal is append-only: an event cannot be deleted');
            END
            """,
        ),
    ),
)


# Command output can be megabytes: the search index keeps a bounded copy of each output,
# its head and its tail (where a command says what it is doing, and how it failed):
# OUTPUT_HEAD and OUTPUT_TAIL characters (store/error_lines.py).


def bounded(value: str, middle: str | None = None) -> str:
    """SQL for a text or BLOB value cut to its head and tail, as text ('' for NULL); with
    `middle`, the SQL of what of the middle to keep between them (the error lines of a
    command's output, store/error_lines.py), when it is not NULL."""
    whole = OUTPUT_HEAD + OUTPUT_TAIL
    between = "' … '" if middle is None else f"' … ' || coalesce({middle} || ' … ', '')"
    return (
        f"CAST(CASE WHEN length({value}) > {whole} THEN substr({value}, 1, {OUTPUT_HEAD})"
        f" || {between} || substr({value}, -{OUTPUT_TAIL}) ELSE coalesce({value}, '') END"
        " AS TEXT)"
    )


# The fields of a trace decision searched beside its action, in the order its document
# holds them: how it turned out first, so a long context cannot push them out of the head.
DECISION_FIELDS = ("outcome", "error", "state", "agent", "context", "artifacts")


def decision_body(row: str, newline: str = "char(10)") -> str:
    """SQL for a trace decision's searchable body, uncut: its outcome, then each of its
    other fields that has a value, one a line (`||` with NULL is NULL on both backends, so
    the same expression serves SQLite and PostgreSQL)."""
    first, *rest = DECISION_FIELDS
    return " || ".join([f"{row}{first}", *(f"coalesce({newline} || {row}{f}, '')" for f in rest)])


def record_text(kind: str, row: str, errors: bool = False) -> tuple[str, str, str]:
    """SQL for the searchable text (title, body, stderr) of an action, a message or a trace
    decision, from a row alias (`new.`, `a.`): a command's summary and command line, its
    stdout and stderr (with `errors`, each with the error lines of its middle, as migration
    14 indexes them); a message's text; a decision's action, and its outcome, error, state,
    agent, context and artifacts."""
    if kind == "decision":
        return bounded(f"{row}action"), bounded(decision_body(row)), "''"
    if kind == "action":
        # The summary defaults to the command line: then it is said once.
        title = (
            f"CASE WHEN {row}command IS NULL OR {row}command = {row}summary THEN {row}summary"
            f" ELSE {row}summary || char(10) || {row}command END"
        )
        if errors:
            return (
                bounded(title),
                bounded(f"{row}stdout", f"{row}stdout_errors"),
                bounded(f"{row}stderr", f"{row}stderr_errors"),
            )
        return bounded(title), bounded(f"{row}stdout"), bounded(f"{row}stderr")
    return "''", bounded(f"{row}content"), "''"


def _keep(kind: str, table: str, columns: str, errors: bool = False) -> tuple[str, ...]:
    """Triggers that keep `record_docs` and `records_fts` in step with a table's rows."""
    title, body, stderr = record_text(kind, "new.", errors)
    key = f"kind = '{kind}' AND ref_id"
    insert_doc = (
        "INSERT INTO record_docs (kind, ref_id, space, task_id, created_at, title, body, stderr)"
        f" VALUES ('{kind}', new.id, new.space, new.task_id, new.created_at, {title}, {body},"
        f" {stderr});"
    )
    index = "INSERT INTO records_fts (rowid, title, body, stderr) SELECT seq, title, body, stderr"
    unindex = (
        "INSERT INTO records_fts (records_fts, rowid, title, body, stderr)"
        " SELECT 'delete', seq, title, body, stderr"
    )
    triggers = [
        f"""
        CREATE TRIGGER records_{kind}_insert AFTER INSERT ON {table} BEGIN
            {insert_doc}
            {index} FROM record_docs WHERE seq = last_insert_rowid();
        END
        """,
        f"""
        CREATE TRIGGER records_{kind}_delete AFTER DELETE ON {table} BEGIN
            {unindex} FROM record_docs WHERE {key} = old.id;
            DELETE FROM record_docs WHERE {key} = old.id;
        END
        """,
    ]
    if columns:
        triggers.append(
            f"""
            CREATE TRIGGER records_{kind}_update AFTER UPDATE OF {columns} ON {table} BEGIN
                {unindex} FROM record_docs WHERE {key} = old.id;
                UPDATE record_docs SET title = {title}, body = {body}, stderr = {stderr}
                WHERE {key} = new.id;
                {index} FROM record_docs WHERE {key} = new.id;
            END
            """
        )
    return tuple(triggers)


def _backfill(kind: str, table: str, alias: str) -> str:
    title, body, stderr = record_text(kind, f"{alias}.")
    return (
        f"SELECT '{kind}' AS kind, {alias}.id AS id, {alias}.space AS space, {alias}.task_id AS"
        f" task_id, {alias}.created_at AS created_at, {title} AS title, {body} AS body, {stderr}"
        f" AS stderr, {alias}.rowid AS n FROM {table} {alias}"
    )


_RECORDS_MIGRATION = Migration(
    7,
    "search over task messages and commands with their output",
    (
        # Actions and messages have text ids and no stable integer key (rowids may change on
        # VACUUM), so each gets a row here with one, holding its searchable text: whole for
        # a message, a command's outputs cut to head and tail (a 10 MB output is 12 KB here,
        # so a hit's snippet reads kilobytes, not the whole output). `records_fts` is an
        # external content index over it; triggers keep both in the row's transaction.
        """
        CREATE TABLE record_docs (
            seq        INTEGER PRIMARY KEY,
            kind       TEXT NOT NULL,
            ref_id     TEXT NOT NULL,
            space      TEXT NOT NULL,
            task_id    TEXT,
            created_at TEXT NOT NULL,
            title      TEXT NOT NULL,
            body       TEXT NOT NULL,
            stderr     TEXT NOT NULL,
            UNIQUE (kind, ref_id)
        )
        """,
        """
        CREATE VIRTUAL TABLE records_fts USING fts5(
            title, body, stderr, content='record_docs', content_rowid='seq',
            tokenize='porter unicode61 remove_diacritics 2'
        )
        """,
        *_keep("action", "actions", "summary, command, stdout, stderr"),
        *_keep("message", "task_messages", ""),
        # A store made before this migration: its rows in the order they were written.
        f"""
        INSERT INTO record_docs (kind, ref_id, space, task_id, created_at, title, body, stderr)
        SELECT kind, id, space, task_id, created_at, title, body, stderr FROM (
            {_backfill("action", "actions", "a")}
            UNION ALL
            {_backfill("message", "task_messages", "m")}
        )
        ORDER BY created_at, kind, n
        """,
        "INSERT INTO records_fts (records_fts) VALUES ('rebuild')",
    ),
)

MIGRATIONS += (_RECORDS_MIGRATION,)

_LIFECYCLE_MIGRATION = Migration(
    8,
    "smart waits, the schedule of polls and maintenance, when tasks were archived",
    (
        """
        CREATE TABLE waits (
            id              TEXT PRIMARY KEY,
            space           TEXT NOT NULL,
            task_id         TEXT NOT NULL REFERENCES tasks(id),
            step_id         TEXT REFERENCES plan_items(id),
            kind            TEXT NOT NULL,
            target          TEXT NOT NULL,
            criteria        TEXT NOT NULL DEFAULT '{}',
            description     TEXT,
            cwd             TEXT,
            poll_seconds    REAL NOT NULL,
            timeout_seconds REAL,
            run_timeout     REAL NOT NULL,
            deadline        TEXT,
            status          TEXT NOT NULL DEFAULT 'watching',
            observation     TEXT,
            checked_at      TEXT,
            result          TEXT,
            ended_at        TEXT,
            created_at      TEXT NOT NULL,
            updated_at      TEXT NOT NULL
        )
        """,
        "CREATE INDEX waits_task ON waits(task_id, status)",
        "CREATE INDEX waits_open ON waits(space, status)",
        # The poller's bookkeeping, outside the journal: when each wait was last polled and
        # what it saw, when maintenance last ran. Not a fact about any task (a poll that
        # sees nothing new journals nothing), so not a projection: losing a row only makes
        # the next poll or maintenance run come sooner.
        """
        CREATE TABLE schedule (
            space   TEXT NOT NULL,
            key     TEXT NOT NULL,
            last_at TEXT NOT NULL,
            runs    INTEGER NOT NULL DEFAULT 0,
            note    TEXT,
            PRIMARY KEY (space, key)
        ) WITHOUT ROWID
        """,
        "ALTER TABLE tasks ADD COLUMN archived_at TEXT",
        # Tasks archived before this migration: the time of their last archiving event.
        """
        UPDATE tasks SET archived_at = (
            SELECT e.created_at FROM events e
            WHERE e.task_id = tasks.id AND e.type = 'task.archived' ORDER BY e.seq DESC LIMIT 1
        ) WHERE archived = 1
        """,
        "CREATE INDEX tasks_archived ON tasks(space, archived_at) WHERE archived = 1",
    ),
)

MIGRATIONS += (_LIFECYCLE_MIGRATION,)

# The complete task record: one row per task that has one, one per step
# that has one, made by `task.record_set` and `step.record_set` events only. The phase
# timestamps are in those events too, derived by the facade when a write moves the task
# into a phase (record.py), so a replay writes what the live call wrote.
_TASK_RECORD_MIGRATION = Migration(
    9,
    "the complete task record: answer, outcome, error summary, entities, confidence, phase"
    " timestamps, plan source, domain, priority, estimate; and each step's record",
    (
        """
        CREATE TABLE task_records (
            id                   TEXT PRIMARY KEY REFERENCES tasks(id),
            space                TEXT NOT NULL,
            answer               TEXT,
            outcome              TEXT,
            error_reason         TEXT,
            error_step_id        TEXT,
            confidence           REAL,
            domain               TEXT,
            priority             TEXT,
            estimate_seconds     REAL,
            plan_source          TEXT,
            entities             TEXT NOT NULL DEFAULT '{}',
            plan_generated_at    TEXT,
            execution_started_at TEXT,
            synthesis_started_at TEXT,
            updated_at           TEXT NOT NULL
        )
        """,
        "CREATE INDEX task_records_domain ON task_records(space, domain)",
        """
        CREATE TABLE step_records (
            id         TEXT PRIMARY KEY REFERENCES plan_items(id),
            space      TEXT NOT NULL,
            task_id    TEXT NOT NULL REFERENCES tasks(id),
            agent      TEXT,
            outcome    TEXT,
            artifacts  TEXT NOT NULL DEFAULT '[]',
            updated_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX step_records_task ON step_records(task_id)",
    ),
)

MIGRATIONS += (_TASK_RECORD_MIGRATION,)


def _resequenced(table: str, index: str, columns: str) -> tuple[str, str]:
    return f"DROP INDEX {index}", f"CREATE INDEX {index} ON {table}({columns})"


# Rows ordered by the journal, not by rowid: SQLite's rowid is no part of the logical
# schema (a PostgreSQL table has none, and VACUUM may renumber a table without an integer
# key). A row's `seq` is the journal seq of the event that created it: free on the write
# path (the projection has the event), the same on every replay, and so the tie-break of
# rows written at the same moment. Command output says its kind (text or bytes) in a
# column of its own instead of in the value's storage class.
_SEQUENCE_MIGRATION = Migration(
    10,
    "explicit sequence columns (the creating event's seq) instead of rowid; an entry"
    " source's position; the kind of each command output (text or bytes)",
    (
        *(
            f"ALTER TABLE {table} ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0"
            for table, column in SEQUENCED
        ),
        "ALTER TABLE actions ADD COLUMN stdout_kind TEXT CHECK (stdout_kind IN ('text', 'bytes'))",
        "ALTER TABLE actions ADD COLUMN stderr_kind TEXT CHECK (stderr_kind IN ('text', 'bytes'))",
        *(
            f"UPDATE actions SET {name}_kind = CASE WHEN {name} IS NULL THEN NULL"
            f" WHEN typeof({name}) = 'blob' THEN 'bytes' ELSE 'text' END"
            for name in ("stdout", "stderr")
        ),
        Run(
            "replay the journal into a scratch store and copy every row's seq (the seq of"
            " the event that created it) and every entry source's position from it by id",
            backfill_sequence,
        ),
        *_resequenced("actions", "actions_task", "task_id, created_at, seq"),
        *_resequenced("actions", "actions_command", "space, command, created_at, seq"),
        *_resequenced("action_logs", "action_logs_action", "action_id, created_at, seq"),
        *_resequenced("task_messages", "task_messages_task", "task_id, created_at, seq"),
        *_resequenced("fixes", "fixes_fingerprint", "fingerprint, created_at, seq"),
        *_resequenced("task_summaries", "task_summaries_task", "task_id, created_at, seq"),
        *_resequenced("model_calls", "model_calls_task", "task_id, created_at, seq"),
        *_resequenced("trace_decisions", "trace_decisions_task", "task_id, created_at, seq"),
        *_resequenced("jobs", "jobs_pending", "space, status, created_at, seq"),
        *_resequenced("sessions", "sessions_workspace", "space, workspace, last_active_at, seq"),
        *_resequenced("entry_sources", "entry_sources_entry", "entry_id, position"),
    ),
)

MIGRATIONS += (_SEQUENCE_MIGRATION,)

# The vector index: one row per (record, model) with the embedding of the record's text.
# Derived and rebuildable, like the search indexes, and never journaled: no event makes a
# row, so `verify` does not compare it, export does not carry it, and losing it loses
# nothing (`clew index rebuild`). `seq` only grows (AUTOINCREMENT: a deleted row's number is
# never reused), so an in-process cache loads just the rows past the last one it saw; a
# record embedded again gets a new row and so a new seq. `source_at` is the record's
# updated_at (created_at for kinds whose text never changes) when its text was read: a
# record whose updated_at moved is read again, and re-embedded if `content_hash` (of its
# text and the model) changed. `vector` is float16, `dim` values, little-endian.
_VECTORS_MIGRATION = Migration(
    11,
    "the vector index: embeddings of records' text per model, derived and never journaled",
    (
        """
        CREATE TABLE embeddings (
            seq          INTEGER PRIMARY KEY AUTOINCREMENT,
            space        TEXT NOT NULL,
            kind         TEXT NOT NULL,
            ref_id       TEXT NOT NULL,
            model        TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            source_at    TEXT NOT NULL,
            task_id      TEXT,
            step_id      TEXT,
            session_id   TEXT,
            created_at   TEXT NOT NULL,
            dim          INTEGER NOT NULL,
            vector       BLOB NOT NULL,
            UNIQUE (space, model, kind, ref_id)
        )
        """,
        "CREATE INDEX embeddings_seq ON embeddings(space, model, seq)",
    ),
)

MIGRATIONS += (_VECTORS_MIGRATION,)

# Trace decisions join the records index: what the agent did (its action, the title) and
# how it turned out (the body). A decision is never edited but for its validation status,
# which is not searched, so only inserts and deletes are kept.
_DECISIONS_MIGRATION = Migration(
    12,
    "search over the trace's decisions: their action, outcome, error, state, agent, context"
    " and artifacts",
    (
        *_keep("decision", "trace_decisions", ""),
        # A store made before this migration: its decisions in the order they were made,
        # then only their documents added to the index (a rebuild would read every other).
        f"""
        INSERT INTO record_docs (kind, ref_id, space, task_id, created_at, title, body, stderr)
        SELECT 'decision', d.id, d.space, d.task_id, d.created_at,
               {", ".join(record_text("decision", "d."))}
        FROM trace_decisions d ORDER BY d.seq, d.created_at, d.id
        """,
        "INSERT INTO records_fts (rowid, title, body, stderr)"
        " SELECT seq, title, body, stderr FROM record_docs WHERE kind = 'decision' ORDER BY seq",
    ),
)

MIGRATIONS += (_DECISIONS_MIGRATION,)

# A search that names a time ("on May 14") ranks that time's turns apart: the range of their
# numbers, read from this index, bounds the full-text walk (else it would read every turn
# holding a common word to test its time).
MIGRATIONS += (
    Migration(
        13,
        "turns by time, for a search of the turns of a time",
        ("CREATE INDEX turns_time ON turns(space, created_at)",),
    ),
)

# A command's output is indexed by its head and tail, and now by the error lines of its
# middle too (store/error_lines.py): a build log that failed in its middle and went on is
# found by its error. The projection computes them from the output on the write path (and on
# every replay), into two columns the triggers index between the head and the tail; the
# outputs written before are computed here, and each update re-indexes its document.
MIGRATIONS += (
    Migration(
        14,
        "the error lines of the middle of long command output, kept and searched",
        (
            "ALTER TABLE actions ADD COLUMN stdout_errors TEXT",
            "ALTER TABLE actions ADD COLUMN stderr_errors TEXT",
            "DROP TRIGGER records_action_insert",
            "DROP TRIGGER records_action_delete",
            "DROP TRIGGER records_action_update",
            *_keep(
                "action",
                "actions",
                "summary, command, stdout, stderr, stdout_errors, stderr_errors",
                errors=True,
            ),
            Run(
                "compute the error lines of the middle of every command output longer than"
                " the index's head and tail into stdout_errors and stderr_errors (the update"
                " trigger indexes them)",
                backfill_error_lines,
            ),
        ),
    ),
)

# A turn's text was stored twice, in its event and in its row (the row's half of 4,350 bytes a
# turn for 1,360 of message JSON). The row now keeps a reference to its event (`event_seq`)
# and where in the event its text is (`text_in`: projection_conversations._text_in), and
# `turns` becomes a view that reads the text from there; the row keeps the text only where
# the journal does not hold it verbatim. The row keeps the message's envelope as before (the
# message with a text content taken out: role, ids, tool calls), small and read without
# parsing the event. The full-text index is unchanged: its rows keep their rowid (seq), and
# its content table is the view.
_TURN_ROWS = """
CREATE TABLE turn_rows (
    seq          INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    space        TEXT NOT NULL,
    session_id   TEXT NOT NULL REFERENCES sessions(id),
    turn         INTEGER NOT NULL,
    role         TEXT NOT NULL,
    content      TEXT,
    text_content INTEGER NOT NULL,
    tool_calls   TEXT,
    tool_call_id TEXT,
    tool_name    TEXT,
    call_turn    INTEGER,
    message      TEXT NOT NULL,
    token_count  INTEGER NOT NULL DEFAULT 0,
    hidden       INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL,
    event_seq    INTEGER,
    text_in      INTEGER,
    UNIQUE (session_id, turn)
)
"""
# What the projection's _text_in decides, read from each turn's event as it is stored (an
# event older than derived fields has no `role`, and its text was derived when read).
_TURN_EVENTS = """
INSERT INTO temp.turn_events (id, event_seq, text_in)
SELECT json_extract(data, '$.turn.id'), seq,
       CASE WHEN json_type(data, '$.turn.role') IS NULL THEN NULL
            WHEN json_type(data, '$.turn.text_from') IS NOT NULL THEN
                 CASE json_extract(data, '$.turn.text_from')
                      WHEN 'content' THEN 1 WHEN 'output' THEN 2 END
            WHEN json_type(data, '$.turn.text') = 'text' THEN 3 END
FROM events WHERE type = 'turn.appended'
"""
_TEXT_AT = (
    "CASE {r}.text_in WHEN 1 THEN json_extract({e}.data, '$.turn.message.content')"
    " WHEN 2 THEN json_extract({e}.data, '$.turn.message.output')"
    " WHEN 3 THEN json_extract({e}.data, '$.turn.text') END"
)
MIGRATIONS += (
    Migration(
        15,
        "a turn's text stored once, in its event: turn_rows refer to it, and turns is a"
        " view of them",
        (
            _TURN_ROWS,
            "CREATE TEMP TABLE turn_events (id TEXT PRIMARY KEY, event_seq INTEGER,"
            " text_in INTEGER)",
            _TURN_EVENTS,
            # A text with a NUL, or one the event does not hold verbatim, stays in the row.
            f"""
            INSERT INTO turn_rows (seq, id, space, session_id, turn, role, content,
                text_content, tool_calls, tool_call_id, tool_name, call_turn, message,
                token_count, hidden, created_at, event_seq, text_in)
            SELECT t.seq, t.id, t.space, t.session_id, t.turn, t.role,
                   CASE WHEN x.text_in IS NULL OR instr(t.content, char(0)) > 0
                        OR ({_TEXT_AT.format(r="x", e="e")}) IS NOT t.content
                        THEN t.content END,
                   t.text_content, t.tool_calls, t.tool_call_id, t.tool_name, t.call_turn,
                   t.message, t.token_count, t.hidden, t.created_at, x.event_seq,
                   CASE WHEN instr(t.content, char(0)) > 0
                        OR ({_TEXT_AT.format(r="x", e="e")}) IS NOT t.content
                        THEN NULL ELSE x.text_in END
            FROM turns t LEFT JOIN temp.turn_events x ON x.id = t.id
            LEFT JOIN events e ON e.seq = x.event_seq
            ORDER BY t.seq
            """,
            "DROP TABLE temp.turn_events",
            "DROP TABLE turns",
            "CREATE INDEX turns_tool ON turn_rows(session_id, tool_name, turn)"
            " WHERE tool_name IS NOT NULL",
            "CREATE INDEX turns_hidden ON turn_rows(session_id, turn) WHERE hidden = 1",
            "CREATE INDEX turns_time ON turn_rows(space, created_at)",
            # LEFT JOIN: the planner always drives from turn_rows, and looks the event up
            # only for a row whose text it reads.
            f"""
            CREATE VIEW turns AS
            SELECT r.seq, r.id, r.space, r.session_id, r.turn, r.role,
                   CASE WHEN r.text_in IS NULL THEN r.content
                        ELSE {_TEXT_AT.format(r="r", e="e")} END AS content,
                   r.text_content, r.tool_calls, r.tool_call_id, r.tool_name, r.call_turn,
                   r.message, r.token_count, r.hidden, r.created_at, r.event_seq, r.text_in
            FROM turn_rows r LEFT JOIN events e ON e.seq = r.event_seq
            """,
            # The projection writes the view; the row keeps the text only where the event
            # does not hold it (text_in is NULL).
            """
            CREATE TRIGGER turns_insert INSTEAD OF INSERT ON turns BEGIN
                INSERT INTO turn_rows (id, space, session_id, turn, role, content,
                    text_content, tool_calls, tool_call_id, tool_name, call_turn, message,
                    token_count, hidden, created_at, event_seq, text_in)
                VALUES (new.id, new.space, new.session_id, new.turn, new.role,
                    CASE WHEN new.text_in IS NULL THEN new.content END,
                    new.text_content, new.tool_calls, new.tool_call_id, new.tool_name,
                    new.call_turn, new.message, coalesce(new.token_count, 0),
                    coalesce(new.hidden, 0), new.created_at, new.event_seq, new.text_in);
                INSERT INTO turns_fts (rowid, content) VALUES (last_insert_rowid(), new.content);
            END
            """,
            """
            CREATE TRIGGER turns_update INSTEAD OF UPDATE OF hidden ON turns BEGIN
                UPDATE turn_rows SET hidden = new.hidden WHERE seq = old.seq;
            END
            """,
            f"""
            CREATE TRIGGER turns_fts_delete AFTER DELETE ON turn_rows BEGIN
                INSERT INTO turns_fts (turns_fts, rowid, content)
                SELECT 'delete', old.seq, CASE WHEN old.text_in IS NULL THEN old.content
                       ELSE {_TEXT_AT.format(r="old", e="e")} END
                FROM (SELECT 1) LEFT JOIN events e ON e.seq = old.event_seq;
            END
            """,
        ),
    ),
)

# A task's open waits (wait actions still started) were found by reading every action of
# the task (and the space's waiting tasks by every action of the space): `where`, `state`
# and the brief slowed down as a task grew. A partial index holds only the open ones, so it
# stays tiny and costs the other actions' writes nothing; the reads (portable_trace.open_waits,
# portable_waits.open_wait_actions and waiting_tasks) name its condition word for word, as they
# must for SQLite to use it.
MIGRATIONS += (
    Migration(
        16,
        "a task's open wait actions found by an index of them alone",
        (
            "CREATE INDEX actions_open_wait ON actions(space, task_id, created_at, seq)"
            " WHERE type = 'wait' AND status = 'started'",
        ),
    ),
)

# `clew serve`'s keys and request log (keys.py). Server administration, not task memory: no
# event journals them (an export or push of a space must never carry credentials, and a key
# is looked up by its prefix before any space is known), `verify` does not compare them, and
# on PostgreSQL their row-level security is not by space but by role (migration 23).
ADMIN_TABLES = ("clew_keys", "clew_requests")
MIGRATIONS += (
    Migration(
        17,
        "keys of the HTTP server, one space and scope each, and its request log",
        (
            """
            CREATE TABLE clew_keys (
                prefix       TEXT PRIMARY KEY,
                space        TEXT NOT NULL,
                scope        TEXT NOT NULL,
                name         TEXT,
                hash         TEXT NOT NULL,
                created_at   TEXT NOT NULL,
                last_used_at TEXT,
                revoked_at   TEXT
            )
            """,
            "CREATE INDEX clew_keys_space ON clew_keys(space, created_at)",
            """
            CREATE TABLE clew_requests (
                seq        INTEGER PRIMARY KEY,
                space      TEXT NOT NULL,
                key_prefix TEXT,
                method     TEXT NOT NULL,
                route      TEXT NOT NULL,
                status     INTEGER NOT NULL,
                created_at TEXT NOT NULL,
                ms         REAL NOT NULL
            )
            """,
            "CREATE INDEX clew_requests_space ON clew_requests(space, seq)",
        ),
    ),
)

# LangGraph's checkpoints (clew.integrations.langgraph.ClewSaver): derived framework state,
# kept beside the journal, not in it (docs/architecture.md says why). A checkpoint's row
# holds everything but its channel values; each value is one blob keyed by thread,
# namespace, channel and version, written once when that version is new, so a step stores
# only the channels it changed; a list that grew by appending (the messages) is stored as
# what was appended to an earlier version (base_version, base_length), so a thread's size
# grows linearly with its steps, not with steps times the conversation's length.
MIGRATIONS += (
    Migration(
        18,
        "LangGraph checkpoints, their channel values by version and their pending writes",
        (
            """
            CREATE TABLE langgraph_checkpoints (
                space           TEXT NOT NULL,
                thread_id       TEXT NOT NULL,
                ns              TEXT NOT NULL,
                checkpoint_id   TEXT NOT NULL,
                parent_id       TEXT,
                checkpoint_type TEXT NOT NULL,
                checkpoint      BLOB NOT NULL,
                metadata_type   TEXT NOT NULL,
                metadata        BLOB NOT NULL,
                PRIMARY KEY (space, thread_id, ns, checkpoint_id)
            )
            """,
            """
            CREATE TABLE langgraph_blobs (
                space      TEXT NOT NULL,
                thread_id  TEXT NOT NULL,
                ns         TEXT NOT NULL,
                channel    TEXT NOT NULL,
                version    TEXT NOT NULL,
                value_type TEXT NOT NULL,
                value      BLOB,
                base_version TEXT,
                base_length  INTEGER,
                PRIMARY KEY (space, thread_id, ns, channel, version)
            )
            """,
            """
            CREATE TABLE langgraph_writes (
                space         TEXT NOT NULL,
                thread_id     TEXT NOT NULL,
                ns            TEXT NOT NULL,
                checkpoint_id TEXT NOT NULL,
                task_id       TEXT NOT NULL,
                idx           INTEGER NOT NULL,
                channel       TEXT NOT NULL,
                value_type    TEXT NOT NULL,
                value         BLOB,
                task_path     TEXT NOT NULL DEFAULT '',
                PRIMARY KEY (space, thread_id, ns, checkpoint_id, task_id, idx)
            )
            """,
        ),
    ),
)

# Every journal event wrote an entry in events(correlation_id) that no read uses (a call's
# events are read by task or by seq), and every turn rewrote its session's entry in
# sessions(space, workspace, last_active_at, seq), which no read uses either (sessions are
# listed by space and sorted; a workspace matches by its real path, found in Python): two
# B-tree pages less in every turn's commit (21 to 19 WAL pages), one less in every other
# write's (docs/benchmarks-log.md, "Appending a turn, third round").
MIGRATIONS += (
    Migration(
        19,
        "no index of events by correlation id, nor of sessions by workspace and last activity",
        ("DROP INDEX IF EXISTS events_correlation", "DROP INDEX IF EXISTS sessions_workspace"),
    ),
)

# Trust (issue 24). A wait that makes the host act carries a seal made with a key kept
# outside the store (sealing.py), and a file wait added through a server the folder it is kept
# in; both are written from the `wait.added` event, so `verify` rebuilds them. Waits written
# before have no seal and never run (probes.unsealed): nothing vouches for where they came
# from. `clew_imports` is the store's own record of who imported or pushed which events
# (outside the journal: the events keep the text their hashes cover, and who brought them is
# not theirs to say), written in the transaction that adds them.
MIGRATIONS += (
    Migration(
        20,
        "the seal of a wait that makes the host act, its folder, and the record of imports",
        (
            "ALTER TABLE waits ADD COLUMN seal TEXT",
            "ALTER TABLE waits ADD COLUMN confined_to TEXT",
            """
            CREATE TABLE clew_imports (
                seq        INTEGER PRIMARY KEY,
                space      TEXT NOT NULL,
                first_seq  INTEGER NOT NULL,
                last_seq   INTEGER NOT NULL,
                events     INTEGER NOT NULL,
                door       TEXT NOT NULL,
                key_prefix TEXT,
                user_name  TEXT,
                created_at TEXT NOT NULL
            )
            """,
            "CREATE INDEX clew_imports_space ON clew_imports(space, last_seq)",
        ),
    ),
)

# Forgetting (docs/architecture.md, "Forgetting"): an event's content may be replaced by a
# tombstone, so the chain covers a digest of each event's data (version 2 of chain.py) and
# every event is chained again once, the append-only guard lifted for that step alone. The
# guard then allows one change: an event's data rewritten with its tombstone set, never any
# other column, nor a tombstone's digest once set. Task messages and trace decisions get the
# update triggers their search documents lacked (a forget changes their text).
_DECISION_COLUMNS = "action, " + ", ".join(DECISION_FIELDS)
EVENT_GUARD = """
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
WHEN NOT (new.seq = old.seq AND new.id = old.id AND new.space = old.space
          AND new.task_id IS old.task_id AND new.correlation_id = old.correlation_id
          AND new.type = old.type AND new.created_at = old.created_at
          AND new.hash IS old.hash AND new.forgotten IS NOT NULL
          AND (old.forgotten IS NULL OR json_extract(new.forgotten, '$.digest')
                                        IS json_extract(old.forgotten, '$.digest')))
BEGIN
    SELECT RAISE(ABORT,
        'the journal is append-only: an event cannot be changed, only its content forgotten');
END
"""
MIGRATIONS += (
    Migration(
        21,
        "forgetting: the chain over data digests (version 2), a tombstone beside each event"
        " whose content was forgotten, search documents that follow edited messages and"
        " decisions",
        (
            "DROP TRIGGER events_no_update",
            "ALTER TABLE events ADD COLUMN forgotten TEXT",
            Run(
                "chain every event again with version 2 of the hash (over its data's digest,"
                " store/chain.py), space by space in seq order",
                rechain,
            ),
            EVENT_GUARD,
            _keep("message", "task_messages", "content")[2],
            _keep("decision", "trace_decisions", _DECISION_COLUMNS)[2],
        ),
    ),
)

# What redaction took out of each event (redaction.py): one row per event, field and kind,
# never the value. A projection of the "redactions" each event's data records, so `verify`
# rebuilds it; `clew redactions` lists it by task, session and kind.
MIGRATIONS += (
    Migration(
        22,
        "the redactions each event records, by field and kind",
        (
            """
            CREATE TABLE redactions (
                id         TEXT PRIMARY KEY,
                space      TEXT NOT NULL,
                seq        INTEGER NOT NULL,
                event_id   TEXT NOT NULL,
                event_type TEXT NOT NULL,
                task_id    TEXT,
                session_id TEXT,
                field      TEXT NOT NULL,
                kind       TEXT NOT NULL,
                count      INTEGER NOT NULL,
                created_at TEXT NOT NULL
            )
            """,
            "CREATE INDEX redactions_space ON redactions(space, seq)",
        ),
    ),
)

# PostgreSQL's migration 23 gives the server's keys and request log row-level security that
# only their owner and the server's roles pass (store/postgres/roles.py). A SQLite file has no
# roles, whoever can open it reads and writes all of it (docs/security.md): nothing to do
# here, but the numbers are shared.
MIGRATIONS += (
    Migration(
        23,
        "database roles: the server's keys and request log reachable only by their owner and"
        " the server's roles, the migrations' record read by all (PostgreSQL's; a SQLite file"
        " has no roles)",
        (),
    ),
)

# Each line of the server's request log carries the id the server gave it when it wrote the
# line to its spill file, before answering (server/requestlog.py): folding that file into the
# store again after a crash adds nothing twice. Older lines have none (NULLs do not collide).
MIGRATIONS += (
    Migration(
        24,
        "an id for each line of the server's request log, kept once per space",
        (
            "ALTER TABLE clew_requests ADD COLUMN line_id TEXT",
            "CREATE UNIQUE INDEX clew_requests_line ON clew_requests(space, line_id)",
        ),
    ),
)

# Who an error belongs to (issue 25): clew resolves only its own extracted copy of a failed
# command, and only when that same command passes; an error the agent recorded, or said to
# keep open, gets evidence instead (a later run that passed), which the agent reads beside
# it and resolves itself. `origin` is written from `entry.added` (NULL before: such an entry
# is never resolved by clew), `keep_open` from `entry.kept_open`, `evidence` (a JSON list of
# [action id, time]; the command is read from the action) from `entry.evidence_added`.
MIGRATIONS += (
    Migration(
        25,
        "who recorded each entry, whether the agent keeps an error open, and the later passing"
        " runs of an error's command",
        (
            "ALTER TABLE entries ADD COLUMN origin TEXT",
            "ALTER TABLE entries ADD COLUMN keep_open INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE entries ADD COLUMN evidence TEXT NOT NULL DEFAULT '[]'",
            Run(
                "set each entry's origin, keep_open and evidence from what its events in the"
                " journal say (entry.added's origin, entry.kept_open, entry.evidence_added,"
                " in seq order), as verify's replay would",
                backfill_entry_owners,
            ),
        ),
    ),
)

# The outline of the work and semantic memory (outline.py: task names, goals, plan steps with
# their issue and summary, final answers, patterns, guardrails) get search documents of
# their own, one per row and kind, as messages and commands have theirs: `outline_docs`
# holds each one's text and a stable integer key, `outline_fts` indexes it (external
# content), and triggers keep both in the row's transaction. Search ranks them with FTS5's
# bm25 (before this, every search read the rows holding a substring of a word and ranked
# them in Python, a cost that grew with the store).
OUTLINE_TABLES: dict[str, str] = {
    "task": "tasks",
    "goal": "tasks",
    "step": "plan_items",
    "answer": "task_records",
    "pattern": "patterns",
    "guardrail": "guardrails",
}
# The columns whose change changes a table's documents.
OUTLINE_COLUMNS: dict[str, str] = {
    "tasks": "name, goal",
    "plan_items": "title, active_issue, summary, removed",
    "task_records": "answer",
    "patterns": "name, description, example, kind",
    "guardrails": "text",
}


def outline_text(kind: str, row: str, newline: str = "char(10)") -> str:
    """SQL for the searchable text of one kind of the outline from a row alias (`new.`,
    `p.`): a task's name, its goal, its answer, a guardrail's text; a step's title, issue
    and summary (none once it is removed), a pattern's name, description, example and
    kind, each that has a value on a line of its own (`||` with NULL is NULL on both
    backends: the same expression serves SQLite and PostgreSQL, with its own newline)."""
    parts = {
        "task": ("name",),
        "goal": ("goal",),
        "answer": ("answer",),
        "guardrail": ("text",),
        "step": ("title", "active_issue", "summary"),
        "pattern": ("name", "description", "example", "kind"),
    }[kind]
    first, *rest = parts
    head = f"coalesce({row}{first}, '')"
    text = " || ".join([head, *(f"coalesce({newline} || nullif({row}{c}, ''), '')" for c in rest)])
    # A removed step is history no search finds (its row stays, with its actions): its
    # document is empty, so a search of the whole outline needs no read of the steps.
    return f"CASE WHEN {row}removed = 0 THEN {text} ELSE '' END" if kind == "step" else text


def _keep_outline(table: str) -> tuple[str, ...]:
    """Triggers that keep `outline_docs` and `outline_fts` in step with a table's rows (a
    task's row has two documents: its name and its goal)."""
    kinds = [k for k, t in OUTLINE_TABLES.items() if t == table]
    among = ", ".join(f"'{k}'" for k in kinds)
    inserts = " ".join(
        "INSERT INTO outline_docs (kind, ref_id, space, body)"
        f" VALUES ('{k}', new.id, new.space, {outline_text(k, 'new.')});"
        for k in kinds
    )
    updates = " ".join(
        f"UPDATE outline_docs SET body = {outline_text(k, 'new.')}"
        f" WHERE kind = '{k}' AND ref_id = new.id;"
        for k in kinds
    )
    index = (
        "INSERT INTO outline_fts (rowid, body) SELECT seq, body FROM outline_docs"
        f" WHERE kind IN ({among}) AND ref_id = new.id;"
    )
    unindex = (
        "INSERT INTO outline_fts (outline_fts, rowid, body) SELECT 'delete', seq, body"
        f" FROM outline_docs WHERE kind IN ({among}) AND ref_id = old.id;"
    )
    return (
        f"CREATE TRIGGER outline_{table}_insert AFTER INSERT ON {table} BEGIN {inserts}"
        f" {index} END",
        f"CREATE TRIGGER outline_{table}_update AFTER UPDATE OF {OUTLINE_COLUMNS[table]}"
        f" ON {table} BEGIN {unindex} {updates} {index} END",
        f"CREATE TRIGGER outline_{table}_delete AFTER DELETE ON {table} BEGIN {unindex}"
        f" DELETE FROM outline_docs WHERE kind IN ({among}) AND ref_id = old.id; END",
    )


def outline_backfill(newline: str = "char(10)", space: str = "") -> str:
    """SELECT of every row's outline documents (kind, ref_id, space, body), in the order
    the rows were made (an answer by when it was set); `space` a condition of each table's
    rows (alias `r`), e.g. " AND r.space = %s"."""
    selects = [
        f"SELECT '{k}' AS kind, r.id AS ref_id, r.space AS space,"
        f" {outline_text(k, 'r.', newline)} AS body,"
        f" r.{'updated_at' if k == 'answer' else 'created_at'} AS at"
        f" FROM {t} r WHERE 1 = 1{space}"
        for k, t in OUTLINE_TABLES.items()
    ]
    return (
        "SELECT kind, ref_id, space, body FROM (" + " UNION ALL ".join(selects) + ")"
        " AS d ORDER BY at, kind, ref_id"
    )


MIGRATIONS += (
    Migration(
        26,
        "search indexes for task names, goals, plan steps, final answers, patterns, guardrails",
        (
            """
            CREATE TABLE outline_docs (
                seq    INTEGER PRIMARY KEY,
                kind   TEXT NOT NULL,
                ref_id TEXT NOT NULL,
                space  TEXT NOT NULL,
                body   TEXT NOT NULL,
                UNIQUE (kind, ref_id)
            )
            """,
            """
            CREATE VIRTUAL TABLE outline_fts USING fts5(
                body, content='outline_docs', content_rowid='seq',
                tokenize='porter unicode61 remove_diacritics 2'
            )
            """,
            *(t for table in OUTLINE_COLUMNS for t in _keep_outline(table)),
            # A store made before this migration: its rows' documents, in the order made.
            f"INSERT INTO outline_docs (kind, ref_id, space, body) {outline_backfill()}",
            "INSERT INTO outline_fts (outline_fts) VALUES ('rebuild')",
        ),
    ),
)

LATEST = MIGRATIONS[-1].number
FINGERPRINTS: dict[int, str] = {m.number: fingerprint(m) for m in MIGRATIONS}
# The migration that began recording fingerprints (and records those of the ones before it).
FINGERPRINTED_FROM = 6

# Tables rebuilt from the journal by `verify`, in an order that satisfies foreign keys.
PROJECTION_TABLES: tuple[str, ...] = (
    "tasks",
    "plan_items",
    "actions",
    "action_logs",
    "task_messages",
    "task_records",
    "step_records",
    "entries",
    "task_files",
    "entry_sources",
    "entry_labels",
    "fixes",
    "trace_decisions",
    "trace_validations",
    "patterns",
    "guardrails",
    "jobs",
    "model_calls",
    "task_summaries",
    "sessions",
    "turns",
    "waits",
    "redactions",
)
