"""The journal holds: a hash chain per space, append-only events, scoped verify, damaged
events reported (not crashed on), migrations fingerprinted, old event shapes upgraded."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import clew
from clew.core import chain
from clew.store import projection
from clew.store.migrations import FINGERPRINTS, LATEST, MIGRATIONS
from clew.store.sqlite.backfill import SEQUENCED
from clew.store.sqlite.connection import SQLiteConnection
from tests.conftest import FakeClock, Result, new_space, run_in_lockstep

Cli = Callable[..., Result]


def raw(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(db, isolation_level=None)


def unlock(conn: sqlite3.Connection) -> None:
    """Do what an attacker with sqlite3 would: drop the append-only triggers."""
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("DROP TRIGGER events_no_delete")


def links(db: Path, space: str | None = None) -> list[chain.Link]:
    where = "" if space is None else f" WHERE space = '{space}'"
    rows = raw(db).execute(
        "SELECT seq, id, space, task_id, correlation_id, type, data, created_at, hash"
        f" FROM events{where} ORDER BY seq"
    )
    return [chain.Link(*r) for r in rows]


def work(mem: clew.Memory) -> str:
    """A little of everything: a task, steps, a command, a message, an entry, a turn."""
    task = mem.create_task("Deploy", ["Build", "Ship"])
    mem.update_task(task.id, step=1, step_status="active", message="building")
    mem.record_action(task.id, command="make", exit_code=0, stdout="ok", step=1)
    mem.add_entry("decision", "use ghcr.io", task_id=task.id)
    session = mem.start_session(workspace="/w")
    mem.append_turn(session.id, {"role": "user", "content": "hello"})
    return task.id


def run_clew(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clew", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


# -- the chain ------------------------------------------------------------------------------


@pytest.mark.sqlite_only("reads the SQLite file")
def test_each_event_carries_a_hash_chained_within_its_space(db: Path, clock: FakeClock) -> None:
    with clew.open(db, space="alpha", clock=clock) as alpha, clew.open(db, space="beta") as beta:
        work(alpha)
        beta.create_task("beta's")
        alpha.create_task("alpha's second")
        events = alpha.journal()
        assert all(e.hash for e in events)
        assert alpha.verify().heads == {"alpha": events[-1].hash}
    for space in ("alpha", "beta"):
        previous = ""
        for link in links(db, space):
            assert link.hash == chain.row_hash(previous, link)
            previous = link.hash
    first_beta = links(db, "beta")[0]
    assert first_beta.hash == chain.row_hash("", first_beta)  # beta's chain starts afresh


def test_the_hash_is_the_documented_function_of_the_fields() -> None:
    import hashlib

    def field(text: str | None) -> bytes:
        if text is None:
            return (2**64 - 1).to_bytes(8, "big")
        raw_text = text.encode()
        return len(raw_text).to_bytes(8, "big") + raw_text

    data = '{"a":1}'
    digest = hashlib.blake2b(b"clew-data-1" + field(data), digest_size=32).hexdigest()
    assert chain.data_digest(data) == digest
    values = ("p" * 64, "abcdefghij", "default", None, "c1", "task.created", digest, "T")
    expected = hashlib.blake2b(
        b"clew-event-2" + b"".join(field(v) for v in values), digest_size=32
    ).hexdigest()
    fields = {"id": "abcdefghij", "space": "default", "task_id": None, "correlation_id": "c1"}
    got = chain.event_hash(values[0], **fields, type="task.created", digest=digest, created_at="T")
    assert got == expected
    # Version 1, which format-1 journal files carry: the data itself where 2 has its digest.
    v1 = ("p" * 64, "abcdefghij", "default", None, "c1", "task.created", data, "T")
    assert (
        chain.event_hash_v1(values[0], **fields, type="task.created", data=data, created_at="T")
        == hashlib.blake2b(
            b"clew-event-1" + b"".join(field(v) for v in v1), digest_size=32
        ).hexdigest()
    )


_text = st.text(max_size=12)
_link = st.builds(
    lambda seq, space, task, data: chain.Link(
        seq, f"id{seq}", space, task, "c", "t", data, "T", None
    ),
    st.just(0),
    st.sampled_from(["a", "b"]),
    st.none() | _text,
    _text,
)


@given(st.lists(_link, min_size=1, max_size=8), st.data())
def test_any_change_to_one_event_breaks_the_chain_there(
    drafts: list[chain.Link], data: st.DataObject
) -> None:
    drafts = [d._replace(seq=n, id=f"id{n}") for n, d in enumerate(drafts, 1)]
    hashes = dict(chain.chained(drafts))
    stored = [d._replace(hash=hashes[d.seq]) for d in drafts]
    assert all(found is None for _, found in chain.walk(stored))
    k = data.draw(st.integers(0, len(stored) - 1))
    field = data.draw(st.sampled_from(["space", "task_id", "data", "created_at", "type"]))
    old = getattr(stored[k], field)
    new = data.draw(_text.filter(lambda v: v != old))
    forged = [*stored]
    forged[k] = forged[k]._replace(**{field: new})
    breaks = [link.seq for link, found in chain.walk(forged) if found is not None]
    assert breaks and breaks[0] == stored[k].seq


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
def test_events_refuse_update_and_delete_in_the_database(mem: clew.Memory, db: Path) -> None:
    work(mem)
    conn = raw(db)
    with pytest.raises(sqlite3.IntegrityError, match="append-only: an event cannot be changed"):
        conn.execute("UPDATE events SET data = '{}' WHERE seq = 1")
    with pytest.raises(sqlite3.IntegrityError, match="append-only: an event cannot be deleted"):
        conn.execute("DELETE FROM events WHERE seq = 1")
    assert mem.verify().ok


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
def test_verify_catches_an_event_edited_together_with_its_row(mem: clew.Memory, db: Path) -> None:
    task_id = work(mem)
    created = mem.journal(task_id=task_id)[0]
    conn = raw(db)
    unlock(conn)
    forged = created.data["task"]["name"]
    text = conn.execute("SELECT data FROM events WHERE seq = ?", (created.seq,)).fetchone()[0]
    conn.execute(
        "UPDATE events SET data = ? WHERE seq = ?", (text.replace(forged, "Forged"), created.seq)
    )
    conn.execute("UPDATE tasks SET name = 'Forged' WHERE id = ?", (task_id,))
    report = mem.verify()
    assert not report.ok
    # The rows agree with the forged event; only the chain can tell.
    assert [(d.table, d.row_id, d.column) for d in report.differences] == [
        ("events", f"#{created.seq}", "hash")
    ]
    assert "breaks at event" in report.differences[0].problem
    assert "(task.created)" in report.differences[0].problem


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
def test_verify_catches_an_event_rehashed_after_an_edit_at_the_next_one(
    mem: clew.Memory, db: Path
) -> None:
    work(mem)
    events = mem.journal()
    conn = raw(db)
    unlock(conn)
    first = links(db)[0]
    forged = first._replace(data=first.data.replace("Deploy", "Forged"))
    conn.execute(
        "UPDATE events SET data = ?, hash = ? WHERE seq = ?",
        (forged.data, chain.row_hash("", forged), first.seq),
    )
    conn.execute("UPDATE tasks SET name = 'Forged'")
    problems = [d for d in mem.verify().differences if d.table == "events"]
    assert [(d.row_id, d.column) for d in problems] == [(f"#{events[1].seq}", "hash")]


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
def test_verify_catches_an_event_deleted_in_the_middle(mem: clew.Memory, db: Path) -> None:
    task_id = work(mem)
    message = next(e for e in mem.journal() if e.type == "message.added")
    after = next(e for e in mem.journal() if e.seq > message.seq)
    conn = raw(db)
    unlock(conn)
    conn.execute("DELETE FROM events WHERE seq = ?", (message.seq,))
    conn.execute("DELETE FROM task_messages WHERE task_id = ?", (task_id,))
    report = mem.verify()
    assert [(d.table, d.row_id) for d in report.differences] == [("events", f"#{after.seq}")]
    assert f"({after.type})" in report.differences[0].problem


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
def test_cli_verify_names_the_first_broken_event(mem: clew.Memory, db: Path, cli: Cli) -> None:
    work(mem)
    conn = raw(db)
    unlock(conn)
    conn.execute("UPDATE events SET created_at = '2000-01-01T00:00:00Z' WHERE seq = 3")
    result = cli("verify")
    assert result.code == 1
    assert "the journal chain of space 'default' breaks at event #3" in result.out


WRITER = r"""
import sys, clew
mem = clew.open(sys.argv[1], space=sys.argv[2])
mem.settings = mem.settings._replace(worker="off")
print("ready", flush=True)
sys.stdin.readline()
for n in range(30):
    task = mem.create_task(f"{sys.argv[2]} {n}", ["one"])
    mem.update_task(task.id, message="m", step=1, step_status="active")
"""


@pytest.mark.sqlite_only(
    "verifies every space of the store (the worker's PostgreSQL database holds every test's);"
    " test_postgres.py runs writers of several spaces there"
)
def test_writers_in_several_processes_and_spaces_keep_every_chain_whole(db: Path) -> None:
    clew.open(db).close()
    spaces = ["alpha", "alpha", "beta", "gamma"]
    results = run_in_lockstep([(WRITER, str(db), space) for space in spaces])
    assert [code for code, _, _ in results] == [0, 0, 0, 0], results
    with clew.open(db) as mem:
        report = mem.verify(all_spaces=True)
    assert report.ok, report.differences
    assert report.events == 4 * 30 * 3 and set(report.heads or {}) == {"alpha", "beta", "gamma"}


def test_writers_of_one_space_taking_turns_on_two_connections_chain_each_event_to_the_last(
    db: Path,
) -> None:
    """A store keeps the head its last write committed (SQLite: while data_version says no
    other connection committed); a write of the other connection in between must be seen."""
    with clew.open(db) as one, clew.open(db) as two:
        tid = one.create_task("shared", ["step"]).id
        for n in range(6):
            writer = (one, two, two, one, one, two)[n]
            writer.update_task(tid, message=f"note {n}")
            writer.record_action(tid, command=f"echo {n}", exit_code=0)
        with pytest.raises(clew.ClewError):  # a write that fails leaves the head as it was
            one.update_task(tid, step=9, step_status="done")
        two.update_task(tid, message="after")
        one.update_task(tid, message="last")
        report = one.verify()
    assert report.ok, report.differences
    assert report.events == 1 + 6 * 2 + 2


# -- verify in a space ----------------------------------------------------------------------


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
def test_verify_checks_only_its_own_space_unless_asked_for_all(db: Path, clock: FakeClock) -> None:
    with clew.open(db, space="alpha", clock=clock) as alpha, clew.open(db, space="beta") as beta:
        work(alpha)
        beta.create_task("beta's", ["One"])
        raw(db).execute("UPDATE tasks SET name = 'drifted' WHERE space = 'beta'")
        mine = alpha.verify()
        assert mine.ok and mine.rows["tasks"] == 1 and mine.rows["plan_items"] == 2
        assert mine.events == len(alpha.journal())
        assert set(mine.heads or {}) == {"alpha"}
        theirs = beta.verify()
        assert [(d.table, d.column) for d in theirs.differences] == [("tasks", "name")]
        assert theirs.rows["tasks"] == 1 and theirs.events == 1
        whole = alpha.verify(all_spaces=True)
        assert not whole.ok and whole.rows["tasks"] == 2
        assert set(whole.heads or {}) == {"alpha", "beta"}


def test_a_space_verifies_exactly_beside_another_that_wrote_entries_and_turns_first(
    db: Path, clock: FakeClock
) -> None:
    """Entries and turns number themselves across the whole store, so a space's replay (which
    numbers from 1) must not be compared by those numbers: by their order, which it keeps."""
    one, two = new_space(), new_space()
    with clew.open(db, space=one, clock=clock) as alpha, clew.open(db, space=two) as beta:
        _entries_and_turns_in_turn(alpha, beta)
        for mem in (alpha, beta):
            report = mem.verify()
            assert report.ok, report.differences
            assert report.rows["entries"] == 2 and report.rows["turns"] == 2


def _entries_and_turns_in_turn(alpha: clew.Memory, beta: clew.Memory) -> None:
    for mem in (alpha, beta, alpha, beta):
        tid = mem.create_task("work", ["One"]).id
        mem.add_entry("decision", "use the queue", task_id=tid)
        sid = mem.start_session(task_id=tid).id
        mem.append_turn(sid, role="user", content="hello there")


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
def test_self_numbered_rows_out_of_order_are_drift(db: Path, clock: FakeClock) -> None:
    with clew.open(db, space="alpha", clock=clock) as alpha, clew.open(db, space="beta") as beta:
        _entries_and_turns_in_turn(alpha, beta)
        assert alpha.verify(all_spaces=True).ok
        # Two of beta's turns swapping numbers is drift.
        con = raw(db)
        # (turns is a view of turn_rows since migration 15.)
        seqs = [r[0] for r in con.execute("SELECT seq FROM turn_rows WHERE space = 'beta'")]
        con.execute("UPDATE turn_rows SET seq = -seq WHERE space = 'beta'")
        for old, new in zip(seqs, reversed(seqs), strict=True):
            con.execute("UPDATE turn_rows SET seq = ? WHERE seq = ?", (new, -old))
        con.commit()
        assert [(d.table, d.column) for d in beta.verify().differences] == [("turns", "seq")]


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
def test_cli_verify_all_spaces_is_explicit(db: Path) -> None:
    with clew.open(db, space="beta") as beta:
        beta.create_task("beta's")
    raw(db).execute("UPDATE tasks SET name = 'drifted'")
    assert run_clew(db, "verify").returncode == 0  # the default space has nothing wrong
    done = run_clew(db, "verify", "--all-spaces")
    assert done.returncode == 1
    assert "tasks" in done.stdout and "drifted" in done.stdout
    assert run_clew(db, "--space", "beta", "verify").returncode == 1


# -- damaged events -------------------------------------------------------------------------


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
@pytest.mark.parametrize("damage", ["{not json", "[1, 2]", '"text"'])
def test_event_data_that_is_not_a_json_object_is_a_finding_not_a_crash(
    mem: clew.Memory, db: Path, cli: Cli, damage: str
) -> None:
    task_id = work(mem)
    message = next(e for e in mem.journal() if e.type == "message.added")
    conn = raw(db)
    unlock(conn)
    conn.execute("UPDATE events SET data = ? WHERE seq = ?", (damage, message.seq))
    report = mem.verify()
    found = {(d.row_id, d.column) for d in report.differences if d.table == "events"}
    assert found == {(f"#{message.seq}", "data"), (f"#{message.seq}", "hash")}
    assert any("skipped in the replay" in d.problem for d in report.differences)
    # The message's row has no event left to rebuild it: that is reported too.
    assert ("task_messages", "*") in {(d.table, d.column) for d in report.differences}
    assert cli("verify").code == 1

    shown = next(e for e in mem.journal() if e.seq == message.seq)
    assert shown.data == {} and shown.unreadable == damage
    line = next(x for x in cli("journal").out.splitlines() if x.startswith(f"#{message.seq} "))
    assert "UNREADABLE" in line
    history = mem.history(task_id)
    said = next(h.text for h in history if h.seq == message.seq)
    assert said.startswith("UNREADABLE")
    result = cli("task", "history", task_id)
    assert result.code == 0 and "UNREADABLE" in result.out


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
def test_event_data_of_an_unknown_shape_is_a_finding_and_history_still_reads(
    mem: clew.Memory, db: Path
) -> None:
    task_id = work(mem)
    message = next(e for e in mem.journal() if e.type == "message.added")
    conn = raw(db)
    unlock(conn)
    conn.execute("UPDATE events SET data = '{\"what\":1}' WHERE seq = ?", (message.seq,))
    report = mem.verify()
    assert any("cannot be replayed" in d.problem for d in report.differences)
    said = next(h.text for h in mem.history(task_id) if h.seq == message.seq)
    assert "unknown shape" in said


# -- migrations -----------------------------------------------------------------------------


@pytest.mark.sqlite_only("reads SQLite's migration table; test_postgres.py checks PostgreSQL's")
def test_every_migration_is_recorded_with_its_fingerprint(mem: clew.Memory, db: Path) -> None:
    rows = raw(db).execute("SELECT number, fingerprint FROM clew_migrations ORDER BY number")
    assert dict(rows.fetchall()) == FINGERPRINTS


@pytest.mark.sqlite_only("reads SQLite's migration table; test_postgres.py checks PostgreSQL's")
def test_a_store_whose_migration_differs_from_the_code_is_refused(db: Path) -> None:
    clew.open(db).close()
    raw(db).execute("UPDATE clew_migrations SET fingerprint = 'f00d' WHERE number = 3")
    with pytest.raises(clew.StoreError, match="schema step 3 differs from this clew's"):
        clew.open(db)


def legacy_store(path: Path, events: list[Any]) -> None:
    """A store as the release before the hash chain made it: migrations 1-5 recorded
    without fingerprints, events without hashes, rows written by the projection."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("BEGIN")
    conn.execute(
        "CREATE TABLE clew_migrations"
        " (number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for migration in MIGRATIONS[:5]:
        for statement in migration.statements:
            assert isinstance(statement, str)
            conn.execute(statement)
        conn.execute(
            "INSERT INTO clew_migrations VALUES (?, ?, 'then')", (migration.number, migration.name)
        )
    # That release had no task records, and its projection wrote none: the phase timestamps
    # today's projection keeps for record rows (of which an old task has none) go to a
    # scratch table that leaves with the connection.
    conn.execute(
        "CREATE TEMP TABLE task_records (id TEXT PRIMARY KEY, space TEXT,"
        " execution_started_at TEXT, synthesis_started_at TEXT,"
        " plan_generated_at TEXT)"
    )
    # Nor sequence columns or output kinds (migration 10): added for today's projection to
    # write, and dropped again, so the rows are as that release wrote them.
    added = [
        *SEQUENCED,
        ("actions", "stdout_kind"),
        ("actions", "stderr_kind"),
        ("actions", "stdout_errors"),
        ("actions", "stderr_errors"),
        ("turns", "event_seq"),
        ("turns", "text_in"),
        ("entries", "origin"),
        ("entries", "keep_open"),
    ]  # and migrations 14, 15 and 25
    for table, column in added:
        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
    for e in events:
        conn.execute(
            "INSERT INTO events (seq, id, space, task_id, correlation_id, type, data, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (e.seq, e.id, e.space, e.task_id, e.correlation_id, e.type, e.data, e.created_at),
        )
        projection.apply(SQLiteConnection(conn), e._replace(data=json.loads(e.data)))
    for table, column in added:
        conn.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    conn.execute("COMMIT")
    conn.close()


def as_released_before_records(found: list[chain.Link]) -> list[chain.Link]:
    """The events as the release before task records wrote them: no `record` in
    `task.created` (that release had no table for it), and no hashes yet."""
    out = []
    for link in found:
        if link.type == "task.created":
            data = json.loads(link.data)
            data.pop("record", None)
            link = link._replace(data=json.dumps(data))
        elif link.type == "entry.added":  # nor who recorded an entry (migration 25)
            data = json.loads(link.data)
            data["entry"].pop("origin", None)
            link = link._replace(data=json.dumps(data))
        out.append(link._replace(hash=None))
    return [link._replace(hash=h) for link, (_, h) in zip(out, chain.chained(out), strict=True)]


def test_a_store_of_the_previous_schema_upgrades_with_every_event_hashed(
    tmp_path: Path, clock: FakeClock
) -> None:
    source = tmp_path / "source.db"
    with clew.open(source, clock=clock) as mem:
        work(mem)
    old = as_released_before_records(links(source))
    legacy = tmp_path / "legacy.db"
    legacy_store(legacy, old)
    with clew.open(legacy) as mem:
        report = mem.verify()
        assert report.ok, report.differences
        assert report.events == len(old)
        mem.create_task("after the upgrade")
        assert mem.verify().ok
    # The backfill chained exactly what the live path would have.
    assert [link.hash for link in links(legacy)][: len(old)] == [link.hash for link in old]
    rows = raw(legacy).execute("SELECT number, fingerprint FROM clew_migrations ORDER BY number")
    assert dict(rows.fetchall()) == FINGERPRINTS
    with pytest.raises(sqlite3.IntegrityError):
        raw(legacy).execute("DELETE FROM events")


def test_a_store_of_a_development_schema_is_refused_unchanged(tmp_path: Path) -> None:
    legacy = tmp_path / "legacy.db"
    legacy_store(legacy, [])
    raw(legacy).execute("DROP INDEX turns_hidden")  # as the build before that index made it
    before = raw(legacy).execute("SELECT count(*) FROM clew_migrations").fetchone()
    with pytest.raises(clew.StoreError, match=r"development build of clew.*turns_hidden"):
        clew.open(legacy)
    assert raw(legacy).execute("SELECT count(*) FROM clew_migrations").fetchone() == before


def test_migration_six_is_the_chain(db: Path) -> None:
    assert LATEST >= 6
    assert MIGRATIONS[5].number == 6 and "hash chain" in MIGRATIONS[5].name


# -- old events replay ----------------------------------------------------------------------


@pytest.mark.sqlite_only("writes an older event into the SQLite file")
def test_a_turn_of_the_older_shape_replays_with_its_call_derived(
    mem: clew.Memory, db: Path
) -> None:
    session = mem.start_session(workspace="/w")
    call = {"id": "call_1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
    mem.append_turn(session.id, {"role": "assistant", "content": None, "tool_calls": [call]})
    store = mem._store  # type: ignore[attr-defined]
    # Exactly what clew wrote before turns carried their call (commit a0ae60a): no
    # tool_name (none was given), no call_turn.
    old = {
        "session_id": session.id,
        "turn": {
            "id": "oldshape01",
            "number": 2,
            "message": {"role": "tool", "tool_call_id": "call_1", "content": "3 hits"},
            "token_count": 3,
        },
    }
    with store.transaction(write=True):
        store.append(
            type="turn.appended",
            task_id=None,
            correlation_id="old",
            data=old,
            created_at="2026-01-01T00:00:00.000000Z",
        )
    turn = mem.list_turns(session.id)[-1]
    assert (turn.tool_name, turn.call_turn) == ("grep", 1)
    assert mem.verify().ok  # the replay upgrades it the same way
    listed = mem.journal()[-1]
    assert listed.data["turn"]["tool_name"] == "grep"
    stored = raw(db).execute("SELECT data FROM events ORDER BY seq DESC LIMIT 1").fetchone()[0]
    assert "call_turn" not in stored  # the journal itself is never rewritten


def test_a_fingerprint_covers_every_step_and_what_a_python_step_does() -> None:
    from clew.store.migrations import Run, fingerprint

    for migration in MIGRATIONS:
        base = fingerprint(migration)
        if migration.statements:  # one with none keeps a number shared with PostgreSQL's
            assert fingerprint(migration._replace(statements=migration.statements[:-1])) != base
        assert fingerprint(migration._replace(name=migration.name + ".")) != base
    six = MIGRATIONS[5]
    runs = [n for n, step in enumerate(six.statements) if isinstance(step, Run)]
    assert runs
    for n in runs:
        step = six.statements[n]
        assert isinstance(step, Run)
        changed = (
            *six.statements[:n],
            step._replace(does=step.does + "!"),
            *six.statements[n + 1 :],
        )
        assert fingerprint(six._replace(statements=changed)) != fingerprint(six)
