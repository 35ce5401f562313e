"""Rows in journal order: each row's `seq` is the seq of the event that made it (migration
10), the same on every replay and on a store made before that migration; command output
says whether it is text or bytes."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clew
from clew.store.sqlite.backfill import SEQUENCED
from tests.conftest import FakeClock
from tests.old_stores import undo_migration_10


def raw(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(db, isolation_level=None)


def fill(mem: clew.Memory) -> dict[str, str]:
    """Rows of every sequenced table, many of them written at the same moment."""
    task = mem.create_task("Deploy", ["build", "ship"])
    ok = mem.record_action(task.id, command="make", exit_code=0, stdout="built\n")
    bad = mem.record_action(
        task.id, command="push", exit_code=1, stdout=b"\xff\xfe", stderr="denied\n"
    )
    mem.record_action(task.id, command="push", exit_code=1, stderr=b"\x80 denied again")
    mem.log_action(ok.id, "first")
    mem.log_action(ok.id, "second")
    mem.add_message(task.id, "one")
    mem.add_message(task.id, "two")
    error = mem.add_error(task.id, "push denied", detail="denied by the registry")
    mem.record_fix(error.id, "log in first", worked=False)
    mem.add_entry(
        "decision",
        "Push after login",
        task_id=task.id,
        sources=[("action", bad.id), ("action", ok.id), ("entry", error.id)],
    )
    for n in range(3):
        session = mem.start_session(workspace="/srv/app", title=f"s{n}")
        mem.append_turn(session.id, {"role": "user", "content": f"hello {n}"})
    return {"task": task.id, "ok": ok.id, "bad": bad.id}


def sequence_columns(db: Path) -> dict[tuple[str, str], list[Any]]:
    conn = raw(db)
    try:
        found: dict[tuple[str, str], list[Any]] = {}
        for table, column in SEQUENCED:
            found[table, column] = conn.execute(
                f"SELECT id, {column} FROM {table} ORDER BY id"
            ).fetchall()
        found["actions", "kinds"] = conn.execute(
            "SELECT id, stdout_kind, stderr_kind FROM actions ORDER BY id"
        ).fetchall()
        return found
    finally:
        conn.close()


def test_a_row_carries_the_seq_of_the_event_that_made_it(mem: clew.Memory, db: Path) -> None:
    ids = fill(mem)
    conn = raw(db)
    rows = conn.execute(
        "SELECT a.seq, e.seq FROM actions a JOIN events e ON e.type = 'action.recorded'"
        " AND json_extract(e.data, '$.action.id') = a.id"
    ).fetchall()
    assert len(rows) == 3 and all(mine == event for mine, event in rows)
    positions = conn.execute("SELECT source_id FROM entry_sources ORDER BY position").fetchall()
    assert [p[0] for p in positions][:2] == [ids["bad"], ids["ok"]]
    assert mem.verify().ok


def test_rows_written_at_one_moment_list_in_the_order_they_were_written(
    mem: clew.Memory, clock: FakeClock
) -> None:
    task = mem.create_task("Same second")
    made = [mem.record_action(task.id, command=f"step {n}", exit_code=0).id for n in range(5)]
    assert [a.id for a in mem.list_actions(task.id)] == made[::-1]  # newest first
    for n in range(4):
        mem.add_message(task.id, f"note {n}")
    newest_first = [m.content for m in mem.list_messages(task.id)]
    assert newest_first[:4] == [f"note {n}" for n in range(3, -1, -1)]
    sessions = [mem.start_session(workspace="/w", title=str(n)).id for n in range(3)]
    assert [s.id for s in mem.list_sessions(workspace="/w")][:3] == sessions[::-1]


def test_a_store_made_before_migration_10_gets_the_same_sequence_and_verifies(
    db: Path, clock: FakeClock
) -> None:
    with clew.open(db, clock=clock) as mem:
        fill(mem)
    written = sequence_columns(db)
    undo_migration_10(raw(db))
    columns = {r[1] for r in raw(db).execute("PRAGMA table_info(actions)")}
    assert "seq" not in columns and "stdout_kind" not in columns
    with clew.open(db, clock=clock) as mem:
        report = mem.verify()
        assert report.ok, report.differences
        assert sequence_columns(db) == written
        # And it goes on writing in journal order.
        task = mem.create_task("after the upgrade")
        mem.record_action(task.id, command="true", exit_code=0)
        assert mem.verify().ok


_OUTPUT = st.none() | st.text(max_size=40) | st.binary(max_size=40)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(stdout=_OUTPUT, stderr=_OUTPUT)
def test_command_output_round_trips_as_text_or_bytes(
    mem: clew.Memory, stdout: str | bytes | None, stderr: str | bytes | None
) -> None:
    task = mem.create_task("Output")
    action = mem.record_action(task.id, command="cmd", exit_code=1, stdout=stdout, stderr=stderr)
    stored = mem.get_action(action.id)
    for given_, got in ((stdout, stored.stdout), (stderr, stored.stderr)):
        assert got == _as_recorded(given_)
        assert type(got) is type(_as_recorded(given_))
    assert stored == action


def _as_recorded(value: str | bytes | None) -> str | bytes | None:
    """What clew keeps of an output: bytes that are UTF-8 are text."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value
    return value


def test_output_kinds_are_stored_and_replayed(mem: clew.Memory, db: Path) -> None:
    task = mem.create_task("Kinds")
    for out in (None, "", "text", b"\xff", b""):
        mem.record_action(task.id, command="cmd", exit_code=0, stdout=out)
    kinds = raw(db).execute("SELECT stdout, stdout_kind FROM actions ORDER BY seq").fetchall()
    assert [k for _, k in kinds] == [None, "text", "text", "bytes", "text"]
    assert mem.verify().ok
