"""verify's replay writes each session's row once (count, tokens, last active, state) and
compares rows as tuples a page at a time: every kind of difference is still found, and a
replay given up on (an event that fails half-applied) leaves nothing of itself behind."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import clew


def raw(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(db, isolation_level=None)


def conversation(mem: clew.Memory) -> tuple[str, str]:
    """Two sessions whose turns interleave, with tool calls and their results (each
    changes the session state) and a task message between them."""
    task = mem.create_task("Fix the build", ["Find it", "Fix it"])
    one = mem.start_session(workspace="/w", task_id=task.id).id
    two = mem.start_session(workspace="/v").id
    for n in range(3):
        mem.append_turn(one, {"role": "user", "content": f"look at src/app_{n}.py please"})
        read = {"name": "read_file", "arguments": f'{{"path": "src/app_{n}.py"}}'}
        call = {"id": f"c{n}", "type": "function", "function": read}
        mem.append_turn(two, {"role": "assistant", "content": None, "tool_calls": [call]})
        if n == 1:
            mem.update_task(task.id, step=1, step_status="active", message="reading the files")
        mem.append_turn(two, {"role": "tool", "tool_call_id": f"c{n}", "content": "def f(): ..."})
        mem.append_turn(one, {"role": "assistant", "content": f"Decided to keep app_{n}."})
    return one, two


def test_sessions_whose_turns_interleave_rebuild_exactly(mem: clew.Memory) -> None:
    one, two = conversation(mem)
    report = mem.verify()
    assert report.ok, report.differences
    assert report.rows["turns"] == 12 and report.rows["sessions"] == 2
    sessions = {s.id: s for s in mem.list_sessions()}
    assert sessions[one].turn_count == 6 and sessions[two].turn_count == 6


def test_an_imported_session_rebuilds_exactly(mem: clew.Memory) -> None:
    messages = [
        {"role": "user", "content": "run the tests"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "t1",
                    "type": "function",
                    "function": {"name": "shell", "arguments": '{"cmd": "pytest"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "3 passed"},
        {"role": "assistant", "content": "All green."},
    ] * 50
    for n, m in enumerate(messages):  # call ids unique per call
        if "tool_calls" in m:
            messages[n] = {**m, "tool_calls": [{**m["tool_calls"][0], "id": f"t{n}"}]}
        elif m["role"] == "tool":
            messages[n] = {**m, "tool_call_id": f"t{n - 1}"}
    session = mem.import_session(messages)
    assert session.turn_count == 200
    assert mem.verify().ok


# Each tampering of the stored rows, and what verify must say: (table, column, stored, rebuilt)
# for one row (its id is checked against the row tampered with; rebuilt ... is any true value).
TAMPERING = {
    "a turn's column corrupted": (
        "UPDATE turn_rows SET tool_name = 'forged' WHERE id = :id",
        ("turns", "tool_name", "forged", None),
    ),
    "a turn's text changed": (
        "UPDATE turn_rows SET content = 'I never said this', text_in = NULL WHERE id = :id",
        # The row keeps no text of its own: its event holds it (text_in says where).
        ("turns", "content", "I never said this", None),
    ),
    "a turn deleted": (
        "DELETE FROM turn_rows WHERE id = :id",
        ("turns", "*", "missing", "present"),
    ),
    "a turn added": (
        "INSERT INTO turn_rows (id, space, session_id, turn, role, content, text_content,"
        " message, token_count, created_at) SELECT 'zzzzadded', space, session_id, 99, role,"
        " 'added', 1, message, 1, created_at FROM turn_rows WHERE id = :id",
        ("turns", "*", "present", "missing"),
    ),
    "a session's count changed": (
        "UPDATE sessions SET turn_count = turn_count + 1"
        " WHERE id = (SELECT session_id FROM turn_rows WHERE id = :id)",
        ("sessions", "turn_count", 7, 6),
    ),
    "a session's state changed": (
        "UPDATE sessions SET state = '{}'"
        " WHERE id = (SELECT session_id FROM turn_rows WHERE id = :id)",
        ("sessions", "state", "{}", ...),
    ),
}


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
@pytest.mark.parametrize("how", sorted(TAMPERING))
def test_each_kind_of_difference_in_the_rows_is_reported(
    mem: clew.Memory, db: Path, how: str
) -> None:
    one, _ = conversation(mem)
    target = mem.list_turns(one)[2]
    sql, (table, column, stored, rebuilt) = TAMPERING[how]
    raw(db).execute(sql, {"id": target.id})
    report = mem.verify()
    assert not report.ok
    found = [d for d in report.differences if d.table == table and d.column == column]
    assert len(found) == 1, report.differences
    difference = found[0]
    expected_id = {"turns": "zzzzadded" if how == "a turn added" else target.id}.get(table, one)
    assert difference.row_id == expected_id
    assert difference.stored == stored
    if rebuilt is not ...:
        assert difference.rebuilt == rebuilt
    else:  # the rebuilt value is the true one, whatever it is: not the forged one
        assert difference.rebuilt not in (None, stored)


@pytest.mark.sqlite_only("tampers with the SQLite file; test_postgres.py tampers on PostgreSQL")
def test_a_replay_given_up_on_leaves_nothing_of_its_sessions_behind(
    mem: clew.Memory, db: Path
) -> None:
    """An event that fails half-applied makes verify replay again, undoing each failure:
    the sessions' rows put off in the first attempt must not be counted twice."""
    conversation(mem)
    message = next(e for e in mem.journal() if e.type == "message.added")
    conn = raw(db)
    conn.execute("DROP TRIGGER events_no_update")
    conn.execute("UPDATE events SET data = '{\"what\":1}' WHERE seq = ?", (message.seq,))
    report = mem.verify()
    tables = {d.table for d in report.differences}
    assert any("cannot be replayed" in d.problem for d in report.differences)
    assert "sessions" not in tables and "turns" not in tables, report.differences
    assert report.rows["sessions"] == 2 and report.rows["turns"] == 12
