"""The `CheckpointStore` protocol (LangGraph's checkpoints) is written down and kept by both
backends, each with its own SQL: what a call stores is what the reads give back, scoped by
space; ClewSaver's own tests (test_langgraph_saver.py) check it from LangGraph's side."""

from __future__ import annotations

import inspect
import uuid
from pathlib import Path

import pytest

import clew
from clew.store import contract
from clew.store.contract import GraphBlob, GraphCheckpoint, GraphWrite
from clew.store.sqlite.graph_checkpoints import SQLiteGraphCheckpoints


def _methods() -> list[str]:
    return [n for n, v in vars(contract.CheckpointStore).items() if callable(v) and n[0] != "_"]


def test_every_method_of_the_protocol_says_what_it_does() -> None:
    assert inspect.getdoc(contract.CheckpointStore)
    for name in _methods():
        assert inspect.getdoc(getattr(contract.CheckpointStore, name)), name


def test_both_backends_provide_the_whole_protocol() -> None:
    pytest.importorskip("psycopg")
    from clew.store.postgres.graph_checkpoints import PgGraphCheckpoints

    for cls in (SQLiteGraphCheckpoints, PgGraphCheckpoints):
        for name in _methods():
            assert callable(getattr(cls, name, None)), f"{cls.__name__}.{name}"


def _checkpoint(
    thread: str, number: int, ns: str = "", parent: str | None = None
) -> GraphCheckpoint:
    return GraphCheckpoint(
        thread, ns, f"id-{number:03d}", parent, "json", b"{%d}" % number, "json", b"meta"
    )


def _ids(rows: list[GraphCheckpoint]) -> list[tuple[str, str, str]]:
    return [(r.thread_id, r.ns, r.checkpoint_id) for r in rows]


def test_checkpoints_are_found_and_listed_newest_first(mem: clew.Memory) -> None:
    store = mem.graph_checkpoints
    for n in (1, 2, 3):
        store.put_graph_checkpoint(_checkpoint("t", n, parent=f"id-{n - 1:03d}"), [])
    store.put_graph_checkpoint(_checkpoint("t", 2, ns="child"), [])
    store.put_graph_checkpoint(_checkpoint("u", 4), [])
    assert store.find_graph_checkpoint("t", "") == _checkpoint("t", 3, parent="id-002")
    assert store.find_graph_checkpoint("t", "", "id-001") == _checkpoint("t", 1, parent="id-000")
    assert store.find_graph_checkpoint("t", "", "id-009") is None
    assert store.find_graph_checkpoint("nobody", "") is None
    assert _ids(store.list_graph_checkpoints()) == [
        ("u", "", "id-004"),
        ("t", "", "id-003"),
        ("t", "", "id-002"),
        ("t", "child", "id-002"),
        ("t", "", "id-001"),
    ]
    assert _ids(store.list_graph_checkpoints(thread_id="t", ns="", before="id-003", limit=1)) == [
        ("t", "", "id-002")
    ]
    assert _ids(store.list_graph_checkpoints(checkpoint_id="id-002")) == [
        ("t", "", "id-002"),
        ("t", "child", "id-002"),
    ]
    assert store.list_graph_checkpoints(limit=0) == []
    assert store.newest_graph_checkpoints("t") == {"": "id-003", "child": "id-002"}
    assert sorted((m.thread_id, m.checkpoint_id) for m in store.graph_checkpoint_metadata()) == [
        ("t", "id-001"),
        ("t", "id-002"),
        ("t", "id-002"),
        ("t", "id-003"),
        ("u", "id-004"),
    ]
    # A checkpoint put again replaces the one stored.
    store.put_graph_checkpoint(_checkpoint("t", 3)._replace(metadata=b"new"), [])
    found = store.find_graph_checkpoint("t", "")
    assert found is not None and found.metadata == b"new" and found.parent_id is None


def test_a_version_names_one_value_and_appends_chain_back_to_a_full_one(
    mem: clew.Memory,
) -> None:
    store = mem.graph_checkpoints
    first = GraphBlob("t", "", "messages", "v1", "json", b"[1, 2]")
    grown = GraphBlob("t", "", "messages", "v2", "json", b"[3]", "v1", 2)
    again = GraphBlob("t", "", "messages", "v3", "json", b"[4]", "v2", 3)
    empty = GraphBlob("t", "", "step", "v1", "empty", None)
    store.put_graph_checkpoint(_checkpoint("t", 1), [first, empty])
    store.put_graph_checkpoint(_checkpoint("t", 2), [grown, first._replace(value=b"[0]")])
    store.put_graph_checkpoint(_checkpoint("t", 3), [again])
    found = store.graph_blobs("t", "", [("messages", "v1"), ("step", "v1"), ("messages", "v9")])
    assert sorted(found) == [first, empty]  # v1 kept its first value
    assert store.graph_blobs("t", "", []) == []
    assert store.graph_blob_chain("t", "", "messages", "v3") == [first, grown, again]
    assert store.graph_blob_bases("t", "") == {
        ("messages", "v1"): None,
        ("messages", "v2"): "v1",
        ("messages", "v3"): "v2",
        ("step", "v1"): None,
    }
    store.delete_graph_blobs("t", "", [("messages", "v1"), ("nothing", "v0")])
    chain = store.graph_blob_chain("t", "", "messages", "v3")
    assert chain == [grown, again] and chain[0].base_length is not None  # a base is missing


def test_pending_writes_are_kept_once_unless_replaced(mem: clew.Memory) -> None:
    store = mem.graph_checkpoints
    write = GraphWrite("t", "", "id-001", "task", 0, "out", "json", b"1", "path")
    store.put_graph_writes([write], replace=False)
    store.put_graph_writes([write._replace(value=b"2")], replace=False)
    assert store.graph_writes("t", "", "id-001") == [write]
    store.put_graph_writes([write._replace(channel="__error__", value=b"3")], replace=True)
    assert store.graph_writes("t", "", "id-001") == [
        write._replace(channel="__error__", value=b"3")
    ]
    store.put_graph_writes([], replace=True)
    assert store.graph_writes("t", "", "id-002") == []


def test_threads_are_deleted_copied_and_pruned(mem: clew.Memory) -> None:
    store = mem.graph_checkpoints
    blob = GraphBlob("t", "", "c", "v1", "json", b"1")
    write = GraphWrite("t", "", "id-001", "task", 0, "out", "json", b"1")
    for n in (1, 2):
        store.put_graph_checkpoint(_checkpoint("t", n), [blob] if n == 1 else [])
        store.put_graph_writes([write._replace(checkpoint_id=f"id-{n:03d}")], replace=False)
    store.copy_graph_thread("t", "copy")
    store.copy_graph_thread("t", "copy")  # rows the target has stay as they are
    assert _ids(store.list_graph_checkpoints(thread_id="copy")) == [
        ("copy", "", "id-002"),
        ("copy", "", "id-001"),
    ]
    assert store.graph_blobs("copy", "", [("c", "v1")]) == [blob._replace(thread_id="copy")]
    assert store.graph_writes("copy", "", "id-001") == [write._replace(thread_id="copy")]
    store.delete_graph_checkpoints("t", "", "id-002", others=True)
    assert _ids(store.list_graph_checkpoints(thread_id="t")) == [("t", "", "id-002")]
    assert store.graph_writes("t", "", "id-001") == []
    assert store.graph_blobs("t", "", [("c", "v1")]) == [blob]  # values stay
    store.delete_graph_checkpoints("copy", "", "id-002")
    assert _ids(store.list_graph_checkpoints(thread_id="copy")) == [("copy", "", "id-001")]
    store.delete_graph_thread("t")
    assert store.list_graph_checkpoints(thread_id="t") == []
    assert store.graph_blob_bases("t", "") == {}
    assert store.graph_writes("t", "", "id-002") == []
    assert store.list_graph_checkpoints(thread_id="copy") != []  # another thread: untouched


def test_a_transaction_around_several_calls_is_all_or_nothing(mem: clew.Memory) -> None:
    store = mem.graph_checkpoints
    store.put_graph_checkpoint(_checkpoint("t", 1), [])
    with pytest.raises(RuntimeError), store.transaction(write=True):
        store.delete_graph_thread("t")
        store.put_graph_checkpoint(_checkpoint("u", 1), [])
        raise RuntimeError("part way")
    assert _ids(store.list_graph_checkpoints()) == [("t", "", "id-001")]


def test_another_space_sees_none_of_them(db: Path) -> None:
    tail = uuid.uuid4().hex[:8]
    with clew.open(db, space=f"a-{tail}") as a, clew.open(db, space=f"b-{tail}") as b:
        a.graph_checkpoints.put_graph_checkpoint(
            _checkpoint("t", 1), [GraphBlob("t", "", "c", "v1", "json", b"1")]
        )
        b.graph_checkpoints.put_graph_checkpoint(_checkpoint("t", 2), [])
        b.graph_checkpoints.delete_graph_thread("t")
        b.graph_checkpoints.copy_graph_thread("t", "copy")
        assert b.graph_checkpoints.list_graph_checkpoints() == []
        assert b.graph_checkpoints.graph_blob_bases("t", "") == {}
        assert _ids(a.graph_checkpoints.list_graph_checkpoints()) == [("t", "", "id-001")]
        assert a.graph_checkpoints.graph_blob_bases("t", "") == {("c", "v1"): None}
