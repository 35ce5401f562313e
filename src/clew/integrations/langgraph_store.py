"""`ClewStore`: LangGraph's long-term memory store (`BaseStore`) over a clew store.

An item is a clew archive entry of type `context`, with no task, so it is journaled (one
event per put or delete, in one transaction with its row and search index), carried by
`clew export`/`import`/`push`, checked by `clew verify`, and found by `clew search`. Its
tags name it: `langgraph:item`, one `langgraph:ns:[...]` per namespace prefix (a prefix
search is one tag lookup) and `langgraph:key:[...namespace, key]` (its identity). A put
supersedes the item's previous version, so its history stays queryable; a delete leaves
a tombstone entry (tagged `langgraph:deleted`, no `langgraph:item`) that supersedes it.

The entry's summary is the text to index (the `index` fields of the value, or all its
text), its detail the value as JSON with the item's first `created_at`. A query is
answered by clew's ranked search (bm25 on SQLite, PostgreSQL's ranking there): the same
engine as `clew search`, which LangGraph's own SQLite and Postgres stores lack.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from langgraph.store.base.embed import get_text_at_path

import clew
from clew.core.checks import MAX_NAME_CHARS
from clew.errors import ValidationError
from clew.models import Entry, EntryStatus, EntryType

ITEM = "langgraph:item"
DELETED = "langgraph:deleted"
_CONTEXT = EntryType.CONTEXT
_ACTIVE = EntryStatus.ACTIVE


def _ns_tag(namespace: Sequence[str]) -> str:
    return "langgraph:ns:" + json.dumps(list(namespace), ensure_ascii=False)


def _key_tag(namespace: Sequence[str], key: str) -> str:
    return "langgraph:key:" + json.dumps([*namespace, key], ensure_ascii=False)


def _moment(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _strings(value: Any) -> list[str]:
    """Every text and number in a JSON value, in order: what a whole value is indexed by."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, str):
        return [value]
    if isinstance(value, bool) or value is None:
        return []
    return [str(value)]


def index_text(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """The text an item is found by: its `fields` (LangGraph paths such as "a.b" or
    "items[*].text"), else every text in the value."""
    parts = (
        [t for f in fields for t in get_text_at_path(value, f)]
        if fields is not None
        else _strings(value)
    )
    return " ".join(p for p in parts if p.strip())


def _matches(value: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics (exact, nested, and $eq/$ne/$gt/$gte/$lt/$lte)."""
    from langgraph.store.memory import _compare_values  # the reference store's own rules

    return bool(_compare_values(value, wanted))


class ClewStore(BaseStore):
    """A LangGraph store whose items are kept, journaled and searched by clew.

    `ClewStore(clew.open("agent.db"))`; pass it as `graph.compile(store=...)`. `index`
    names the value fields searched by default (LangGraph's `index={"fields": [...]}`);
    without it an item is found by all of its text.
    """

    def __init__(
        self, memory: clew.Memory | clew.AsyncMemory | str, *, index: dict[str, Any] | None = None
    ) -> None:
        if isinstance(memory, clew.AsyncMemory):
            memory = memory.sync  # the store runs its calls on a thread of its own
        self.memory = memory if isinstance(memory, clew.Memory) else clew.open(memory)
        fields = (index or {}).get("fields")
        self._fields: list[str] | None = None if fields in (None, ["$"]) else list(fields)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clew-store")

    def close(self) -> None:
        """Stop the worker thread (the Memory stays open: its owner closes it)."""
        self._executor.shutdown(wait=True)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order and return their results."""
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._get(op.namespace, op.key))
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._namespaces(op))
            else:
                raise ValidationError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async `batch`, run off the event loop."""
        listed = list(ops)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self.batch, listed)

    # -- reading -------------------------------------------------------------------------------

    def _current(self, namespace: Sequence[str], key: str) -> Entry | None:
        """The item's newest active entry (maybe its tombstone)."""
        found = self.memory.list_entries(
            type=_CONTEXT, status=_ACTIVE, tags=[_key_tag(namespace, key)], limit=1
        )
        return found[0] if found else None

    def _item(self, entry: Entry) -> Item:
        body = json.loads(entry.detail or "{}")
        return Item(
            value=body["value"],
            key=body["key"],
            namespace=tuple(body["namespace"]),
            # A first version's created_at is its own entry's; later ones carry the first's.
            created_at=_moment(body.get("created_at") or entry.created_at),
            updated_at=_moment(entry.created_at),
        )

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        entry = self._current(namespace, key)
        if entry is None or DELETED in entry.tags:
            return None
        return self._item(entry)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        tag = _ns_tag(op.namespace_prefix) if op.namespace_prefix else ITEM
        wanted = max(op.offset, 0) + max(op.limit, 0)
        items: list[tuple[Item, float | None]] = []
        if op.query and op.query.strip():
            # Ranked by clew's search; the filter narrows what it ranked.
            hits = self.memory.search(
                op.query, type=_CONTEXT, status=_ACTIVE, tags=[tag, ITEM], limit=200
            )
            for rank, hit in enumerate(hits):
                items.append((self._item(hit.entry), 1.0 / (1 + rank)))
        else:
            # Without a filter, the page is the first `wanted` of the newest: read no more.
            entries = self.memory.list_entries(
                type=_CONTEXT,
                status=_ACTIVE,
                tags=[tag, ITEM],
                limit=None if op.filter or wanted <= 0 else wanted,
            )
            items = [(self._item(e), None) for e in entries]
        if op.filter:
            items = [
                (item, score)
                for item, score in items
                if all(_matches(item.value.get(k), v) for k, v in op.filter.items())
            ]
        page = items[op.offset : wanted]
        return [
            SearchItem(
                namespace=item.namespace,
                key=item.key,
                value=item.value,
                created_at=item.created_at,
                updated_at=item.updated_at,
                score=score,
            )
            for item, score in page
        ]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        from langgraph.store.memory import _does_match  # the reference store's own rules

        entries = self.memory.list_entries(type=_CONTEXT, status=_ACTIVE, tags=[ITEM])
        found = {tuple(json.loads(e.detail or "{}")["namespace"]) for e in entries}
        if op.match_conditions:
            found = {ns for ns in found if all(_does_match(c, ns) for c in op.match_conditions)}
        if op.max_depth is not None:
            found = {ns[: op.max_depth] for ns in found}
        return sorted(found)[op.offset : op.offset + op.limit]

    # -- writing -------------------------------------------------------------------------------

    def _put(self, op: PutOp) -> None:
        namespace, key = tuple(op.namespace), op.key
        if not namespace:
            raise ValidationError("a LangGraph item needs a namespace of at least one label")
        key_tag = _key_tag(namespace, key)
        if len(key_tag) > MAX_NAME_CHARS:
            raise ValidationError(
                f"a LangGraph item's namespace and key name it in {len(key_tag)} characters;"
                f" the limit is {MAX_NAME_CHARS}: use shorter labels or a shorter key"
            )
        # The summary is only text to search by: a NUL (which PostgreSQL cannot keep in
        # text) becomes a space there; the value itself is kept exactly, as JSON.
        label = "/".join([*namespace, key]).replace("\x00", " ")
        # Read and write in one transaction, so two puts of one key supersede in turn.
        with self.memory.atomic():
            old = self._current(namespace, key)
            if op.value is None:
                if old is None or DELETED in old.tags:
                    return
                self.memory.add_entry(
                    _CONTEXT,
                    f"LangGraph item {label} deleted",
                    tags=[DELETED, key_tag],
                    supersedes=old.id,
                )
                return
            created = None
            if old is not None and DELETED not in old.tags:
                created = json.loads(old.detail or "{}").get("created_at") or old.created_at
            fields: Sequence[str] | None
            if op.index is False:
                fields = []
            elif op.index is None:
                fields = self._fields
            else:
                fields = list(op.index)
            text = index_text(op.value, fields).replace("\x00", " ")
            body = {
                "namespace": list(namespace),
                "key": key,
                "value": op.value,
                "created_at": created,
            }
            try:
                detail = json.dumps(body, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise ValidationError(
                    f"the value of LangGraph item {label} is not JSON ({exc}); store plain"
                    " dicts, lists, text, numbers, booleans and None"
                ) from exc
            self.memory.add_entry(
                _CONTEXT,
                f"{label}: {text}" if text else label,
                detail=detail,
                tags=[
                    ITEM,
                    key_tag,
                    *(_ns_tag(namespace[:i]) for i in range(1, len(namespace) + 1)),
                ],
                supersedes=None if old is None else old.id,
            )
