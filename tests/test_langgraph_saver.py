"""ClewSaver against LangGraph's published checkpointer conformance suite, on both backends,
and a thread's storage growing linearly with its steps."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("langgraph.checkpoint.conformance")

from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

import clew
from clew.integrations.langgraph import ClewSaver


def test_the_published_conformance_suite_passes(db: Path) -> None:
    memories: list[clew.Memory] = []

    @checkpointer_test(name="ClewSaver")
    async def factory() -> AsyncGenerator[ClewSaver, None]:
        memory = clew.open(db, space=f"lg-{len(memories)}" if isinstance(db, str) else None)
        memories.append(memory)
        saver = ClewSaver(memory)
        yield saver
        saver.close()

    report = asyncio.run(validate(factory))
    for memory in memories:
        memory.close()
    failures = {
        name: result.failures for name, result in report.results.items() if result.passed is False
    }
    assert not failures, failures
    passed = {name for name, result in report.results.items() if result.passed}
    assert passed == {c.value for c in ALL_CAPABILITIES}  # the optional ones too


def _config(thread: str, parent: str | None = None) -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ""}
    if parent is not None:
        conf["checkpoint_id"] = parent
    return {"configurable": conf}


def _put_values(saver: ClewSaver, thread: str, lists: list[list[Any]]) -> list[str]:
    """Put one checkpoint per value of a `messages` channel; return their ids."""
    ids: list[str] = []
    version: str | None = None
    for n, value in enumerate(lists):
        version = saver.get_next_version(version, None)
        checkpoint = empty_checkpoint()
        checkpoint["id"] = f"1f0-{n:06d}"
        checkpoint["channel_values"] = {"messages": value, "step": n}
        checkpoint["channel_versions"] = {"messages": version, "step": version}
        saver.put(
            _config(thread, ids[-1] if ids else None),
            checkpoint,
            {"step": n},
            {"messages": version, "step": version},
        )
        ids.append(checkpoint["id"])
    return ids


def _stored_bytes(memory: clew.Memory) -> int:
    with memory._store.transaction():
        conn = memory._store._connection()  # type: ignore[attr-defined]
        row = conn.execute("SELECT sum(length(value)) FROM langgraph_blobs").fetchone()
    return int(row[0] or 0)


def test_a_growing_list_is_stored_linearly_in_its_steps(db: Path) -> None:
    item = "x" * 500
    with clew.open(db) as memory:
        saver = ClewSaver(memory)
        _put_values(saver, "short", [[item] * n for n in range(1, 101)])
        short = _stored_bytes(memory)
        _put_values(saver, "long", [[item] * n for n in range(1, 201)])
        both = _stored_bytes(memory)
    long = both - short
    # Twice the steps, twice the bytes (a full copy per step would be four times).
    assert 1.8 < long / short < 2.3
    assert long < 200 * 700  # each step's one new item and its framing, no copies


def _lists() -> st.SearchStrategy[list[list[Any]]]:
    """A channel's successive values: mostly appends, sometimes an edit or a shrink."""
    step = st.one_of(
        st.tuples(st.just("append"), st.lists(st.text(max_size=5), max_size=3)),
        st.tuples(st.just("edit"), st.integers(0, 50)),
        st.tuples(st.just("shrink"), st.integers(0, 50)),
    )

    def build(steps: list[tuple[str, Any]]) -> list[list[Any]]:
        values: list[list[Any]] = []
        current: list[Any] = []
        for kind, arg in steps:
            if kind == "append":
                current = current + arg
            elif kind == "edit" and current:
                current = list(current)
                current[arg % len(current)] = {"edited": arg}
            else:
                current = current[: arg % (len(current) + 1)]
            values.append(current)
        return values

    return st.lists(step, min_size=1, max_size=12).map(build)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(values=_lists())
def test_every_checkpoint_reads_back_its_exact_list_in_a_fresh_saver(
    db: Path, values: list[list[Any]]
) -> None:
    thread = uuid.uuid4().hex
    with clew.open(db) as memory:
        ids = _put_values(ClewSaver(memory), thread, values)
    with clew.open(db) as memory:
        fresh = ClewSaver(memory)
        for checkpoint_id, value in zip(ids, values, strict=True):
            got = fresh.get_tuple(_config(thread, checkpoint_id))
            assert got is not None
            assert got.checkpoint["channel_values"].get("messages", []) == value
        # The fresh saver appends to what it read: the next value is stored as a delta.
        _put_values(fresh, thread + "-2", [values[-1], [*values[-1], "more"]])
        latest = fresh.get_tuple(_config(thread + "-2"))
        assert latest is not None
        assert latest.checkpoint["channel_values"]["messages"] == [*values[-1], "more"]


def test_pruning_keeps_what_the_latest_checkpoint_reads_and_frees_the_rest(db: Path) -> None:
    values = [[f"message {i}" for i in range(n)] for n in range(1, 31)]
    values[15] = ["rewritten", *values[15][1:]]  # an edit: stored in full, a new base
    with clew.open(db) as memory:
        saver = ClewSaver(memory)
        _put_values(saver, "pruned", values)
        before = _stored_bytes(memory)
        saver.prune(["pruned"])
        after = _stored_bytes(memory)
        assert len(list(saver.list(_config("pruned")))) == 1
    with clew.open(db) as memory:
        latest = ClewSaver(memory).get_tuple(_config("pruned"))
    assert latest is not None and latest.checkpoint["channel_values"]["messages"] == values[-1]
    assert after < before  # the other steps' values and the old chain before the edit went


def test_items_equal_in_python_but_stored_apart_are_not_taken_for_a_prefix(db: Path) -> None:
    values: list[list[Any]] = [[1, 0.0, {"a": 1}], [True, -0.0, {"a": True}, "new"]]
    with clew.open(db) as memory:
        saver = ClewSaver(memory)
        ids = _put_values(saver, "loose", values)
        for checkpoint_id, value in zip(ids, values, strict=True):
            got = saver.get_tuple(_config("loose", checkpoint_id))
            assert got is not None
            stored = got.checkpoint["channel_values"]["messages"]
            assert [(type(x), repr(x)) for x in stored] == [(type(x), repr(x)) for x in value]


def test_an_item_changed_in_place_is_stored_as_changed(db: Path) -> None:
    """A node may edit a list's item in place: the list is then no longer the one stored,
    and what is stored next is the list as it is."""
    first: dict[str, Any] = {"role": "ai", "content": "draft"}
    values: list[list[Any]] = [[first]]
    with clew.open(db) as memory:
        saver = ClewSaver(memory)
        version = saver.get_next_version(None, None)
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": values[0]}
        checkpoint["channel_versions"] = {"messages": version}
        done = saver.put(_config("edited"), checkpoint, {}, {"messages": version})
        first["content"] = "final"  # in place, after it was stored
        version = saver.get_next_version(version, None)
        later = empty_checkpoint()
        later["channel_values"] = {"messages": [first, {"role": "user", "content": "ok"}]}
        later["channel_versions"] = {"messages": version}
        saver.put(done, later, {}, {"messages": version})
        got = saver.get_tuple(_config("edited"))
    assert got is not None
    assert got.checkpoint["channel_values"]["messages"] == [
        {"role": "ai", "content": "final"},
        {"role": "user", "content": "ok"},
    ]
