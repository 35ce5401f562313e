"""The PostgreSQL store's own guarantees: the same logical schema as SQLite, keys that start
with the space, row-level security as a second wall, writers serialized per space, verify,
typed errors, a password never shown, and psycopg never loaded for a SQLite store.

The store and facade behaviour shared with SQLite is tested by the conformance suite (the
modules in conftest.CONFORMANCE run on both backends)."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import clew
from clew.store.postgres.store import PostgresStore
from tests.conftest import FakeClock, new_space, postgres_url, row_security_gaps, run_in_lockstep

psycopg = pytest.importorskip("psycopg")


@pytest.fixture
def url() -> str:
    return postgres_url()


@pytest.fixture
def admin(url: str) -> Iterator[Any]:
    """A superuser connection to the worker's database (it bypasses row-level security)."""
    with psycopg.connect(url, autocommit=True) as conn:
        yield conn


def open_pg(url: str, space: str | None = None, **kwargs: Any) -> clew.Memory:
    return clew.open(url, space=space or new_space(), clock=FakeClock(), **kwargs)


# -- the schema ------------------------------------------------------------------------------

# SQLite's FTS5 tables (and their shadow tables) have no counterpart here: PostgreSQL keeps
# its search vectors in generated `search` columns (store/postgres/search_schema.py), left
# out below.
# `record_docs`, the documents of messages and commands, is on both.
_SQLITE_ONLY = ("sqlite_sequence",)
_TYPES = {"TEXT": "text", "INTEGER": "bigint", "REAL": "double precision", "BLOB": "bytea"}


def sqlite_schema(path: Path) -> dict[str, list[tuple[str, str, bool]]]:
    conn = sqlite3.connect(path)
    tables = [
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if "_fts" not in r[0] and r[0] not in _SQLITE_ONLY
    ]
    schema = {}
    for table in tables:
        # A PRIMARY KEY column never holds NULL, whatever table_info says of it.
        schema[table] = [
            (r[1], _TYPES[r[2]], bool(r[3] or r[5]))
            for r in conn.execute(f"PRAGMA table_info({table})")
        ]
    # `turns` is a view of turn_rows there (migration 15): its rows keep a turn's message only
    # where the journal's text of it differs, and the view always gives one.
    rows = schema.pop("turn_rows")
    schema["turns"] = [(n, t, nn or n == "message") for n, t, nn in rows]
    conn.close()
    return schema


def pg_schema(admin: Any) -> dict[str, list[tuple[str, str, bool]]]:
    rows = admin.execute(
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND is_generated = 'NEVER'"
        " ORDER BY table_name, ordinal_position"
    ).fetchall()
    schema: dict[str, list[tuple[str, str, bool]]] = {}
    for table, column, kind, nullable in rows:
        schema.setdefault(table, []).append((column, kind, nullable == "NO"))
    return schema


def test_both_backends_reach_the_same_logical_schema(url: str, admin: Any, tmp_path: Path) -> None:
    clew.open(tmp_path / "s.db").close()
    sqlite = sqlite_schema(tmp_path / "s.db")
    postgres = pg_schema(admin)
    assert sorted(postgres) == sorted(sqlite)
    for table, columns in sqlite.items():
        assert postgres[table] == columns, table


def test_both_backends_record_the_same_migration_numbers(admin: Any, tmp_path: Path) -> None:
    clew.open(tmp_path / "s.db").close()
    conn = sqlite3.connect(tmp_path / "s.db")
    on_sqlite = [(r[0], r[1]) for r in conn.execute("SELECT number, name FROM clew_migrations")]
    conn.close()
    on_pg = admin.execute("SELECT number, name FROM clew_migrations ORDER BY number").fetchall()
    assert [tuple(r) for r in on_pg] == sorted(on_sqlite)


def test_migration_19_leaves_no_index_no_read_uses(url: str, admin: Any) -> None:
    """Events by correlation id and sessions by workspace were written on every event and
    turn and read by nothing: gone on PostgreSQL as on SQLite (test_store.py), and sessions
    still list the most recently active first."""
    names = admin.execute(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
    ).fetchall()
    assert {r[0] for r in names} & {"events_correlation", "sessions_workspace"} == set()
    clock = FakeClock()
    with clew.open(url, space=new_space(), clock=clock) as mem:
        first, second = mem.start_session(workspace="/a"), mem.start_session(workspace="/b")
        clock.advance(1)
        mem.append_turn(first.id, {"role": "user", "content": "the newest turn"})
        assert [s.id for s in mem.list_sessions()] == [first.id, second.id]


# Tables of the whole store, not of a space: the migrations, and the HTTP server's keys and
# request log (a key is found by its prefix before its space is known; migration 17).
_BOOKKEEPING = "('clew_migrations', 'clew_keys', 'clew_requests')"


def test_every_key_starts_with_the_space_and_every_table_has_row_security(admin: Any) -> None:
    """Keys by space for every table of task memory; row-level security on every table of
    the schema, by space or, for those of NOT_FORCED (conftest.py), by role (test_db_roles.py
    tries it as each role)."""
    keys = admin.execute(
        "SELECT c.relname, i.relname, a.attname FROM pg_index x"
        " JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid"
        " JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = x.indkey[0]"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE (x.indisunique OR x.indisprimary) AND n.nspname = current_schema()"
        f" AND c.relname NOT IN {_BOOKKEEPING}"
    ).fetchall()
    assert keys
    assert [(t, i) for t, i, first in keys if first != "space"] == []
    assert row_security_gaps(admin) == []


@pytest.fixture
def own_database(url: str, admin: Any) -> Iterator[str]:
    """A database of the test's own (the worker's is shared by the other tests' spaces)."""
    name = f"clew_own_{uuid.uuid4().hex[:8]}"
    admin.execute(f"CREATE DATABASE {name}")
    yield url.rsplit("/", 1)[0] + "/" + name
    admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def test_a_newer_schema_is_refused(own_database: str) -> None:
    clew.open(own_database).close()
    with psycopg.connect(own_database, autocommit=True) as conn:
        conn.execute("INSERT INTO clew_migrations VALUES (99, 'future', 'x', 'f')")
    with pytest.raises(clew.StoreError, match="upgrade clew"):
        clew.open(own_database)


# -- row-level security ----------------------------------------------------------------------


@pytest.fixture
def role(url: str, admin: Any) -> Iterator[str]:
    """An ordinary role (not a superuser, no BYPASSRLS) that may use clew's tables: how a
    team store should connect. Returns its URL."""
    name = f"clew_member_{uuid.uuid4().hex[:8]}"
    admin.execute(f"CREATE ROLE {name} LOGIN")
    with clew.open(url, space=new_space()) as owner:  # as docs/team-store.md says
        owner.grant_role(name, "member")
    yield url.replace("://root@", f"://{name}@", 1)
    admin.execute(f"DROP OWNED BY {name}")
    admin.execute(f"DROP ROLE {name}")


def test_a_query_without_a_space_filter_sees_only_its_space(role: str) -> None:
    here, there = new_space(), new_space()
    with open_pg(role, there) as other:
        other.create_task("theirs", ["x"])
    with open_pg(role, here) as mem:
        mem.create_task("ours", ["y"])
        store = mem._store
        assert isinstance(store, PostgresStore)
        rows = store._rows("SELECT space, name FROM tasks")  # no WHERE space = ?
        assert [(r["space"], r["name"]) for r in rows] == [(here, "ours")]
        assert store._rows("SELECT count(*) FROM events")[0][0] == 1


def test_a_write_with_another_space_is_refused(role: str) -> None:
    with open_pg(role) as mem:
        store = mem._store
        assert isinstance(store, PostgresStore)
        with pytest.raises(clew.StoreError, match="row-level security"):  # noqa: SIM117
            with store.transaction(write=True):
                store._rows(
                    "INSERT INTO tasks (id, space, name, status, created_at, updated_at)"
                    " VALUES ('tskforged', 'elsewhere', 'x', 'active', 't', 't')"
                )
        assert mem.list_tasks() == []


def test_an_ordinary_role_verifies_its_space(role: str) -> None:
    with open_pg(role) as mem:
        task = mem.create_task("t", ["a", "b"])
        mem.update_task(task.id, step=1, step_status="completed")
        report = mem.verify()
    assert report.ok, report.differences
    assert report.rows["plan_items"] == 2


# -- writers, verify, errors -----------------------------------------------------------------

_WRITER = """
import sys, clew
url, space, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
mem = clew.open(url, space=space)
task = mem.create_task("w", ["a"])
print("ready", flush=True)
sys.stdin.readline()
for i in range(n):
    mem.update_task(task.id, message=f"note {i}")
mem.close()
"""


def test_writers_in_several_processes_and_spaces_keep_every_chain_whole(url: str) -> None:
    one, two = new_space(), new_space()
    spaces = [one, one, one, two]
    results = run_in_lockstep([[_WRITER, url, space, "15"] for space in spaces])
    assert [code for code, _, _ in results] == [0] * 4, results
    for space, writers in ((one, 3), (two, 1)):
        with open_pg(url, space) as mem:
            report = mem.verify()
            assert report.ok, report.differences
            assert report.events == writers * 16  # each: task.created, then 15 messages
            seqs = [e.seq for e in mem.journal()]
            assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_verify_finds_a_changed_row_and_a_changed_event(url: str, admin: Any) -> None:
    with open_pg(url) as mem:
        task = mem.create_task("t", ["a"])
        assert mem.verify().ok
        space = mem.space
        admin.execute("UPDATE tasks SET name = 'forged' WHERE space = %s", (space,))
        found = mem.verify().differences
        assert [(d.table, d.column) for d in found] == [("tasks", "name")]
        admin.execute("SET session_replication_role = replica")  # skips the append-only guard
        admin.execute(
            "UPDATE events SET created_at = 'x' WHERE space = %s AND task_id = %s",
            (space, task.id),
        )
        admin.execute("SET session_replication_role = DEFAULT")
        kinds = {(d.table, d.column) for d in mem.verify().differences}
    assert ("events", "hash") in kinds


def test_verify_leaves_no_temporary_table_behind(own_database: str) -> None:
    """A temporary table shadows the real one of its name for the rest of its session: one
    left on a connection a pooler hands to another client would take that client's writes."""
    temporary = "SELECT count(*) FROM pg_class WHERE relpersistence = 't' AND relname = 'events'"
    with open_pg(own_database) as mem:  # a database of its own: every space in it is sound
        mem.create_task("t", ["a"])
        assert mem.verify().ok and mem.verify(all_spaces=True).ok
        mem.create_task("u", ["b"])
        assert len(mem.list_tasks()) == 2
        with psycopg.connect(own_database, autocommit=True) as other:
            assert other.execute(temporary).fetchone() == (0,)


def test_verify_all_spaces_replays_every_space(own_database: str) -> None:
    with open_pg(own_database) as one, open_pg(own_database) as two:
        one.create_task("a", ["x"])
        two.create_task("b", ["y", "z"])
        mine = one.verify()
        every = one.verify(all_spaces=True)
    assert mine.ok and every.ok, every.differences
    assert every.events == 2 and mine.events == 1
    assert every.rows["plan_items"] == 3 and mine.rows["plan_items"] == 1


def test_the_journal_is_append_only(url: str) -> None:
    with open_pg(url) as mem:
        mem.create_task("t", [])
        store = mem._store
        assert isinstance(store, PostgresStore)
        with pytest.raises(clew.StoreError, match="append-only"):  # noqa: SIM117
            with store.transaction(write=True):
                store._rows("DELETE FROM events")


def test_a_held_space_lock_is_a_busy_error(url: str, admin: Any) -> None:
    with open_pg(url, busy_timeout=0.2) as mem:
        admin.execute("BEGIN")
        admin.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (mem.space,))
        try:
            with pytest.raises(clew.StoreBusyError, match="busy"):
                mem.create_task("t", [])
        finally:
            admin.execute("ROLLBACK")
        mem.create_task("t", [])  # free again


def test_connections_the_server_dropped_are_replaced(url: str, admin: Any) -> None:
    # Named, so that only this store's connections are dropped (not another test's).
    with open_pg(url + "?application_name=clew_dropped") as mem:
        mem.create_task("t", [])
        dropped = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name = 'clew_dropped'"
        ).fetchall()
        assert dropped and all(ok for (ok,) in dropped)
        # Nothing had run on them: the store takes fresh ones instead of failing the call.
        assert [t.name for t in mem.list_tasks()] == ["t"]


def test_an_unreachable_server_is_one_store_error() -> None:
    with pytest.raises(clew.StoreError, match="cannot reach the PostgreSQL store"):
        clew.open("postgresql://root@127.0.0.1:1/nowhere")


def test_a_read_only_server_opens_for_reading(url: str, admin: Any, role: str) -> None:
    name = role.split("://", 1)[1].split("@", 1)[0]
    with open_pg(role) as mem:
        mem.create_task("t", [])
        space = mem.space
    admin.execute(f"ALTER ROLE {name} SET default_transaction_read_only = on")
    with open_pg(role, space) as mem:
        assert [t.name for t in mem.list_tasks()] == ["t"]
        with pytest.raises(clew.StoreReadOnlyError, match="read-only"):
            mem.create_task("u", [])
        assert mem.verify().ok  # its temporary tables are all it writes


# -- the doors -------------------------------------------------------------------------------


def test_a_password_is_never_shown(url: str, tmp_path: Path) -> None:
    secret = url.replace("://root@", "://root:hunter2secret@", 1)  # trust auth ignores it
    with clew.open(secret, space=new_space()) as mem:
        assert "hunter2secret" not in mem.path and ":***@" in mem.path
    refused = "postgresql://root:hunter2secret@127.0.0.1:1/nowhere"
    for location in (secret, refused):
        done = subprocess.run(
            [sys.executable, "-m", "clew", "--db", location, "init"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert "hunter2secret" not in done.stdout + done.stderr
        assert "***" in done.stdout + done.stderr
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_the_cli_on_a_sqlite_store_never_imports_psycopg(tmp_path: Path) -> None:
    code = (
        "import sys; from clew.cli import main\n"
        f"for args in (['init'], ['task', 'add', 'x'], ['task', 'list'], ['where']):\n"
        f"    main(['--db', {str(tmp_path / 's.db')!r}, *args])\n"
        "print(sorted(m for m in sys.modules if m.startswith('psycopg')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr


# -- moving a store ---------------------------------------------------------------------------


def unsequenced(journal: str) -> str:
    """A journal file without each event's `seq` (a store numbers its own events)."""
    return re.sub(r'^\{"seq":\d+,', "{", journal, flags=re.M)


def test_a_store_moves_sqlite_to_postgresql_to_sqlite_exactly(url: str, tmp_path: Path) -> None:
    from tests.roundtrip import assert_same_store
    from tests.test_move import exported, work

    space = new_space()  # the same space all the way: then the hashes are the same too
    with clew.open(tmp_path / "a.db", space=space, clock=FakeClock()) as local:
        work(local)
        text = exported(local)
        head = local.verify().heads
    with clew.open(url, space=space) as team:
        report = team.import_events(text)
        assert report.skipped == 0 and report.added == text.count("\n") - 2
        checked = team.verify()
        assert checked.ok, checked.differences
        assert checked.heads == head
        # The team store writes the same file, but for each event's seq, which is the store's.
        assert unsequenced(exported(team)) == unsequenced(text)
    with clew.open(tmp_path / "b.db", space=space) as back:
        back.import_events(text)
    assert_same_store(str(tmp_path / "a.db"), str(tmp_path / "b.db"), space)


def test_a_push_to_a_team_store_sends_each_event_once(url: str, tmp_path: Path) -> None:
    from tests.test_move import exported, work

    space = new_space()
    with clew.open(tmp_path / "a.db", space=space, clock=FakeClock()) as local:
        work(local)
        first = local.push(url)
        assert first.added == len(local.journal()) and local.push(url).added == 0
        local.create_task("later", ["x"])
        assert local.push(url).added == 1
        with clew.open(url, space=space) as team:
            assert unsequenced(exported(team)) == unsequenced(exported(local))
            assert team.verify().ok


def test_one_journal_in_two_spaces_stays_two_even_for_a_superuser(url: str, tmp_path: Path) -> None:
    # The test connects as a superuser, which row-level security lets through: the first wall
    # (every change held to its space) must keep the spaces apart by itself.
    from tests.test_move import exported

    with clew.open(tmp_path / "a.db", clock=FakeClock()) as local:
        task = local.create_task("shared", ["a", "b"])
        text = exported(local)
    one, two = open_pg(url), open_pg(url)
    with one, two:
        one.import_events(text)
        two.import_events(text)  # the same ids, in another space
        one.update_task(task.id, step=1, step_status="completed", status="paused")
        assert two.get_task(task.id).status.value == "active"
        assert [s.status.value for s in two.get_task(task.id).plan] == ["pending", "pending"]
        assert one.verify().ok and two.verify().ok


# -- decisions in the search index (migration 12) ---------------------------------------------


def test_migration_12_indexes_every_space_s_decisions_even_for_an_ordinary_role(
    own_database: str,
) -> None:
    """A store made before migration 12: its decisions of every space get their documents
    when it opens; the backfill writes space by space, which row-level security needs
    (checked by running it as a role that is subject to it)."""
    from clew.store.postgres import search_schema as pg_search_schema

    made: dict[str, tuple[str, str]] = {}
    for space in (new_space(), new_space()):
        with open_pg(own_database, space) as mem:
            task = mem.create_task("Deploy", ["one"])
            made[space] = (
                mem.trace_decision(task.id, "pin the registry", error="denied by osprey").id,
                mem.trace_decision(task.id, "retry the push", step=1).id,
            )

    def undo(conn: Any) -> None:
        conn.execute("DELETE FROM record_docs WHERE kind = 'decision'")
        assert conn.execute("SELECT count(*) FROM record_docs").fetchone() == (0,)

    def indexed(*, verify: bool = False) -> None:
        for space, (pin, retry) in made.items():
            with open_pg(own_database, space) as mem:
                assert [h.id for h in mem.search_all("osprey")] == [pin]
                assert [h.id for h in mem.search_all("retry", kinds="decision")] == [retry]
                assert not verify or mem.verify().ok

    with psycopg.connect(own_database, autocommit=True) as conn:
        undo(conn)
        conn.execute("DROP TRIGGER records_decision ON trace_decisions")
        conn.execute("DELETE FROM clew_migrations WHERE number = 12")
    indexed()  # opening applied migration 12 again
    member = f"clew_member_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(own_database, autocommit=True) as conn:
        undo(conn)
        conn.execute(f"CREATE ROLE {member} LOGIN")
        conn.execute(f"GRANT SELECT, INSERT ON ALL TABLES IN SCHEMA public TO {member}")
        try:
            with psycopg.connect(own_database.replace("://root@", f"://{member}@", 1),
                                 autocommit=True) as as_member:  # fmt: skip
                as_member.execute(pg_search_schema.DECISION_FUNCTIONS[-1])
        finally:
            conn.execute(f"DROP OWNED BY {member}")
            conn.execute(f"DROP ROLE {member}")
    indexed(verify=True)


def test_migration_15_gives_older_turns_the_reference_the_projection_writes(url: str) -> None:
    from clew.store.postgres.migrations import _backfill_turn_events
    from tests.test_derived_events import _conversation, _replay_fixture

    with open_pg(url) as mem:
        _replay_fixture(mem)  # turns of the older shape: their text is derived when read
        sid = _conversation(mem)
        mem.append_turn(sid, {"type": "function_call_output", "call_id": "x", "output": "ok"})
        mem.append_turn(sid, role="assistant", content=[{"type": "text", "text": "parts"}])
        select = "SELECT id, event_seq, text_in FROM turns WHERE space = %s ORDER BY id"
        with psycopg.connect(url) as raw:
            written = raw.execute(select, (mem.space,)).fetchall()
            # As a store made before migration 15 holds them.
            raw.execute(
                "UPDATE turns SET event_seq = NULL, text_in = NULL WHERE space = %s", (mem.space,)
            )
        with psycopg.connect(url) as raw:
            _backfill_turn_events(raw)
        with psycopg.connect(url) as raw:
            assert raw.execute(select, (mem.space,)).fetchall() == written
        assert sorted({w[2] for w in written}, key=str) == [1, 2, 3, None]
        assert mem.verify().ok


def test_migration_21_chains_every_space_again_with_the_guard_back_after(
    url: str, admin: Any
) -> None:
    """Migration 21 on PostgreSQL: a journal chained with version 1 (as every store was) is
    chained again with version 2, space by space, and the guard refuses changes after."""
    from clew.core import chain
    from clew.store.postgres.migrations import _rechain

    spaces = [new_space(), new_space()]
    for space in spaces:
        with open_pg(url, space) as mem:
            task = mem.create_task("rechain", ["a"])
            mem.update_task(task.id, message="hello", step=1, step_status="completed")
    select = "SELECT seq, id, space, task_id, correlation_id, type, data, created_at, hash"
    select += ", forgotten FROM events WHERE space = %s ORDER BY seq"
    v2 = {s: [r[8] for r in admin.execute(select, (s,)).fetchall()] for s in spaces}
    admin.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
    for space in spaces:  # as a store made before migration 21 holds its journal
        links = [chain.Link(*r) for r in admin.execute(select, (space,)).fetchall()]
        for seq, digest in chain.chained_v1(links):
            admin.execute("UPDATE events SET hash = %s WHERE space = %s AND seq = %s",
                          (digest, space, seq))  # fmt: skip
    admin.execute("ALTER TABLE events ENABLE TRIGGER events_append_only")
    assert [r[8] for r in admin.execute(select, (spaces[0],)).fetchall()] != v2[spaces[0]]
    with psycopg.connect(url) as raw:
        _rechain(raw)
    for space in spaces:
        assert [r[8] for r in admin.execute(select, (space,)).fetchall()] == v2[space]
        with open_pg(url, space) as mem:
            assert mem.verify().ok
    with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
        admin.execute("UPDATE events SET hash = 'x' WHERE space = %s", (spaces[0],))
