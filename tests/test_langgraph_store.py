"""ClewStore honours LangGraph's BaseStore contract (the reference InMemoryStore's rules,
checked side by side where they apply), on both backends; items are journaled entries."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph.store.base")

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from langgraph.store.base import (
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

import clew
from clew.integrations.langgraph import ClewStore
from clew.privacy.secret_shapes import name_kind
from tests.conftest import FakeClock


@pytest.fixture
def store(mem: clew.Memory) -> ClewStore:
    return ClewStore(mem)


def test_put_get_update_delete_keep_the_items_times(store: ClewStore, clock: FakeClock) -> None:
    store.put(("users", "u1"), "prefs", {"theme": "dark"})
    first = store.get(("users", "u1"), "prefs")
    assert first is not None and first.value == {"theme": "dark"}
    assert first.namespace == ("users", "u1") and first.key == "prefs"
    clock.advance(60)
    store.put(("users", "u1"), "prefs", {"theme": "light"})
    second = store.get(("users", "u1"), "prefs")
    assert second is not None and second.value == {"theme": "light"}
    assert second.created_at == first.created_at
    assert (second.updated_at - first.updated_at).total_seconds() == pytest.approx(60)
    store.delete(("users", "u1"), "prefs")
    assert store.get(("users", "u1"), "prefs") is None
    store.delete(("users", "u1"), "prefs")  # deleting twice is no error
    clock.advance(60)
    store.put(("users", "u1"), "prefs", {"theme": "blue"})
    again = store.get(("users", "u1"), "prefs")
    assert again is not None and again.value == {"theme": "blue"}
    assert again.created_at > first.created_at  # a new item after a delete
    assert store.get(("users", "u2"), "prefs") is None
    assert store.get(("users",), "prefs") is None


def test_every_put_is_a_journaled_entry_and_verify_passes(
    store: ClewStore, mem: clew.Memory
) -> None:
    store.put(("docs",), "a", {"text": "alpha"})
    store.put(("docs",), "a", {"text": "beta"})
    store.delete(("docs",), "a")
    kinds = [e.type for e in mem.journal()]
    assert kinds.count("entry.added") == 3
    assert mem.verify().ok
    # The history stays queryable: both versions and the tombstone are entries.
    assert len(mem.list_entries(type="context")) == 3


def test_a_fresh_store_over_the_same_file_reads_the_items(mem: clew.Memory) -> None:
    ClewStore(mem).put(("a",), "k", {"n": 1})
    with clew.open(mem.path, space=mem.space) as again:
        item = ClewStore(again).get(("a",), "k")
    assert item is not None and item.value == {"n": 1}


def _fill(store: Any) -> None:
    store.put(("docs", "eng"), "d1", {"title": "deploy guide", "n": 1, "tag": "ops"})
    store.put(("docs", "eng"), "d2", {"title": "postgres tuning", "n": 2, "tag": "db"})
    store.put(("docs", "sales"), "d3", {"title": "pricing", "n": 3, "tag": "ops"})
    store.put(("notes",), "x", {"title": "deploy checklist", "n": 4, "meta": {"a": 1}})


def _keys(items: list[Any]) -> set[str]:
    return {i.key for i in items}


@pytest.mark.parametrize(
    ("prefix", "filter"),
    [
        ((), None),
        (("docs",), None),
        (("docs", "eng"), None),
        (("docs",), {"tag": "ops"}),
        ((), {"n": {"$gt": 1}}),
        ((), {"n": {"$lte": 2}, "tag": {"$ne": "db"}}),
        ((), {"meta": {"a": 1}}),
        (("nothing",), None),
    ],
)
def test_search_by_prefix_and_filter_finds_what_the_reference_store_finds(
    store: ClewStore, prefix: tuple[str, ...], filter: dict[str, Any] | None
) -> None:
    reference = InMemoryStore()
    _fill(store)
    _fill(reference)
    ours = store.search(prefix, filter=filter, limit=50)
    theirs = reference.search(prefix, filter=filter, limit=50)
    assert _keys(ours) == _keys(theirs)
    assert all(i.score is None for i in ours)


@pytest.mark.search
def test_a_query_is_ranked_by_clews_search(store: ClewStore) -> None:
    _fill(store)
    store.put(("docs", "eng"), "d5", {"title": "rollback", "body": "deploy deploy deploy"})
    hits = store.search(("docs",), query="deploy")
    assert {h.key for h in hits} == {"d1", "d5"}  # the prefix holds: notes/x is outside
    assert all(h.score is not None for h in hits)
    assert [h.score for h in hits] == sorted((h.score or 0 for h in hits), reverse=True)
    assert store.search((), query="deploy", filter={"n": 4})[0].key == "x"
    assert store.search((), query="kubernetes") == []


@pytest.mark.search
def test_index_fields_choose_what_a_query_finds(mem: clew.Memory) -> None:
    """The indexed fields are the item's summary, which ranks above the rest of its value
    (all of which clew's search also reads: nothing stored is unfindable)."""
    store = ClewStore(mem, index={"fields": ["title"]})
    store.put(("a",), "1", {"title": "zebra", "body": "lion"})
    store.put(("a",), "2", {"title": "lion", "body": "zebra"})
    store.put(("a",), "3", {"title": "zebra", "body": "lion"}, index=["body"])
    zebra = [h.key for h in store.search(("a",), query="zebra")]
    assert zebra[0] == "1" and sorted(zebra) == ["1", "2", "3"]
    lion = [h.key for h in store.search(("a",), query="lion")]
    assert lion[-1] == "1" and sorted(lion) == ["1", "2", "3"]


def test_limit_and_offset_page_through_the_items(store: ClewStore) -> None:
    for n in range(7):
        store.put(("p",), f"k{n}", {"n": n})
    pages = [store.search(("p",), limit=3, offset=o) for o in (0, 3, 6)]
    assert [len(p) for p in pages] == [3, 3, 1]
    assert len({i.key for p in pages for i in p}) == 7


@pytest.mark.parametrize(
    "op",
    [
        ListNamespacesOp(),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("docs",)),)),
        ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("eng",)),)),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("*", "sales")),)),
        ListNamespacesOp(max_depth=1),
        ListNamespacesOp(limit=1, offset=1),
    ],
)
def test_list_namespaces_agrees_with_the_reference_store(
    store: ClewStore, op: ListNamespacesOp
) -> None:
    reference = InMemoryStore()
    _fill(store)
    _fill(reference)
    store.put(("gone",), "g", {"x": 1})
    store.delete(("gone",), "g")  # a namespace with only deleted items is not listed
    assert store.batch([op]) == reference.batch([op])


def test_batch_and_abatch_answer_in_order(store: ClewStore) -> None:
    ops = [
        PutOp(("b",), "k", {"v": 1}),
        GetOp(("b",), "k"),
        SearchOp(("b",)),
        ListNamespacesOp(),
        PutOp(("b",), "k", None),
        GetOp(("b",), "k"),
    ]
    results = asyncio.run(store.abatch(ops))
    assert results[0] is None and results[4] is None and results[5] is None
    assert results[1] is not None and results[1].value == {"v": 1}  # type: ignore[union-attr]
    assert [i.key for i in results[2]] == ["k"]  # type: ignore[union-attr]
    assert results[3] == [("b",)]


def _names_a_secret(value: Any) -> bool:
    """Whether any key in `value`, at any depth, is a name redaction reads as a secret's."""
    if isinstance(value, dict):
        return any(name_kind(k) or _names_a_secret(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_names_a_secret(v) for v in value)
    return False


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    namespace=st.lists(
        st.text(
            st.characters(blacklist_characters="\x00.", codec="utf-8"), min_size=1, max_size=10
        ),
        min_size=1,
        max_size=3,
    ),
    key=st.text(st.characters(codec="utf-8"), min_size=1, max_size=20),
    value=st.dictionaries(st.text(max_size=8), _json, max_size=5),
)
def test_any_value_round_trips(
    store: ClewStore, namespace: list[str], key: str, value: dict[str, Any]
) -> None:
    # A value under a secret's name (`{"PASS": ":"}`) is redacted by design, as everything
    # clew stores is: the next test holds that; this one, every other value.
    assume(not _names_a_secret(value))
    store.put(tuple(namespace), key, value)
    item = store.get(tuple(namespace), key)
    assert item is not None and item.value == value and item.key == key


def test_the_async_methods_do_what_the_sync_ones_do(db: Path) -> None:
    async def use() -> tuple[Any, ...]:
        memory = clew.open_async(db)  # an async app's memory serves the store too
        store = ClewStore(memory)
        await store.aput(("a", "b"), "k", {"text": "async item"})
        got = await store.aget(("a", "b"), "k")
        found = await store.asearch(("a",), filter={"text": "async item"})
        spaces = await store.alist_namespaces(prefix=("a",))
        await store.adelete(("a", "b"), "k")
        gone = await store.aget(("a", "b"), "k")
        store.close()
        await memory.close()
        return got, found, spaces, gone

    got, found, spaces, gone = asyncio.run(use())
    assert got.value == {"text": "async item"} and [i.key for i in found] == ["k"]
    assert spaces == [("a", "b")] and gone is None


def test_a_value_that_reads_like_a_password_assignment_stays_json(store: ClewStore) -> None:
    # Redacted as prose, `{"pass:": null}` was a password assignment that swallowed the JSON
    # after it: the stored item no longer parsed, and its next put or get failed.
    for value in ({"a": [{"pass:": None}]}, {"\x80z": [{"pass:": "x"}]}):
        store.put(("users", "u1"), "prefs", value)
        store.put(("users", "u1"), "prefs", value)  # the second reads the first's created_at
        item = store.get(("users", "u1"), "prefs")
        assert item is not None and item.value == value
    store.put(("users", "u1"), "login", {"password": "hunter2-very-secret"})
    item = store.get(("users", "u1"), "login")
    assert item is not None and item.value == {"password": "[redacted:password]"}
