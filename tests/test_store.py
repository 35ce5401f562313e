"""The SQLite store: settings, migrations, the journal, and verify catching drift."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import clew
from clew.core import codec
from clew.store.migrations import LATEST, MIGRATIONS, PROJECTION_TABLES


def raw(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(db, isolation_level=None)


@pytest.mark.sqlite_only("SQLite's settings and files")
def test_store_uses_wal_foreign_keys_and_busy_timeout(mem: clew.Memory, db: Path) -> None:
    conn = mem._store._conn  # type: ignore[attr-defined]
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    assert (db.parent / (db.name + "-wal")).exists()


@pytest.mark.sqlite_only("reads the SQLite file; test_postgres.py checks PostgreSQL's schema")
def test_migrations_are_recorded_once(db: Path) -> None:
    clew.open(db).close()
    clew.open(db).close()
    rows = raw(db).execute("SELECT number, name FROM clew_migrations ORDER BY number").fetchall()
    assert [r[0] for r in rows] == [m.number for m in MIGRATIONS]
    assert rows[-1][0] == LATEST


@pytest.mark.sqlite_only("compares SQLite files")
def test_a_store_from_the_suites_template_is_one_migrated_step_by_step(
    db: Path, tmp_path: Path
) -> None:
    """The suite fills new stores from a template (conftest.py): it must be exact."""
    from clew.store.sqlite.store import connect
    from tests.conftest import migrate_step_by_step

    clew.open(db).close()  # the suite's way
    stepwise = connect(str(tmp_path / "stepwise.db"))
    migrate_step_by_step(stepwise)
    filled = connect(str(db))

    def shape(conn: sqlite3.Connection) -> tuple[list[tuple[object, ...]], list[object], str]:
        schema = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        steps = "SELECT number, name, fingerprint FROM clew_migrations ORDER BY number"
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        return (
            [tuple(r) for r in conn.execute(schema)],
            [tuple(r) for r in conn.execute(steps)],
            mode,
        )

    assert shape(filled) == shape(stepwise)
    assert shape(filled)[2] == "wal"
    assert [step[0] for step in shape(filled)[1]] == [m.number for m in MIGRATIONS]


_FTS_TABLES = tuple(f"_fts{suffix}" for suffix in ("", "_data", "_idx", "_docsize", "_config"))


@pytest.mark.sqlite_only("reads the SQLite file; test_postgres.py checks PostgreSQL's schema")
def test_every_table_carries_a_space(mem: clew.Memory, db: Path) -> None:
    conn = raw(db)
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        # The full-text indexes (virtual tables and their shadow tables) index entries and
        # turns, which carry their space; searches filter on it.
        if table in ("clew_migrations", "sqlite_sequence") or table.endswith(_FTS_TABLES):
            continue
        columns = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        assert "space" in columns, table


@pytest.mark.sqlite_only("reads the SQLite file; test_postgres.py checks PostgreSQL's schema")
def test_a_newer_schema_is_refused(db: Path) -> None:
    clew.open(db).close()
    raw(db).execute("INSERT INTO clew_migrations VALUES (?, 'future', 'x', 'f')", (LATEST + 1,))
    with pytest.raises(clew.StoreError, match="upgrade clew"):
        clew.open(db)


@pytest.mark.sqlite_only("reads the SQLite file's indexes; test_postgres.py migrates PostgreSQL")
def test_a_store_before_19_drops_the_indexes_no_read_uses(db: Path) -> None:
    """Migration 19: events by correlation id and sessions by workspace and last activity
    were written on every event and every turn and read by nothing. Sessions still list
    the most recently active first, and the store still verifies."""
    from tests.old_stores import undo_migration_19

    dropped = {"events_correlation", "sessions_workspace"}
    with clew.open(db) as mem:
        first = mem.start_session(workspace="/a")
        second = mem.start_session(workspace="/b")
        mem.append_turn(first.id, {"role": "user", "content": "the newest turn"})
    conn = raw(db)
    undo_migration_19(conn)
    indexes = "SELECT name FROM sqlite_master WHERE type = 'index'"
    assert dropped <= {r[0] for r in conn.execute(indexes)}
    conn.close()
    with clew.open(db) as mem:
        assert [s.id for s in mem.list_sessions()] == [first.id, second.id]
        mem.append_turn(second.id, {"role": "user", "content": "newer still"})
        assert [s.id for s in mem.list_sessions()] == [second.id, first.id]
        assert mem.verify().ok
    assert not dropped & {r[0] for r in raw(db).execute(indexes)}


def test_files_that_are_not_clew_stores_are_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello " * 1000)
    with pytest.raises(clew.StoreError, match="not a clew store"):
        clew.open(text)
    other = tmp_path / "other.db"
    raw(other).execute("CREATE TABLE people (name TEXT)")
    with pytest.raises(clew.StoreError, match="not a clew store"):
        clew.open(other)
    assert raw(other).execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 1


def test_every_event_has_the_journal_fields(mem: clew.Memory) -> None:
    task = mem.create_task("T", ["a"])
    mem.update_task(task.id, message="m", step=1, step_status="active")
    events = mem.journal()
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    for event in events:
        assert event.id and event.space == mem.space and event.task_id == task.id
        assert event.correlation_id and event.type and isinstance(event.data, dict)
        assert event.created_at.endswith("Z")


def test_an_error_inside_a_write_rolls_back_event_and_rows(mem: clew.Memory) -> None:
    task = mem.create_task("T")
    store = mem._store  # type: ignore[attr-defined]
    with pytest.raises(RuntimeError), store.transaction(write=True):
        store.append(
            type="message.added",
            task_id=task.id,
            correlation_id="c",
            data={"message": {"id": "m1", "role": "agent", "type": "text", "content": "x"}},
            created_at="2026-11-22T09:00:00.000000Z",
        )
        raise RuntimeError("crash after the event")
    assert len(mem.journal()) == 1 and mem.list_messages(task.id) == []
    assert mem.verify().ok


def test_facade_calls_inside_one_write_commit_together_or_not_at_all(mem: clew.Memory) -> None:
    # How an adapter makes several calls one transaction (ADK's append): they join the
    # outer write; its failure takes back every one, its success keeps every one.
    before = mem.journal_head()
    with pytest.raises(RuntimeError), mem._write():  # type: ignore[attr-defined]
        mem.open_session("k1")
        mem.append_turn("k1", {"role": "user", "content": "kept only with the rest"})
        mem.open_session("k2")
        raise RuntimeError("crash between the calls")
    assert mem.journal_head() == before and mem.list_sessions() == []
    with mem._write():  # type: ignore[attr-defined]
        mem.open_session("k1")
        mem.append_turn("k1", {"role": "user", "content": "hello"})
        mem.open_session("k2")
    assert [t.text for t in mem.list_turns("k1")] == ["hello"]
    assert sorted(s.key or "" for s in mem.list_sessions()) == ["k1", "k2"]
    assert mem.verify().ok


@pytest.fixture
def busy_store(mem: clew.Memory) -> clew.Memory:
    task = mem.create_task("T", ["a", "b"])
    mem.update_task(task.id, message="m", step=1, step_status="completed")
    action = mem.record_action(task.id, command="ls", exit_code=0, stdout=b"\xff")
    mem.log_action(action.id, "log")
    error = mem.add_error(task.id, "disk full", step=2, tags=["io"])
    mem.resolve(error.id, "freed 2 GB")
    mem.record_files(task.id, created=["a.py"], modified=["a.py", "b.py"])
    assert mem.verify().ok
    return mem


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
@pytest.mark.parametrize(
    ("tamper", "table", "column"),
    [
        ("UPDATE plan_items SET title = 'forged' WHERE ordinal = 1", "plan_items", "title"),
        ("UPDATE tasks SET status = 'completed'", "tasks", "status"),
        ("UPDATE actions SET stdout = x'fe'", "actions", "stdout"),
        ("DELETE FROM action_logs", "action_logs", "*"),
        ("UPDATE entries SET resolution = 'forged'", "entries", "resolution"),
        ("UPDATE task_files SET modifications = 9", "task_files", "modifications"),
        (
            "INSERT INTO task_messages SELECT 'zzzzzzzzzz', space, task_id, role, type,"
            " 'injected', created_at, seq FROM task_messages",
            "task_messages",
            "*",
        ),
    ],
)
def test_verify_reports_tables_that_drift_from_the_journal(
    busy_store: clew.Memory, db: Path, tamper: str, table: str, column: str
) -> None:
    raw(db).execute(tamper)
    report = busy_store.verify()
    assert not report.ok
    assert {(d.table, d.column) for d in report.differences} == {(table, column)}


def test_verify_counts_rows_of_every_projection(busy_store: clew.Memory) -> None:
    report = busy_store.verify()
    assert set(report.rows) == set(PROJECTION_TABLES)
    assert report.rows == {
        "tasks": 1,
        "plan_items": 2,
        "actions": 1,
        "action_logs": 1,
        "task_messages": 1,
        "task_records": 1,
        "step_records": 0,
        "entries": 1,
        "task_files": 2,
        "entry_sources": 0,
        "entry_labels": 1,
        "fixes": 1,
        "trace_decisions": 0,
        "trace_validations": 0,
        "patterns": 0,
        "guardrails": 0,
        "jobs": 1,  # step 1's extraction
        "model_calls": 0,
        "task_summaries": 0,
        "sessions": 0,
        "turns": 0,
        "waits": 0,
        "redactions": 0,
    }
    assert report.events == len(busy_store.journal())


_keys = st.sampled_from(["$bytes", "$$bytes", "$", "a"]) | st.text(max_size=5)
json_leaf = st.none() | st.booleans() | st.integers() | st.text() | st.binary()
json_like = st.recursive(
    json_leaf,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=4),
    max_leaves=20,
)


@given(json_like)
def test_journal_codec_round_trips_bytes_and_dollar_keys(value: object) -> None:
    assert codec.loads(codec.dumps(value)) == value


def test_threads_can_share_one_memory(mem: clew.Memory) -> None:
    import threading

    task = mem.create_task("shared", ["a"])
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(40):
                mem.add_message(task.id, f"thread {n} message {i}")
                mem.list_actions(task.id)
                mem.record_action(task.id, command=f"t{n}-{i}", exit_code=i % 2)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(mem.list_messages(task.id)) == 160
    assert len(mem.list_actions(task.id)) == 160
    assert mem.verify().ok


def test_a_tail_read_gives_the_newest_events_of_a_task_oldest_first(mem: clew.Memory) -> None:
    task = mem.create_task("long", ["one", "two"])
    other = mem.create_task("other")
    for n in range(12):
        mem.update_task(task.id, message=f"note {n}")
        mem.update_task(other.id, message=f"other {n}")
    whole = mem.journal(task_id=task.id)
    for size in (1, 5, len(whole), len(whole) + 3):
        tail = mem.journal(task_id=task.id, limit=size, newest=True)
        assert [e.seq for e in tail] == [e.seq for e in whole][-size:]
    assert mem.journal(task_id=task.id, newest=True) == whole  # no limit: everything
    assert [e.seq for e in mem.journal(limit=3, newest=True)] == [e.seq for e in mem.journal()][-3:]
    revised = mem.journal(task_id=task.id, types=["task.created"])
    assert [e.type for e in revised] == ["task.created"]
