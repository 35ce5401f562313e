"""Tenancy on PostgreSQL is in each statement's text (tests/tenancy.py): the check itself, that
it sees what reaches PostgreSQL, and the upserts and changes keyed by id kept to their space
when two spaces hold the same journal, even for a role that bypasses row-level security."""

from __future__ import annotations

from pathlib import Path

import pytest

import clew
from clew.store import pg_adapter
from clew.store.projection_handlers import conflict
from tests import tenancy
from tests.conftest import FakeClock, new_space, postgres_url


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE tasks SET status = %s WHERE id = %s AND space = %s",
        "UPDATE sessions SET state = %s WHERE space = %s AND id = %s",
        "DELETE FROM embeddings WHERE space = %s AND kind = %s AND ref_id = %s",
        "UPDATE task_records SET synthesis_started_at = CASE WHEN EXISTS (SELECT 1 FROM"
        " plan_items WHERE task_id = %s AND space = %s) THEN 1 END WHERE id = %s AND space = %s",
        "INSERT INTO task_files (id, space) VALUES (%s, %s) ON CONFLICT (space, id) DO NOTHING",
        "INSERT INTO runs (a) VALUES (%s) ON CONFLICT DO NOTHING",
        # Administration across spaces (migration 17): named by prefix or time alone.
        "UPDATE clew_keys SET revoked_at = %s WHERE prefix = %s AND revoked_at IS NULL",
        "DELETE FROM clew_requests WHERE created_at < %s",
        "SELECT id FROM tasks WHERE id = %s",  # a read: row-level security's
        "UPDATE tasks SET note = 'WHERE space = 1' WHERE id = %s AND space = %s",
    ],
)
def test_a_statement_held_to_its_space_passes(statement: str) -> None:
    assert tenancy.unscoped(statement) is None


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE tasks SET status = %s WHERE id = %s",
        "DELETE FROM embeddings WHERE model = %s",
        "DELETE FROM embeddings",
        "update waits set status = %s where id = %s",
        # Space only in a subquery, in a quoted text, or beside an OR: not the row's own.
        "UPDATE task_records SET x = 1 WHERE id = %s AND EXISTS (SELECT 1 FROM plan_items"
        " WHERE space = %s)",
        "UPDATE tasks SET note = %s WHERE id = %s AND note = 'space = 1'",
        "UPDATE tasks SET status = %s WHERE id = %s OR space = %s",
        "INSERT INTO task_files (id, space) VALUES (%s, %s) ON CONFLICT (id) DO NOTHING",
        "INSERT INTO task_records (id) VALUES (%s) ON CONFLICT(id) DO UPDATE SET a = 1",
    ],
)
def test_a_statement_not_held_to_its_space_is_caught(statement: str) -> None:
    assert tenancy.unscoped(statement) is not None


def test_every_statement_clew_sends_postgres_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """conftest.py hands the adapter's every translation to the check, once per statement,
    if clew sent it: a test's own statement is its own business."""
    bad = f"UPDATE tasks SET status = ? WHERE id = ? -- {new_space()}"
    pg_adapter.translate(bad)  # from a test: not checked
    assert all(bad[-12:] not in sql for _, sql in tenancy.FOUND)
    monkeypatch.setattr(tenancy, "_sent_by_clew", lambda frame: True)
    pg_adapter.translate(bad)
    assert tenancy.FOUND[-1][1].startswith("UPDATE tasks SET status = %s WHERE id = %s")
    del tenancy.FOUND[-1]  # found, as it should be: not this test's failure


def test_an_upsert_target_is_the_key_as_each_backend_has_it(tmp_path: Path) -> None:
    with clew.open(tmp_path / "a.db") as local:
        assert conflict(local._store._connection(), "id") == "(id)"
    assert conflict(pg_adapter.Connection(None), "id") == "(space, id)"  # type: ignore[arg-type]


def _rows(mem: clew.Memory, task_id: str, session_id: str) -> list[object]:
    """What the projection holds of the task and the conversation, as the API reads it."""
    return [
        mem.get_task(task_id),
        mem.task_record(task_id),
        mem.file_changes(task_id),
        mem.get_session(session_id),
        mem.list_turns(session_id),
    ]


def test_one_journal_in_two_spaces_keeps_its_upserts_apart_even_for_a_superuser(
    tmp_path: Path,
) -> None:
    """The rows an upsert or a change by id writes (task_files, task_records, step_records,
    tasks, plan_items, sessions, turns): the second space's stay as imported when the first
    changes its copies. The test connects as a superuser, whom row-level security lets by."""
    from tests.test_move import exported

    url = postgres_url()
    with clew.open(tmp_path / "a.db", clock=FakeClock()) as local:
        task = local.create_task("shared", ["a", "b"])
        local.record_files(task.id, created=["src/app.py"])
        local.set_task_record(task.id, domain="deploy")
        local.set_step_record(task.id, 1, agent="planner")
        session = local.start_session(task_id=task.id)
        local.append_turn(session.id, role="user", content="hello")
        text = exported(local)
    one = clew.open(url, space=new_space(), clock=FakeClock())
    two = clew.open(url, space=new_space(), clock=FakeClock())
    with one, two:
        one.import_events(text)
        two.import_events(text)  # the same ids, in another space
        before = _rows(two, task.id, session.id)
        one.record_files(task.id, created=["src/app.py"], modified=["README"])
        one.set_task_record(task.id, domain="billing")
        one.set_step_record(task.id, 1, agent="reviewer")
        one.update_task(task.id, step=1, step_status="completed", status="paused")
        one.append_turn(session.id, role="assistant", content="hi")
        one.clear_session(session.id)
        assert _rows(one, task.id, session.id) != before
        assert _rows(two, task.id, session.id) == before
        assert one.verify().ok and two.verify().ok
