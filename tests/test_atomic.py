"""`Memory.atomic()`: several calls in one transaction, nesting with savepoints (on both
backends): all commit or none, an inner block or a raising call undone alone, and the journal's
chain and projections exactly what a replay makes (`verify`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import clew
from clew.aio import AsyncMemory
from clew.errors import StoreError, ValidationError
from clew.kernel import Committed


class Boom(Exception):
    """What the tests raise inside a block."""


def _names(mem: clew.Memory) -> list[str]:
    return sorted(t.name for t in mem.list_tasks())


@pytest.fixture
def committed(mem: clew.Memory) -> list[Committed]:
    """What after-commit subscribers are told, call by call."""
    seen: list[Committed] = []
    mem._subscribe(seen.append)
    return seen


def test_the_calls_of_a_block_commit_together_under_one_correlation_id(
    mem: clew.Memory, committed: list[Committed]
) -> None:
    with mem.atomic():
        first = mem.create_task("one", ["a"])
        second = mem.create_task("two", ["b"])
        mem.update_task(first.id, message="started")
        assert committed == []  # nothing has committed yet
    assert _names(mem) == ["one", "two"]
    assert len({e.correlation_id for e in mem.journal()}) == 1
    assert len(committed) == 1  # after-commit work runs once, after the commit
    assert committed[0].tasks == tuple(sorted([first.id, second.id]))
    assert mem.verify().ok


def test_an_exception_leaving_the_block_rolls_it_all_back(
    mem: clew.Memory, committed: list[Committed]
) -> None:
    kept = mem.create_task("kept", ["a"])
    with pytest.raises(Boom), mem.atomic():
        mem.create_task("gone", ["a"])
        mem.update_task(kept.id, message="never said")
        raise Boom
    assert _names(mem) == ["kept"]
    assert mem.list_messages(kept.id) == []
    assert len(committed) == 1  # the task made before the block, not the block
    mem.create_task("after", [])  # the chain goes on from the head before the block
    assert mem.verify().ok


def test_an_inner_block_that_fails_is_undone_alone(
    mem: clew.Memory, committed: list[Committed]
) -> None:
    with mem.atomic():
        outer = mem.create_task("outer", ["a"])
        with pytest.raises(Boom), mem.atomic():
            inner = mem.create_task("inner", ["a"])
            mem.update_task(outer.id, message="undone")
            raise Boom
        # Written after the undone block, at the same moment (the test's clock stands
        # still): the task's updated_at is stamped again, and the chain follows the outer
        # block's head, not the undone one's.
        mem.update_task(outer.id, message="kept")
    assert _names(mem) == ["outer"]
    assert [m.content for m in mem.list_messages(outer.id)] == ["kept"]
    assert committed[-1].tasks == (outer.id,)  # the undone task is not reported
    assert inner.id not in {e.task_id for e in mem.journal()}
    assert mem.verify().ok


def test_an_inner_block_that_succeeds_commits_with_the_outer_one(mem: clew.Memory) -> None:
    with mem.atomic():
        mem.create_task("outer", [])
        with mem.atomic(), mem.atomic():
            mem.create_task("inner", [])
    assert _names(mem) == ["inner", "outer"]
    with pytest.raises(Boom), mem.atomic():
        with mem.atomic():
            mem.create_task("inner too", [])
        raise Boom  # the outer block fails: what its inner blocks wrote goes with it
    assert _names(mem) == ["inner", "outer"]
    assert mem.verify().ok


@pytest.fixture
def second_append_fails(mem: clew.Memory) -> Iterator[Callable[[], None]]:
    """Arm a failure of the next call's second journal event."""
    store: Any = mem._store
    original = store.append
    seen: list[str] = []
    armed = [False]

    def append(**event: Any) -> Any:
        if armed[0]:
            seen.append(event["type"])
            if len(seen) == 2:
                armed[0] = False
                raise Boom("the second event of the call")
        return original(**event)

    store.append = append
    yield lambda: armed.__setitem__(0, True)
    store.append = original


def test_a_call_that_raises_inside_a_block_leaves_nothing_half_written(
    mem: clew.Memory, second_append_fails: Callable[[], None]
) -> None:
    task = mem.create_task("work", ["one", "two"])
    with mem.atomic():
        mem.update_task(task.id, message="before")
        second_append_fails()
        with pytest.raises(Boom):  # its message is journaled, its step change fails
            mem.update_task(task.id, step=1, step_status="completed", message="one done")
        with pytest.raises(ValidationError):  # a check that fails writes nothing either
            mem.update_task(task.id, status="no such status")
        mem.update_task(task.id, message="after")
    assert [m.content for m in mem.list_messages(task.id)] == ["after", "before"]
    assert mem.get_task(task.id).plan[0].status == "pending"
    assert mem.verify().ok


def test_a_block_in_a_correlation_block_takes_its_id(mem: clew.Memory) -> None:
    with mem.correlation("run-1"), mem.atomic():
        mem.create_task("one", [])
        mem.create_task("two", [])
    assert {e.correlation_id for e in mem.journal()} == {"run-1"}


def test_async_memory_runs_a_function_atomically(mem: clew.Memory) -> None:
    amem = AsyncMemory(mem)

    def two(memory: clew.Memory) -> str:
        memory.create_task("one", [])
        return memory.create_task("two", []).name

    def failing(memory: clew.Memory) -> None:
        memory.create_task("gone", [])
        raise Boom

    async def scenario() -> str:
        name = await amem.atomic(two)
        with pytest.raises(Boom):
            await amem.atomic(failing)
        with pytest.raises(clew.ValidationError, match="atomic takes a function"):
            await amem.atomic("create_task")  # type: ignore[arg-type]
        return name

    try:
        assert asyncio.run(scenario()) == "two"
    finally:
        amem._executor.shutdown(wait=True)
    assert _names(mem) == ["one", "two"]


def test_a_savepoint_recovers_from_a_statement_the_database_refused(mem: clew.Memory) -> None:
    store: Any = mem._store  # PostgreSQL aborts the whole transaction on a failed statement
    with mem.atomic():
        mem.create_task("before", [])
        with pytest.raises(StoreError), store.savepoint():
            store._guard(lambda: store._connection().execute("SELECT * FROM no_such_table"))
        mem.create_task("after", [])
    assert _names(mem) == ["after", "before"]
    with pytest.raises(RuntimeError), store.savepoint():  # only inside a write transaction
        pass
    assert mem.verify().ok
