"""The outline's search index (migration 26): task names, goals, plan steps with their issue
and summary, final answers, patterns and guardrails each have a search document kept beside
their row, found by search on both backends, following every edit, checked by `verify`, and
made for a store that existed before."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import clew
from clew.models import OUTLINE_KINDS, RemoveStep, RenameStep
from tests.conftest import new_space, postgres_url
from tests.old_stores import undo_migration_26


def _outline(mem: clew.Memory) -> dict[str, str]:
    """One record of each kind of the outline, each with a word of its own; their ids."""
    task = mem.create_task(
        "Migrate the quokka service",
        ["Draft the plan", "Cut over"],
        goal="the wombat cluster serves all traffic",
    )
    mem.update_task(
        task.id, step=1, step_status="completed", step_summary="drafted the bilby runbook"
    )
    mem.update_task(task.id, step=2, step_status="active", active_issue="numbat proxy refuses")
    mem.set_task_record(task.id, answer="The echidna endpoints were moved last")
    pattern = mem.add_pattern("ops", "platypus rollout", description="two colours of servers")
    guard = mem.add_guardrail("never restart the dingo queue by hand")
    return {
        "task": task.id,
        "goal": task.id,
        "answer": task.id,
        "pattern": pattern.id,
        "guardrail": guard.id,
        "step": task.plan[1].id,
        "summary": task.plan[0].id,
    }


def _found(mem: clew.Memory, question: str, kind: str) -> list[str]:
    return [h.id for h in mem.search_all(question, kinds=kind, mode="keyword")]


def test_every_kind_of_the_outline_is_found_by_its_index(mem: clew.Memory) -> None:
    ids = _outline(mem)
    asked = {
        "task": "quokka",
        "goal": "wombat",
        "answer": "echidna",
        "pattern": "platypus",
        "guardrail": "dingo",
        "step": "numbat",
        "summary": "bilby",
    }
    for name, word in asked.items():
        kind = "step" if name == "summary" else name
        assert _found(mem, word, kind) == [ids[name]], (name, word)
    # One index for every kind: a word of the step is found among all of them, once.
    hits = mem.search_all("numbat proxy", kinds=list(OUTLINE_KINDS), mode="keyword")
    assert [(h.kind, h.id) for h in hits] == [("step", ids["step"])]
    assert "[numbat]" in hits[0].snippet
    # Stems meet, as in the other indexes; the filters of a task and a time hold.
    assert _found(mem, "rollouts", "pattern") == [ids["pattern"]]
    other = mem.create_task("Another quokka", ["Plan it"])
    hits = mem.search_all("quokka", kinds="task", task_id=other.id, mode="keyword")
    assert [h.id for h in hits] == [other.id]
    assert mem.search_all("quokka", kinds="task", until="2000-01-01", mode="keyword") == []


def test_the_documents_follow_every_edit(mem: clew.Memory) -> None:
    ids = _outline(mem)
    task = ids["task"]
    mem.update_task(task, name="Migrate the koala service", goal="the emu cluster serves")
    assert _found(mem, "quokka", "task") == [] and _found(mem, "koala", "task") == [task]
    assert _found(mem, "wombat", "goal") == [] and _found(mem, "emu", "goal") == [task]
    mem.update_task(task, step=2, active_issue="the cassowary gate is shut")
    assert _found(mem, "numbat", "step") == [] and _found(mem, "cassowary", "step") == [ids["step"]]
    mem.set_task_record(task, answer="The lyrebird endpoints moved")
    assert _found(mem, "echidna", "answer") == [] and _found(mem, "lyrebird", "answer") == [task]
    mem.replan(task, [RenameStep(1, "Draft the galah plan")], reason="renamed")
    assert _found(mem, "galah", "step") == [ids["summary"]]
    mem.replan(task, [RemoveStep(1)], reason="not needed")
    assert _found(mem, "galah", "step") == []  # a removed step is not searched
    assert mem.verify().differences == ()


def test_verify_checks_the_outline_documents(mem: clew.Memory, db: Path, backend: str) -> None:
    _outline(mem)
    assert mem.verify().differences == ()
    if backend != "sqlite":
        return  # PostgreSQL's triggers are its own; the statement damaging it is SQLite's
    conn = sqlite3.connect(db, isolation_level=None)
    # A document whose text is not its row's (written around the index, as damage would be).
    conn.execute("UPDATE outline_docs SET body = 'stale' WHERE kind = 'guardrail'")
    conn.execute("DELETE FROM outline_docs WHERE kind = 'pattern'")
    conn.close()
    found = [d for d in mem.verify().differences if d.table == "outline_fts"]
    assert len(found) == 1
    assert "1 task name(s)" in found[0].stored and "1 differ from their row" in found[0].stored


@pytest.mark.sqlite_only("takes a SQLite file back to schema 25 (old_stores.py)")
def test_a_store_from_before_gets_its_documents(db: Path) -> None:
    with clew.open(db) as mem:
        ids = _outline(mem)
    conn = sqlite3.connect(db, isolation_level=None)
    undo_migration_26(conn)
    assert (
        conn.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'outline%'").fetchone()[0]
        == 0
    )
    conn.close()
    with clew.open(db) as mem:
        assert _found(mem, "platypus", "pattern") == [ids["pattern"]]
        assert _found(mem, "bilby", "step") == [ids["summary"]]
        assert mem.verify().differences == ()
        mem.add_guardrail("never page the quoll team at night")
        assert len(_found(mem, "quoll", "guardrail")) == 1


@pytest.fixture
def own_database() -> Iterator[str]:
    """A PostgreSQL database of the test's own (its schema is taken back and forth): the
    upgrade of a PostgreSQL store, so it runs once, not once a backend."""
    url = postgres_url()
    psycopg = pytest.importorskip("psycopg")
    name = f"clew_own_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def test_a_postgres_store_from_before_gets_every_space_s_documents(own_database: str) -> None:
    import psycopg

    from clew.store.migrations import OUTLINE_COLUMNS

    made = {}
    for space in (new_space(), new_space()):
        with clew.open(own_database, space=space) as mem:
            made[space] = _outline(mem)
    with psycopg.connect(own_database, autocommit=True) as conn:  # back to schema 25
        for table in OUTLINE_COLUMNS:
            conn.execute(f"DROP TRIGGER outline_{table} ON {table}")
        conn.execute("DROP TABLE outline_docs")
        conn.execute("DELETE FROM clew_migrations WHERE number = 26")
    for space, ids in made.items():
        with clew.open(own_database, space=space) as mem:  # the first applies migration 26
            assert _found(mem, "platypus", "pattern") == [ids["pattern"]]
            assert _found(mem, "bilby", "step") == [ids["summary"]]
            assert mem.verify().differences == ()
    with psycopg.connect(own_database, autocommit=True) as conn:  # damage, seen by verify
        conn.execute("UPDATE outline_docs SET body = 'stale' WHERE kind = 'guardrail'")
    with clew.open(own_database, space=space) as mem:
        found = [d for d in mem.verify().differences if d.table == "outline_docs"]
        assert len(found) == 1 and "1 differ from their row" in found[0].stored
