"""Tenancy on PostgreSQL is in each statement's text (tests/tenancy.py): the check itself, that
it sees what reaches PostgreSQL, and the upserts and changes keyed by id kept to their space
when two spaces hold the same journal, even for a role that bypasses row-level security."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import clew
from clew.store import sql
from clew.store.postgres import connection as pg_connection
from clew.store.projection.handlers import conflict
from tests import tenancy
from tests.conftest import FakeClock, new_space, postgres_url


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE tasks SET status = $1 WHERE id = $2 AND space = $3",
        "UPDATE sessions SET state = $1 WHERE space = $2 AND id = $3",
        "DELETE FROM embeddings WHERE space = $1 AND kind = $2 AND ref_id = $3",
        "UPDATE task_records SET synthesis_started_at = CASE WHEN EXISTS (SELECT 1 FROM"
        " plan_items WHERE task_id = $1 AND space = $2) THEN 1 END WHERE id = $3 AND space = $4",
        "INSERT INTO task_files (id, space) VALUES ($1, $2) ON CONFLICT (space, id) DO NOTHING",
        "INSERT INTO runs (a) VALUES ($1) ON CONFLICT DO NOTHING",
        # Administration across spaces (migration 17): named by prefix or time alone.
        "UPDATE clew_keys SET revoked_at = $1 WHERE prefix = $2 AND revoked_at IS NULL",
        "DELETE FROM clew_requests WHERE created_at < $1",
        "SELECT id FROM tasks WHERE id = $1",  # a read: row-level security's
        "UPDATE tasks SET note = 'WHERE space = 1' WHERE id = $1 AND space = $2",
    ],
)
def test_a_statement_held_to_its_space_passes(statement: str) -> None:
    assert tenancy.unscoped(statement) is None


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE tasks SET status = $1 WHERE id = $2",
        "DELETE FROM embeddings WHERE model = $1",
        "DELETE FROM embeddings",
        "update waits set status = $1 where id = $2",
        # Space only in a subquery, in a quoted text, or beside an OR: not the row's own.
        "UPDATE task_records SET x = 1 WHERE id = $1 AND EXISTS (SELECT 1 FROM plan_items"
        " WHERE space = $2)",
        "UPDATE tasks SET note = $1 WHERE id = $2 AND note = 'space = 1'",
        "UPDATE tasks SET status = $1 WHERE id = $2 OR space = $3",
        "INSERT INTO task_files (id, space) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
        "INSERT INTO task_records (id) VALUES ($1) ON CONFLICT(id) DO UPDATE SET a = 1",
    ],
)
def test_a_statement_not_held_to_its_space_is_caught(statement: str) -> None:
    assert tenancy.unscoped(statement) is not None


def test_every_statement_clew_sends_postgres_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """conftest.py hands every statement a psycopg cursor sends to the check, once per
    statement, if clew sent it: a test's own statement is its own business."""
    bad = f"UPDATE tasks SET status = $1 WHERE id = $2 -- {new_space()}"
    tenancy.record(bad, sys._getframe())  # from a test: not checked
    assert all(bad[-12:] not in sql for _, sql in tenancy.FOUND)
    monkeypatch.setattr(tenancy, "_sent_by_clew", lambda frame: True)
    tenancy.record(bad, sys._getframe())
    assert tenancy.FOUND[-1] == ("an UPDATE or DELETE whose WHERE does not name its space", bad)
    del tenancy.FOUND[-1]  # found, as it should be: not this test's failure


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT id FROM tasks WHERE space = ? AND id = ?",
        "UPDATE tasks SET status = ? WHERE id = ? AND space = ?",
        "SELECT 1 FROM turns WHERE space = $1 AND content LIKE '%?%' AND id = ?",
    ],
)
def test_a_question_mark_placeholder_is_caught(statement: str) -> None:
    """A `?` reaches PostgreSQL only if someone expects it translated: nothing translates."""
    assert tenancy.untranslated(statement) is not None


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT id FROM tasks WHERE space = $1 AND id = $2",
        "SELECT 1 FROM turns WHERE content LIKE '%?%' AND note = \"what?\" AND space = $1",
        "SELECT $$ is it? $$, $fn$ (?:x) $fn$ -- why?\nFROM tasks",
    ],
)
def test_a_question_mark_in_text_is_no_placeholder(statement: str) -> None:
    assert tenancy.untranslated(statement) is None


def test_the_postgres_connection_sends_each_statement_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No translation on the way: what the portable code writes is the very text psycopg
    sends (a literal `%` too), with its parameters as they were given."""
    url = postgres_url()
    psycopg = pytest.importorskip("psycopg")
    sent: list[tuple[Any, Any]] = []
    execute = psycopg.Cursor.execute

    def spy(cursor: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        sent.append((query, params))
        return execute(cursor, query, params, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", spy)
    statement = "SELECT $1::text || '%s 5%' || $2::text AS said, $1::text AS again"
    params = ("a", "b")
    with psycopg.connect(url, autocommit=True) as raw:
        row = pg_connection.Connection(raw).execute(statement, params).fetchone()
    assert sent == [(statement, params)] and sent[0][0] is statement
    assert (row["said"], row["again"]) == ("a%s 5%b", "a")


def test_an_upsert_target_is_the_key_as_each_backend_has_it(tmp_path: Path) -> None:
    with clew.open(tmp_path / "a.db") as local:
        assert conflict(local._store._connection(), "id") == "(id)"
    assert sql.POSTGRESQL.conflict("id") == "(space, id)"


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


# The modules whose SQL both backends run (or PostgreSQL runs through the portable
# connection): their statements number their placeholders, `$1`, `$2`...
_PORTABLE = ("portable/*.py", "projection/*.py", "rows.py", "postgres/search*.py",
             "postgres/vectors.py", "postgres/heads.py", "postgres/verify.py")  # fmt: skip
_SQL_WORD = re.compile(r"\b(?:SELECT|INSERT|UPDATE|DELETE|WHERE|VALUES|SET|AND|LIMIT)\b")


def _sql_texts(path: Path) -> list[tuple[int, str]]:
    """Each string of a module that reads as SQL (its docstrings left out), by line: the
    literal parts of an f-string, holes left blank."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else " " for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if id(node) not in docs and _SQL_WORD.search(text):
            found.append((node.lineno, text))
    return found


def _psycopg_style(path: Path, text: str) -> bool:
    """Whether `text` has psycopg's `%s`, which a postgres/ module may send on a plain psycopg
    cursor (its own setup) but the portable modules never write."""
    return path.parent.name != "postgres" and "%s" in tenancy.bare(text)


def test_the_portable_sql_has_no_question_mark_placeholder() -> None:
    """No statement of theirs needs a translation to run: a `?` (outside quoted text) or
    psycopg's own `%s` would (store/sql.py)."""
    store = Path(clew.__file__).parent / "store"
    paths = sorted({p for pattern in _PORTABLE for p in store.glob(pattern)})
    assert len(paths) > 20
    wrong = [
        f"{path.name}:{line}: {text[:70]!r}"
        for path in paths
        for line, text in _sql_texts(path)
        if not text.lstrip().startswith("CREATE")  # a function's body: PL/pgSQL's own
        and (tenancy.untranslated(text) or _psycopg_style(path, text))
    ]
    assert not wrong, "\n".join(wrong)
