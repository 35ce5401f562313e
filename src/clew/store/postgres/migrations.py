"""The PostgreSQL schema: the same numbered migrations as SQLite's (store/migrations.py), each
applied in one transaction and recorded in `clew_migrations` with its fingerprint.

The logical schema is SQLite's: the same tables, columns (in the same order) and nullability,
with types mapped TEXT -> text, INTEGER -> bigint, REAL -> double precision, BLOB -> bytea.
What differs, on purpose:
- Every primary and unique key starts with `space` (an id is unique within its space), and
  foreign keys carry it, so a Citus cluster can distribute every table by `space`.
- Every table has row-level security. Each table of task memory has it enabled and forced: a
  row is visible and writable only when `space` equals the transaction's `clew.space`
  setting, which the store sets in every transaction. `clew.all_spaces = 'on'` (set only by
  `verify --all-spaces`, in a read-only transaction) lets reads see every space; writes never.
  The server's keys and request log, and the migrations' record, have it enabled, not forced
  (migration 23): their owner reaches every row, other roles only what a policy of theirs
  gives (store/postgres/roles.py). Superusers and BYPASSRLS roles skip every policy: a team store
  connects as ordinary roles.
- The search indexes are each backend's own: FTS5 tables and triggers on SQLite; here a
  generated `search` tsvector column with a GIN index on entries, turns and `record_docs`
  (kept by a trigger, as on SQLite), and the functions that make them
  (store/postgres/search_schema.py).
  They are `Shared` steps: verify's temporary tables, which it compares without `search`,
  need none of them.
- The journal's append-only guard is a trigger function, created once for the database (a
  `Shared` step, not repeated in verify's temporary tables, which need no guard).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from clew.core import chain, codec
from clew.store.migrations import DECISION_FIELDS, Migration, entry_owners, fingerprint
from clew.store.postgres import search_schema as pg_search_schema
from clew.store.projection.frozen_error_lines import OUTPUT_HEAD, OUTPUT_TAIL, error_lines
from clew.store.sqlite.backfill import SEQUENCED

SPACE = "current_setting('clew.space', true)"


class Shared(NamedTuple):
    """A database-wide step (a function, an aggregate): run once per database, never in the
    temporary schema that `verify` replays into."""

    sql: str


class PgRun(NamedTuple):
    """A Python step, like SQLite's `Run`: what it does, in words, and the function of the
    raw connection (in the migration's transaction) that does it. Never run in verify's
    temporary tables, which begin empty."""

    does: str
    fn: Callable[[Any], None]


PgStep = str | Shared | PgRun


class PgMigration(NamedTuple):
    number: int
    name: str
    statements: tuple[PgStep, ...]


def table(name: str, body: str) -> tuple[str, ...]:
    """CREATE TABLE `name` (`body`) with its row-level security on `space`."""
    return (
        f"CREATE TABLE {name} ({body})",
        f"ALTER TABLE {name} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {name} FORCE ROW LEVEL SECURITY",
        f"CREATE POLICY {name}_space ON {name} USING (space = {SPACE})"
        f" WITH CHECK (space = {SPACE})",
        f"CREATE POLICY {name}_all_spaces ON {name} FOR SELECT"
        " USING (current_setting('clew.all_spaces', true) = 'on')",
    )


def collated(sql: str) -> str:
    """Give every text column SQLite's bytewise ordering (COLLATE "C"), whatever the
    database's locale: ids, timestamps and names sort as they do on SQLite. Applied to each
    migration's statements when they run (postgres/store.py) and when verify makes its scratch
    copies of the tables (postgres/verify.py)."""
    import re

    return re.sub(r"(\b\w+\s+)text\b(?! COLLATE)", r'\1text COLLATE "C"', sql)


def fk(columns: str, target: str) -> str:
    """A foreign key that carries the space: (space, columns) -> target (space, id)."""
    return f"FOREIGN KEY (space, {columns}) REFERENCES {target} (space, id)"


_APPEND_ONLY = Shared(
    "CREATE OR REPLACE FUNCTION clew_append_only() RETURNS trigger LANGUAGE plpgsql AS"
    " $$ BEGIN RAISE EXCEPTION 'the journal is append-only: an event cannot be %',"
    " CASE TG_OP WHEN 'DELETE' THEN 'deleted' ELSE 'changed' END; END $$"
)

MIGRATIONS: tuple[PgMigration, ...] = (
    PgMigration(
        1,
        "journal and task tracker",
        (
            *table(
                "events",
                """
                seq            bigint GENERATED ALWAYS AS IDENTITY,
                id             text NOT NULL,
                space          text NOT NULL,
                task_id        text,
                correlation_id text NOT NULL,
                type           text NOT NULL,
                data           text NOT NULL,
                created_at     text NOT NULL,
                PRIMARY KEY (space, seq),
                UNIQUE (space, id)
                """,
            ),
            "CREATE INDEX events_task ON events(space, task_id, seq)",
            "CREATE INDEX events_correlation ON events(space, correlation_id)",
            "CREATE INDEX events_type ON events(space, type)",
            *table(
                "tasks",
                """
                id                text NOT NULL,
                space             text NOT NULL,
                name              text NOT NULL,
                goal              text,
                workspace         text,
                status            text NOT NULL,
                archived          bigint NOT NULL DEFAULT 0,
                metadata          text NOT NULL DEFAULT '{}',
                plan_version      bigint NOT NULL DEFAULT 1,
                last_replanned_at text,
                created_at        text NOT NULL,
                updated_at        text NOT NULL,
                completed_at      text,
                PRIMARY KEY (space, id)
                """,
            ),
            "CREATE INDEX tasks_space_status ON tasks(space, status, updated_at)",
            *table(
                "plan_items",
                f"""
                id               text NOT NULL,
                space            text NOT NULL,
                task_id          text NOT NULL,
                ordinal          bigint,
                title            text NOT NULL,
                status           text NOT NULL DEFAULT 'pending',
                started_at       text,
                completed_at     text,
                duration_seconds double precision,
                summary          text,
                active_issue     text,
                depends_on       text NOT NULL DEFAULT '[]',
                removed          bigint NOT NULL DEFAULT 0,
                created_at       text NOT NULL,
                updated_at       text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("task_id", "tasks")}
                """,
            ),
            "CREATE INDEX plan_items_task ON plan_items(space, task_id, removed, ordinal)",
            "CREATE UNIQUE INDEX plan_items_position ON plan_items(space, task_id, ordinal)"
            " WHERE ordinal IS NOT NULL",
            *table(
                "actions",
                f"""
                id               text NOT NULL,
                space            text NOT NULL,
                task_id          text NOT NULL,
                plan_item_id     text,
                type             text NOT NULL,
                summary          text NOT NULL,
                status           text NOT NULL,
                input            text,
                output           text,
                command          text,
                cwd              text,
                exit_code        bigint,
                duration_seconds double precision,
                stdout           bytea,
                stderr           bytea,
                created_at       text NOT NULL,
                updated_at       text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("task_id", "tasks")},
                {fk("plan_item_id", "plan_items")}
                """,
            ),
            "CREATE INDEX actions_task ON actions(space, task_id, created_at)",
            "CREATE INDEX actions_step ON actions(space, plan_item_id)",
            *table(
                "action_logs",
                f"""
                id         text NOT NULL,
                space      text NOT NULL,
                task_id    text NOT NULL,
                action_id  text NOT NULL,
                type       text NOT NULL,
                content    text NOT NULL,
                created_at text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("task_id", "tasks")},
                {fk("action_id", "actions")}
                """,
            ),
            "CREATE INDEX action_logs_action ON action_logs(space, action_id, created_at)",
            *table(
                "task_messages",
                f"""
                id         text NOT NULL,
                space      text NOT NULL,
                task_id    text NOT NULL,
                role       text NOT NULL,
                type       text NOT NULL,
                content    text NOT NULL,
                created_at text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("task_id", "tasks")}
                """,
            ),
            "CREATE INDEX task_messages_task ON task_messages(space, task_id, created_at)",
        ),
    ),
    PgMigration(
        2,
        "archive entries, workspace changes, working context",
        (
            "ALTER TABLE tasks ADD COLUMN next_objective text",
            "ALTER TABLE tasks ADD COLUMN summary text",
            *table(
                "entries",
                f"""
                seq          bigint GENERATED BY DEFAULT AS IDENTITY,
                id           text NOT NULL,
                space        text NOT NULL,
                task_id      text,
                subtask_id   text,
                type         text NOT NULL,
                summary      text NOT NULL,
                detail       text,
                tags         text NOT NULL DEFAULT '[]',
                relevance_to text NOT NULL DEFAULT '[]',
                status       text NOT NULL DEFAULT 'active',
                resolution   text,
                resolved_at  text,
                supersedes   text,
                fingerprint  text,
                created_at   text NOT NULL,
                updated_at   text NOT NULL,
                PRIMARY KEY (space, id),
                UNIQUE (space, seq),
                {fk("task_id", "tasks")},
                {fk("subtask_id", "plan_items")},
                {fk("supersedes", "entries")}
                """,
            ),
            "CREATE INDEX entries_task ON entries(space, task_id, type, status, created_at)",
            "CREATE INDEX entries_space ON entries(space, type, created_at)",
            "CREATE INDEX entries_fingerprint ON entries(space, fingerprint)",
            # Full-text search (SQLite's entries_fts): pg_search's functions, once per
            # database, and the entries' search vector.
            *(Shared(statement) for statement in pg_search_schema.FUNCTIONS),
            *(Shared(statement) for statement in pg_search_schema.ENTRIES_INDEX),
            *table(
                "task_files",
                f"""
                id            text NOT NULL,
                space         text NOT NULL,
                task_id       text NOT NULL,
                path          text NOT NULL,
                created       bigint NOT NULL DEFAULT 0,
                modifications bigint NOT NULL DEFAULT 0,
                first_at      text NOT NULL,
                last_at       text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("task_id", "tasks")}
                """,
            ),
            "CREATE INDEX task_files_task ON task_files(space, task_id, last_at)",
        ),
    ),
    PgMigration(
        3,
        "archive search and links, command ledger, trace, patterns, guardrails",
        (
            *table(
                "entry_sources",
                f"""
                id        text NOT NULL,
                space     text NOT NULL,
                entry_id  text NOT NULL,
                kind      text NOT NULL,
                source_id text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("entry_id", "entries")}
                """,
            ),
            "CREATE INDEX entry_sources_entry ON entry_sources(space, entry_id)",
            "CREATE INDEX entry_sources_source ON entry_sources(space, kind, source_id)",
            *table(
                "entry_labels",
                f"""
                id       text NOT NULL,
                space    text NOT NULL,
                entry_id text NOT NULL,
                kind     text NOT NULL,
                value    text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("entry_id", "entries")}
                """,
            ),
            "CREATE INDEX entry_labels_value ON entry_labels(space, kind, value, entry_id)",
            "CREATE INDEX entry_labels_entry ON entry_labels(space, entry_id)",
            *table(
                "fixes",
                f"""
                id          text NOT NULL,
                space       text NOT NULL,
                fingerprint text NOT NULL,
                entry_id    text,
                task_id     text,
                description text NOT NULL,
                worked      bigint NOT NULL,
                created_at  text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("entry_id", "entries")},
                {fk("task_id", "tasks")}
                """,
            ),
            "CREATE INDEX fixes_fingerprint ON fixes(space, fingerprint, created_at)",
            "ALTER TABLE actions ADD COLUMN tool text",
            "ALTER TABLE actions ADD COLUMN decision_id text",
            "ALTER TABLE actions ADD COLUMN started_at text",
            "ALTER TABLE actions ADD COLUMN ended_at text",
            "ALTER TABLE actions ADD COLUMN cpu_seconds double precision",
            "ALTER TABLE actions ADD COLUMN memory_mb double precision",
            "ALTER TABLE actions ADD COLUMN fingerprint text",
            "CREATE INDEX actions_command ON actions(space, command, created_at)",
            "CREATE INDEX actions_fingerprint ON actions(space, fingerprint)",
            "CREATE INDEX actions_decision ON actions(space, decision_id)"
            " WHERE decision_id IS NOT NULL",
            *table(
                "trace_decisions",
                f"""
                id                text NOT NULL,
                space             text NOT NULL,
                task_id           text NOT NULL,
                plan_item_id      text,
                trace_id          text NOT NULL,
                parent_id         text,
                state             text,
                agent             text,
                context           text,
                prompt_tokens     bigint,
                completion_tokens bigint,
                model             text,
                temperature       double precision,
                action            text NOT NULL,
                artifacts         text,
                validation_status text,
                outcome           text NOT NULL,
                error             text,
                created_at        text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("task_id", "tasks")},
                {fk("plan_item_id", "plan_items")},
                {fk("parent_id", "trace_decisions")}
                """,
            ),
            "CREATE INDEX trace_decisions_task ON trace_decisions(space, task_id, created_at)",
            "CREATE INDEX trace_decisions_trace ON trace_decisions(space, trace_id)",
            *table(
                "trace_validations",
                f"""
                id           text NOT NULL,
                space        text NOT NULL,
                task_id      text NOT NULL,
                decision_id  text NOT NULL,
                validator    text NOT NULL,
                passed       bigint NOT NULL,
                requirements text,
                violations   text,
                feedback     text,
                created_at   text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("task_id", "tasks")},
                {fk("decision_id", "trace_decisions")}
                """,
            ),
            "CREATE INDEX trace_validations_decision ON trace_validations(space, decision_id)",
            *table(
                "patterns",
                """
                id             text NOT NULL,
                space          text NOT NULL,
                domain         text NOT NULL,
                name           text NOT NULL,
                kind           text,
                description    text,
                example        text,
                context        text,
                success_count  bigint NOT NULL DEFAULT 0,
                failure_count  bigint NOT NULL DEFAULT 0,
                last_validated text,
                deprecated     bigint NOT NULL DEFAULT 0,
                version        bigint NOT NULL DEFAULT 1,
                created_at     text NOT NULL,
                updated_at     text NOT NULL,
                PRIMARY KEY (space, id)
                """,
            ),
            "CREATE INDEX patterns_domain ON patterns(space, domain, deprecated)",
            *table(
                "guardrails",
                """
                id               text NOT NULL,
                space            text NOT NULL,
                rule_type        text NOT NULL,
                text             text NOT NULL,
                enforcement      text NOT NULL,
                pattern          text,
                valid_examples   text NOT NULL DEFAULT '[]',
                invalid_examples text NOT NULL DEFAULT '[]',
                enabled          bigint NOT NULL DEFAULT 1,
                created_at       text NOT NULL,
                updated_at       text NOT NULL,
                PRIMARY KEY (space, id)
                """,
            ),
            "CREATE INDEX guardrails_space ON guardrails(space, enabled)",
        ),
    ),
    PgMigration(
        4,
        "utility model: job outbox, model calls, running summaries",
        (
            *table(
                "jobs",
                f"""
                id          text NOT NULL,
                space       text NOT NULL,
                kind        text NOT NULL,
                task_id     text NOT NULL,
                step_id     text,
                status      text NOT NULL DEFAULT 'pending',
                attempts    bigint NOT NULL DEFAULT 0,
                lease_until text,
                result      text,
                error       text,
                created_at  text NOT NULL,
                updated_at  text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("task_id", "tasks")},
                {fk("step_id", "plan_items")}
                """,
            ),
            "CREATE INDEX jobs_pending ON jobs(space, status, created_at)",
            "CREATE INDEX jobs_task ON jobs(space, task_id, kind, status)",
            *table(
                "model_calls",
                f"""
                id                text NOT NULL,
                space             text NOT NULL,
                task_id           text,
                purpose           text NOT NULL,
                role              text NOT NULL,
                provider          text NOT NULL,
                model             text NOT NULL,
                prompt_tokens     bigint NOT NULL DEFAULT 0,
                completion_tokens bigint NOT NULL DEFAULT 0,
                seconds           double precision,
                ok                bigint NOT NULL,
                error             text,
                created_at        text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("task_id", "tasks")}
                """,
            ),
            "CREATE INDEX model_calls_task ON model_calls(space, task_id, created_at)",
            "CREATE INDEX model_calls_day ON model_calls(space, created_at)",
            *table(
                "task_summaries",
                f"""
                id            text NOT NULL,
                space         text NOT NULL,
                task_id       text NOT NULL,
                text          text NOT NULL,
                message_count bigint NOT NULL,
                source        text NOT NULL,
                model         text,
                created_at    text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("task_id", "tasks")}
                """,
            ),
            "CREATE INDEX task_summaries_task ON task_summaries(space, task_id, created_at)",
        ),
    ),
    PgMigration(
        5,
        "conversation archive: sessions and verbatim turns",
        (
            *table(
                "sessions",
                f"""
                id             text NOT NULL,
                space          text NOT NULL,
                key            text,
                workspace      text,
                model          text,
                system_prompt  text,
                task_id        text,
                title          text,
                started_at     text NOT NULL,
                last_active_at text NOT NULL,
                total_tokens   bigint NOT NULL DEFAULT 0,
                turn_count     bigint NOT NULL DEFAULT 0,
                state          text NOT NULL DEFAULT '{{}}',
                active         bigint NOT NULL DEFAULT 1,
                PRIMARY KEY (space, id),
                {fk("task_id", "tasks")}
                """,
            ),
            "CREATE INDEX sessions_workspace ON sessions(space, workspace, last_active_at)",
            "CREATE UNIQUE INDEX sessions_key ON sessions(space, key) WHERE key IS NOT NULL",
            *table(
                "turns",
                f"""
                seq          bigint GENERATED BY DEFAULT AS IDENTITY,
                id           text NOT NULL,
                space        text NOT NULL,
                session_id   text NOT NULL,
                turn         bigint NOT NULL,
                role         text NOT NULL,
                content      text,
                text_content bigint NOT NULL,
                tool_calls   text,
                tool_call_id text,
                tool_name    text,
                call_turn    bigint,
                message      text NOT NULL,
                token_count  bigint NOT NULL DEFAULT 0,
                hidden       bigint NOT NULL DEFAULT 0,
                created_at   text NOT NULL,
                PRIMARY KEY (space, id),
                UNIQUE (space, seq),
                UNIQUE (space, session_id, turn),
                {fk("session_id", "sessions")}
                """,
            ),
            "CREATE INDEX turns_tool ON turns(space, session_id, tool_name, turn)"
            " WHERE tool_name IS NOT NULL",
            "CREATE INDEX turns_hidden ON turns(space, session_id, turn) WHERE hidden = 1",
            *(
                Shared(statement) for statement in pg_search_schema.TURNS_INDEX
            ),  # SQLite's turns_fts
        ),
    ),
    PgMigration(
        6,
        "tamper-evident journal: a hash chain per space, append-only events",
        (
            "ALTER TABLE events ADD COLUMN hash text",
            _APPEND_ONLY,
            "CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events"
            " FOR EACH ROW EXECUTE FUNCTION clew_append_only()",
        ),
    ),
    PgMigration(
        7,
        "search over task messages and commands with their output",
        (
            # SQLite's record_docs and records_fts: the same documents, kept by a trigger.
            *table("record_docs", pg_search_schema.RECORD_DOCS),
            *(Shared(statement) for statement in pg_search_schema.RECORD_FUNCTIONS),
            *(Shared(statement) for statement in pg_search_schema.RECORD_TRIGGERS),
            *(Shared(statement) for statement in pg_search_schema.RECORDS_INDEX),
        ),
    ),
    PgMigration(
        8,
        "smart waits, the schedule of polls and maintenance, when tasks were archived",
        (
            *table(
                "waits",
                f"""
                id              text NOT NULL,
                space           text NOT NULL,
                task_id         text NOT NULL,
                step_id         text,
                kind            text NOT NULL,
                target          text NOT NULL,
                criteria        text NOT NULL DEFAULT '{{}}',
                description     text,
                cwd             text,
                poll_seconds    double precision NOT NULL,
                timeout_seconds double precision,
                run_timeout     double precision NOT NULL,
                deadline        text,
                status          text NOT NULL DEFAULT 'watching',
                observation     text,
                checked_at      text,
                result          text,
                ended_at        text,
                created_at      text NOT NULL,
                updated_at      text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("task_id", "tasks")},
                {fk("step_id", "plan_items")}
                """,
            ),
            "CREATE INDEX waits_task ON waits(space, task_id, status)",
            "CREATE INDEX waits_open ON waits(space, status)",
            *table(
                "schedule",
                """
                space   text NOT NULL,
                key     text NOT NULL,
                last_at text NOT NULL,
                runs    bigint NOT NULL DEFAULT 0,
                note    text,
                PRIMARY KEY (space, key)
                """,
            ),
            "ALTER TABLE tasks ADD COLUMN archived_at text",
            "CREATE INDEX tasks_archived ON tasks(space, archived_at) WHERE archived = 1",
        ),
    ),
    PgMigration(
        9,
        "the complete task record: answer, outcome, error summary, entities, confidence, phase"
        " timestamps, plan source, domain, priority, estimate; and each step's record",
        (
            *table(
                "task_records",
                f"""
                id                   text NOT NULL,
                space                text NOT NULL,
                answer               text,
                outcome              text,
                error_reason         text,
                error_step_id        text,
                confidence           double precision,
                domain               text,
                priority             text,
                estimate_seconds     double precision,
                plan_source          text,
                entities             text NOT NULL DEFAULT '{{}}',
                plan_generated_at    text,
                execution_started_at text,
                synthesis_started_at text,
                updated_at           text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("id", "tasks")}
                """,
            ),
            "CREATE INDEX task_records_domain ON task_records(space, domain)",
            *table(
                "step_records",
                f"""
                id         text NOT NULL,
                space      text NOT NULL,
                task_id    text NOT NULL,
                agent      text,
                outcome    text,
                artifacts  text NOT NULL DEFAULT '[]',
                updated_at text NOT NULL,
                PRIMARY KEY (space, id),
                {fk("id", "plan_items")},
                {fk("task_id", "tasks")}
                """,
            ),
            "CREATE INDEX step_records_task ON step_records(space, task_id)",
        ),
    ),
)

# The tables with a sequence column: SQLite's migration 10's (SEQUENCED, imported above).


def _resequenced(table: str, index: str, columns: str) -> tuple[str, str]:
    return f"DROP INDEX {index}", f"CREATE INDEX {index} ON {table}(space, {columns})"


MIGRATIONS += (
    # PostgreSQL stores begin with this release, so there are no rows made before this
    # migration to backfill (SQLite's backfills its older stores from a replay).
    PgMigration(
        10,
        "explicit sequence columns (the creating event's seq) instead of rowid; an entry"
        " source's position; the kind of each command output (text or bytes)",
        (
            *(
                f"ALTER TABLE {table} ADD COLUMN {column} bigint NOT NULL DEFAULT 0"
                for table, column in SEQUENCED
            ),
            "ALTER TABLE actions ADD COLUMN stdout_kind text"
            " CHECK (stdout_kind IN ('text', 'bytes'))",
            "ALTER TABLE actions ADD COLUMN stderr_kind text"
            " CHECK (stderr_kind IN ('text', 'bytes'))",
            *_resequenced("actions", "actions_task", "task_id, created_at, seq"),
            *_resequenced("actions", "actions_command", "command, created_at, seq"),
            *_resequenced("action_logs", "action_logs_action", "action_id, created_at, seq"),
            *_resequenced("task_messages", "task_messages_task", "task_id, created_at, seq"),
            *_resequenced("fixes", "fixes_fingerprint", "fingerprint, created_at, seq"),
            *_resequenced("task_summaries", "task_summaries_task", "task_id, created_at, seq"),
            *_resequenced("model_calls", "model_calls_task", "task_id, created_at, seq"),
            *_resequenced("trace_decisions", "trace_decisions_task", "task_id, created_at, seq"),
            *_resequenced("jobs", "jobs_pending", "status, created_at, seq"),
            *_resequenced("sessions", "sessions_workspace", "workspace, last_active_at, seq"),
            *_resequenced("entry_sources", "entry_sources_entry", "entry_id, position"),
        ),
    ),
)

MIGRATIONS += (
    # SQLite's migration 11: derived rows, never journaled (see there). The vectors are
    # float16 bytes here too, searched in process; `seq` is an identity, which never reuses
    # a number, and a space's rows are written under its write lock, so they commit in seq
    # order and a cache's cursor misses none.
    PgMigration(
        11,
        "the vector index: embeddings of records' text per model, derived and never journaled",
        (
            *table(
                "embeddings",
                """
                seq          bigint GENERATED ALWAYS AS IDENTITY,
                space        text NOT NULL,
                kind         text NOT NULL,
                ref_id       text NOT NULL,
                model        text NOT NULL,
                content_hash text NOT NULL,
                source_at    text NOT NULL,
                task_id      text,
                step_id      text,
                session_id   text,
                created_at   text NOT NULL,
                dim          bigint NOT NULL,
                vector       bytea NOT NULL,
                PRIMARY KEY (space, seq),
                UNIQUE (space, model, kind, ref_id)
                """,
            ),
            "CREATE INDEX embeddings_seq ON embeddings(space, model, seq)",
        ),
    ),
    # SQLite's migration 12: trace decisions get documents in record_docs, kept by a
    # trigger; the generated `search` column indexes them as it does the others.
    PgMigration(
        12,
        "search over the trace's decisions: their action, outcome, error, state, agent, context"
        " and artifacts",
        tuple(Shared(statement) for statement in pg_search_schema.DECISION_FUNCTIONS),
    ),
)

MIGRATIONS += (
    # SQLite's migration 13: the turns of a time, found by their index.
    PgMigration(
        13,
        "turns by time, for a search of the turns of a time",
        ("CREATE INDEX turns_time ON turns(space, created_at)",),
    ),
)


def _backfill_error_lines(raw: Any) -> None:
    """SQLite's backfill_error_lines: the error lines of the middle of each long command
    output written before migration 14, space by space (row-level security lets a row be
    changed only in the transaction's space), one output read at a time."""
    whole = OUTPUT_HEAD + OUTPUT_TAIL
    long_output = f"(octet_length(stdout) > {whole} OR octet_length(stderr) > {whole})"
    raw.execute("SELECT set_config('clew.all_spaces', 'on', true)")
    found = raw.execute(f"SELECT space, id FROM actions WHERE {long_output} ORDER BY space, id")
    for space, action_id in found.fetchall():
        raw.execute("SELECT set_config('clew.space', %s, true)", (space,))
        row = raw.execute(
            "SELECT stdout, stderr FROM actions WHERE space = %s AND id = %s", (space, action_id)
        ).fetchone()
        lines = tuple(error_lines(None if v is None else bytes(v)) for v in row)
        if lines != (None, None):
            raw.execute(
                "UPDATE actions SET stdout_errors = %s, stderr_errors = %s"
                " WHERE space = %s AND id = %s",
                (*lines, space, action_id),
            )
    raw.execute("SELECT set_config('clew.all_spaces', '', true)")
    raw.execute("SELECT set_config('clew.space', '', true)")


MIGRATIONS += (
    # SQLite's migration 14: the error lines of the middle of long command output.
    PgMigration(
        14,
        "the error lines of the middle of long command output, kept and searched",
        (
            "ALTER TABLE actions ADD COLUMN stdout_errors text",
            "ALTER TABLE actions ADD COLUMN stderr_errors text",
            *(Shared(statement) for statement in pg_search_schema.ERROR_LINE_FUNCTIONS),
            PgRun(
                "compute the error lines of the middle of every command output longer than"
                " the index's head and tail into stdout_errors and stderr_errors (the update"
                " trigger indexes them)",
                _backfill_error_lines,
            ),
        ),
    ),
)


def _backfill_turn_events(raw: Any) -> None:
    """SQLite's migration 15 reads the same from each turn's event: the event's seq, and
    where in it the turn's text is (projection_conversations._text_in), for the turns
    written before; space by space (row-level security lets a row be changed only in the
    transaction's space). PostgreSQL keeps the text in the row as well (its search column is
    generated from it), so only the reference is added here."""
    raw.execute("SELECT set_config('clew.all_spaces', 'on', true)")
    spaces = raw.execute("SELECT DISTINCT space FROM turns ORDER BY space").fetchall()
    raw.execute("SELECT set_config('clew.all_spaces', '', true)")
    for (space,) in spaces:
        raw.execute("SELECT set_config('clew.space', %s, true)", (space,))
        raw.execute(
            """
            UPDATE turns t SET event_seq = e.seq, text_in = CASE
                WHEN t.content IS NULL OR e.data::json -> 'turn' -> 'role' IS NULL THEN NULL
                WHEN e.data::json -> 'turn' ->> 'text_from' = 'content' THEN 1
                WHEN e.data::json -> 'turn' ->> 'text_from' = 'output' THEN 2
                WHEN e.data::json -> 'turn' -> 'text_from' IS NOT NULL THEN NULL
                WHEN json_typeof(e.data::json -> 'turn' -> 'text') = 'string' THEN 3 END
            FROM events e
            WHERE t.space = %s AND e.space = t.space AND e.type = 'turn.appended'
              AND e.data::json -> 'turn' ->> 'id' = t.id
            """,
            (space,),
        )
    raw.execute("SELECT set_config('clew.space', '', true)")


MIGRATIONS += (
    # SQLite's migration 15: each turn refers to its event.
    PgMigration(
        15,
        "a turn's text stored once, in its event: turn_rows refer to it, and turns is a"
        " view of them",
        (
            "ALTER TABLE turns ADD COLUMN event_seq bigint",
            "ALTER TABLE turns ADD COLUMN text_in bigint",
            PgRun(
                "record each turn's event seq and where in the event its text is (1 the"
                " message's content, 2 its output, 3 the turn's text; none when the event"
                " holds no text verbatim)",
                _backfill_turn_events,
            ),
        ),
    ),
)

MIGRATIONS += (
    # SQLite's migration 16: a task's open wait actions by an index of them alone.
    PgMigration(
        16,
        "a task's open wait actions found by an index of them alone",
        (
            "CREATE INDEX actions_open_wait ON actions(space, task_id, created_at, seq)"
            " WHERE type = 'wait' AND status = 'started'",
        ),
    ),
)

MIGRATIONS += (
    # SQLite's migration 17: the server's keys and request log. Server administration: a key
    # is found by its prefix before its space is known, and an admin revokes any space's, so
    # these two tables have no row-level security by space (migration 23 gives them one by
    # role) and their keys do not start with `space` (their changes name no space: the one
    # kind of statement tests/test_tenancy.py lets through without one).
    PgMigration(
        17,
        "keys of the HTTP server, one space and scope each, and its request log",
        (
            """
            CREATE TABLE clew_keys (
                prefix       text PRIMARY KEY,
                space        text NOT NULL,
                scope        text NOT NULL,
                name         text,
                hash         text NOT NULL,
                created_at   text NOT NULL,
                last_used_at text,
                revoked_at   text
            )
            """,
            "CREATE INDEX clew_keys_space ON clew_keys(space, created_at)",
            """
            CREATE TABLE clew_requests (
                seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                space      text NOT NULL,
                key_prefix text,
                method     text NOT NULL,
                route      text NOT NULL,
                status     bigint NOT NULL,
                created_at text NOT NULL,
                ms         double precision NOT NULL
            )
            """,
            "CREATE INDEX clew_requests_space ON clew_requests(space, seq)",
        ),
    ),
)

MIGRATIONS += (
    # SQLite's migration 18: LangGraph's checkpoints, channel values by version, writes.
    PgMigration(
        18,
        "LangGraph checkpoints, their channel values by version and their pending writes",
        (
            *table(
                "langgraph_checkpoints",
                """
                space           text NOT NULL,
                thread_id       text NOT NULL,
                ns              text NOT NULL,
                checkpoint_id   text NOT NULL,
                parent_id       text,
                checkpoint_type text NOT NULL,
                checkpoint      bytea NOT NULL,
                metadata_type   text NOT NULL,
                metadata        bytea NOT NULL,
                PRIMARY KEY (space, thread_id, ns, checkpoint_id)
                """,
            ),
            *table(
                "langgraph_blobs",
                """
                space      text NOT NULL,
                thread_id  text NOT NULL,
                ns         text NOT NULL,
                channel    text NOT NULL,
                version    text NOT NULL,
                value_type text NOT NULL,
                value      bytea,
                base_version text,
                base_length  bigint,
                PRIMARY KEY (space, thread_id, ns, channel, version)
                """,
            ),
            *table(
                "langgraph_writes",
                """
                space         text NOT NULL,
                thread_id     text NOT NULL,
                ns            text NOT NULL,
                checkpoint_id text NOT NULL,
                task_id       text NOT NULL,
                idx           bigint NOT NULL,
                channel       text NOT NULL,
                value_type    text NOT NULL,
                value         bytea,
                task_path     text NOT NULL DEFAULT '',
                PRIMARY KEY (space, thread_id, ns, checkpoint_id, task_id, idx)
                """,
            ),
        ),
    ),
)

MIGRATIONS += (
    # SQLite's migration 19: indexes no read uses, written on every event and every turn.
    PgMigration(
        19,
        "no index of events by correlation id, nor of sessions by workspace and last activity",
        ("DROP INDEX IF EXISTS events_correlation", "DROP INDEX IF EXISTS sessions_workspace"),
    ),
)

MIGRATIONS += (
    # SQLite's migration 20: a host wait's seal and folder; the store's record of imports,
    # under row-level security like every table of a space.
    PgMigration(
        20,
        "the seal of a wait that makes the host act, its folder, and the record of imports",
        (
            "ALTER TABLE waits ADD COLUMN seal text",
            "ALTER TABLE waits ADD COLUMN confined_to text",
            *table(
                "clew_imports",
                """
                seq        bigint GENERATED ALWAYS AS IDENTITY,
                space      text NOT NULL,
                first_seq  bigint NOT NULL,
                last_seq   bigint NOT NULL,
                events     bigint NOT NULL,
                door       text NOT NULL,
                key_prefix text,
                user_name  text,
                created_at text NOT NULL,
                PRIMARY KEY (space, seq)
                """,
            ),
            "CREATE INDEX clew_imports_space ON clew_imports(space, last_seq)",
        ),
    ),
)


def _rechain(raw: Any) -> None:
    """SQLite's migration 21 step: chain every event again with version 2 of the hash,
    space by space in seq order (row-level security lets a row be changed only in the
    transaction's space), with the journal's guard off for this step alone."""
    raw.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
    raw.execute("SELECT set_config('clew.all_spaces', 'on', true)")
    spaces = raw.execute("SELECT DISTINCT space FROM events ORDER BY space").fetchall()
    raw.execute("SELECT set_config('clew.all_spaces', '', true)")
    for (space,) in spaces:
        raw.execute("SELECT set_config('clew.space', %s, true)", (space,))
        previous, seq = "", 0
        while True:
            rows = raw.execute(
                "SELECT seq, id, space, task_id, correlation_id, type, data, created_at, hash,"
                " forgotten FROM events WHERE space = %s AND seq > %s ORDER BY seq LIMIT 5000",
                (space, seq),
            ).fetchall()
            if not rows:
                break
            changed = []
            for row in rows:
                link = chain.Link(*row)
                previous = chain.row_hash(previous, link)
                changed.append((previous, space, link.seq))
            with raw.cursor() as cursor:
                cursor.executemany(
                    "UPDATE events SET hash = %s WHERE space = %s AND seq = %s", changed
                )
            seq = rows[-1][0]
    raw.execute("SELECT set_config('clew.space', '', true)")
    raw.execute("ALTER TABLE events ENABLE TRIGGER events_append_only")


# The journal's guard as SQLite's migration 21 makes it: no event is deleted, and the one
# change allowed is forgetting (the data rewritten with the tombstone set; no other column,
# nor a tombstone's digest once set).
_GUARD = Shared(
    "CREATE OR REPLACE FUNCTION clew_append_only() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN"
    " IF TG_OP = 'UPDATE' AND NEW.seq = OLD.seq AND NEW.id = OLD.id AND NEW.space = OLD.space"
    " AND NEW.task_id IS NOT DISTINCT FROM OLD.task_id"
    " AND NEW.correlation_id = OLD.correlation_id AND NEW.type = OLD.type"
    " AND NEW.created_at = OLD.created_at AND NEW.hash IS NOT DISTINCT FROM OLD.hash"
    " AND NEW.forgotten IS NOT NULL AND (OLD.forgotten IS NULL"
    " OR (NEW.forgotten::json ->> 'digest') IS NOT DISTINCT FROM"
    " (OLD.forgotten::json ->> 'digest')) THEN RETURN NEW; END IF;"
    " RAISE EXCEPTION 'the journal is append-only: an event cannot be %',"
    " CASE TG_OP WHEN 'DELETE' THEN 'deleted'"
    " ELSE 'changed, only its content forgotten (clew forget)' END; END $$"
)
_DECISION_DOC = pg_search_schema.DECISION_FUNCTIONS[0]
_DECISION_INSERT = (
    "        INSERT INTO record_docs (kind, ref_id, space, task_id, created_at, title, body,"
    " stderr)"
)
_DECISION_UPDATE = _DECISION_DOC.replace(
    _DECISION_INSERT,
    "        IF TG_OP = 'UPDATE' THEN\n"
    "            UPDATE record_docs SET title = "
    + pg_search_schema.DECISION_TITLE.format(row="NEW.")
    + ", body = "
    + pg_search_schema.DECISION_BODY.format(row="NEW.")
    + "\n            WHERE space = NEW.space AND kind = 'decision' AND ref_id = NEW.id;\n"
    "            RETURN NULL;\n"
    "        END IF;\n" + _DECISION_INSERT,
)
assert _DECISION_UPDATE != _DECISION_DOC

MIGRATIONS += (
    # SQLite's migration 21: forgetting.
    PgMigration(
        21,
        "forgetting: the chain over data digests (version 2), a tombstone beside each event"
        " whose content was forgotten, search documents that follow edited messages and"
        " decisions",
        (
            "ALTER TABLE events ADD COLUMN forgotten text",
            PgRun(
                "chain every event again with version 2 of the hash (over its data's digest,"
                " store/chain.py), space by space in seq order, the journal's guard off for"
                " this step alone",
                _rechain,
            ),
            _GUARD,
            Shared("DROP TRIGGER records_message ON task_messages"),
            Shared(
                "CREATE TRIGGER records_message AFTER INSERT OR DELETE OR UPDATE OF content"
                " ON task_messages FOR EACH ROW EXECUTE FUNCTION clew_record_doc()"
            ),
            Shared(_DECISION_UPDATE),
            Shared("DROP TRIGGER records_decision ON trace_decisions"),
            Shared(
                "CREATE TRIGGER records_decision AFTER INSERT OR DELETE OR UPDATE OF action, "
                + ", ".join(DECISION_FIELDS)
                + " ON trace_decisions FOR EACH ROW EXECUTE FUNCTION clew_decision_doc()"
            ),
        ),
    ),
)

MIGRATIONS += (
    # SQLite's migration 22: what redaction took out of each event, by field and kind.
    PgMigration(
        22,
        "the redactions each event records, by field and kind",
        (
            *table(
                "redactions",
                """
                id         text NOT NULL,
                space      text NOT NULL,
                seq        bigint NOT NULL,
                event_id   text NOT NULL,
                event_type text NOT NULL,
                task_id    text,
                session_id text,
                field      text NOT NULL,
                kind       text NOT NULL,
                count      bigint NOT NULL,
                created_at text NOT NULL,
                PRIMARY KEY (space, id)
                """,
            ),
            "CREATE INDEX redactions_space ON redactions(space, seq)",
        ),
    ),
)


def _revoke_admin_tables(raw: Any) -> None:
    """Take every right on the keys and the request log from each role but their owner (the
    set-up documented before this migration granted a member every table). REVOKE ALL
    FROM a role removes the privileges this owner granted it; the row-level security the
    migration turns on holds any other, granted by someone else."""
    rows = raw.execute(
        "SELECT DISTINCT CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE"
        " quote_ident(pg_get_userbyid(a.grantee)) END FROM pg_class c,"
        " aclexplode(c.relacl) a WHERE c.oid IN ('clew_keys'::regclass,"
        " 'clew_requests'::regclass) AND a.grantee <> c.relowner"
    ).fetchall()
    for (grantee,) in rows:
        raw.execute(f"REVOKE ALL ON TABLE clew_keys, clew_requests FROM {grantee}".encode())


MIGRATIONS += (
    # SQLite's migration 23 does nothing (a file has no roles). Here the server's keys and
    # request log get row-level security with no policy: their owner, who is not held by
    # it (it is enabled, not forced: the owner finds a key by its prefix in any space), and
    # the roles `clew db grant --as server` gives a policy of their own reach their rows;
    # every other role sees none and writes none, whatever it is granted. The migrations'
    # record is readable by every role that may open the store, and written by its owner.
    PgMigration(
        23,
        "database roles: the server's keys and request log reachable only by their owner and"
        " the server's roles, the migrations' record read by all (PostgreSQL's; a SQLite file"
        " has no roles)",
        (
            "ALTER TABLE clew_keys ENABLE ROW LEVEL SECURITY",
            "ALTER TABLE clew_requests ENABLE ROW LEVEL SECURITY",
            "ALTER TABLE clew_migrations ENABLE ROW LEVEL SECURITY",
            "CREATE POLICY clew_migrations_read ON clew_migrations FOR SELECT USING (true)",
            PgRun(
                "revoke every privilege on clew_keys and clew_requests from every role but"
                " their owner, PUBLIC included",
                _revoke_admin_tables,
            ),
        ),
    ),
)

MIGRATIONS += (
    # SQLite's migration 24: the id of each request log line, for folding a spill file twice.
    PgMigration(
        24,
        "an id for each line of the server's request log, kept once per space",
        (
            "ALTER TABLE clew_requests ADD COLUMN line_id text",
            "CREATE UNIQUE INDEX clew_requests_line ON clew_requests(space, line_id)",
        ),
    ),
)


def _backfill_entry_owners(raw: Any) -> None:
    """SQLite's migration 25 reads the same from the journal: each entry's origin from its
    entry.added event, then what entry.kept_open and entry.evidence_added events left on it;
    space by space (row-level security lets a row be changed only in its space)."""
    raw.execute("SELECT set_config('clew.all_spaces', 'on', true)")
    spaces = raw.execute("SELECT DISTINCT space FROM entries ORDER BY space").fetchall()
    raw.execute("SELECT set_config('clew.all_spaces', '', true)")
    for (space,) in spaces:
        raw.execute("SELECT set_config('clew.space', %s, true)", (space,))
        raw.execute(
            """
            UPDATE entries t SET origin = e.data::json -> 'entry' ->> 'origin'
            FROM events e
            WHERE t.space = %s AND e.space = t.space AND e.type = 'entry.added'
              AND e.data::json -> 'entry' ->> 'id' = t.id
              AND e.data::json -> 'entry' ->> 'origin' IS NOT NULL
            """,
            (space,),
        )
        rows = raw.execute(
            "SELECT type, data, created_at FROM events WHERE space = %s"
            " AND type IN ('entry.kept_open', 'entry.evidence_added') ORDER BY seq",
            (space,),
        ).fetchall()
        for entry_id, (kept, evidence) in entry_owners(rows).items():
            raw.execute(
                "UPDATE entries SET keep_open = %s, evidence = %s WHERE space = %s AND id = %s",
                (int(kept), codec.dumps(evidence), space, entry_id),
            )
    raw.execute("SELECT set_config('clew.space', '', true)")


MIGRATIONS += (
    # SQLite's migration 25: who recorded an entry, an error kept open, its evidence.
    PgMigration(
        25,
        "who recorded each entry, whether the agent keeps an error open, and the later passing"
        " runs of an error's command",
        (
            "ALTER TABLE entries ADD COLUMN origin text",
            "ALTER TABLE entries ADD COLUMN keep_open bigint NOT NULL DEFAULT 0",
            "ALTER TABLE entries ADD COLUMN evidence text NOT NULL DEFAULT '[]'",
            PgRun(
                "set each entry's origin, keep_open and evidence from what its events in the"
                " journal say (entry.added's origin, entry.kept_open, entry.evidence_added,"
                " in seq order), space by space, as verify's replay would",
                _backfill_entry_owners,
            ),
        ),
    ),
)

MIGRATIONS += (
    # SQLite's migration 26: search documents for the outline (task names, goals, plan
    # steps, final answers) and semantic memory (patterns, guardrails), kept by triggers.
    PgMigration(
        26,
        "search indexes for task names, goals, plan steps, final answers, patterns, guardrails",
        (
            *table("outline_docs", pg_search_schema.OUTLINE_DOCS),
            *(Shared(statement) for statement in pg_search_schema.OUTLINE_FUNCTIONS),
            *(Shared(statement) for statement in pg_search_schema.OUTLINE_INDEX),
            Shared(pg_search_schema.outline_backfill()),
        ),
    ),
)

LATEST = MIGRATIONS[-1].number


def pg_fingerprint(migration: PgMigration) -> str:
    """Return the fingerprint of a PostgreSQL migration (its number, name and steps)."""
    steps = tuple(
        s
        if isinstance(s, str)
        else f"python {s.fn.__qualname__}: {s.does}"
        if isinstance(s, PgRun)
        else f"shared: {s.sql}"
        for s in migration.statements
    )
    return fingerprint(Migration(migration.number, migration.name, steps))


FINGERPRINTS: dict[int, str] = {m.number: pg_fingerprint(m) for m in MIGRATIONS}
