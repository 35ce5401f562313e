"""`ClewSaver`: LangGraph's checkpointer over a clew store (SQLite or PostgreSQL).

Invariants:
- Storage is linear in steps. A checkpoint's row holds the checkpoint without its channel
  values; each channel value is one blob keyed by (thread, namespace, channel, version),
  written once when that version first appears in `new_versions`, so a step writes only
  the channels it changed. A list that grew by appending (LangGraph's messages) is written
  as what was appended to the version before it (`base_version`, `base_length`), when this
  saver has that version's items' bytes in hand (it wrote or read it) and the new list
  begins with exactly those bytes; else in full.
  So a conversation's N steps cost O(N) bytes, not O(N^2) as a full copy per step would.
- Checkpoints are framework state beside the journal, not in it (docs/architecture.md):
  each `put`/`put_writes` is one transaction of the store, so an acknowledged checkpoint
  is durable, but it is no journal event and `clew verify` does not rebuild it.
- It reaches the store only through `Memory.graph_checkpoints` (the contract's
  `CheckpointStore`: each backend writes its own SQL), every row scoped by the store's
  space, like every other clew row.
- The async methods run the sync ones on one worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from clew.core.installation import missing_extra

try:
    from langchain_core.runnables import RunnableConfig
except ImportError as exc:  # a person reads this: say what to install, not a traceback's tail
    raise missing_extra("langgraph", exc) from None
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

import clew
from clew.errors import StoreError, ValidationError
from clew.store.contract import CheckpointStore, GraphBlob, GraphCheckpoint, GraphWrite

_T = TypeVar("_T")
# Channels whose newest list is held as the base of the next append (a bound on memory: a
# thread not held writes its next list in full, once).
_HELD = 128
_Tuples = list[CheckpointTuple]  # named here: inside ClewSaver, `list` is its method


def _memory(target: clew.Memory | clew.AsyncMemory | str) -> clew.Memory:
    if isinstance(target, clew.AsyncMemory):
        return target.sync  # the saver runs its calls on a thread of its own
    return target if isinstance(target, clew.Memory) else clew.open(target)


def _configured(config: RunnableConfig | None, *names: str) -> dict[str, Any]:
    """The config's `configurable`, or a ValidationError naming what it lacks."""
    conf = (config or {}).get("configurable")
    if not isinstance(conf, dict):
        raise ValidationError('a checkpoint config needs {"configurable": {"thread_id": ...}}')
    for name in names:
        if conf.get(name) in (None, ""):
            raise ValidationError(f"a checkpoint config needs configurable.{name}; it has none")
    return conf


def _writes_key(write: GraphWrite) -> tuple[Any, ...]:
    """LangGraph's order of pending writes: by task path, task id, then index."""
    from langgraph.checkpoint.base import writes_sort_key

    return tuple(writes_sort_key((write.task_path, write.task_id, write.idx)))  # type: ignore[arg-type]


class ClewSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer that keeps every thread's checkpoints in a clew store.

    `ClewSaver(clew.open("agent.db"))` or `ClewSaver("postgresql://...")`; pass it as
    `graph.compile(checkpointer=...)`. A fresh saver over the same store resumes a thread.
    """

    def __init__(
        self,
        memory: clew.Memory | clew.AsyncMemory | str,
        *,
        serde: SerializerProtocol | None = None,
    ) -> None:
        super().__init__(serde=serde)
        self.memory = _memory(memory)
        self._checkpoints: CheckpointStore = self.memory.graph_checkpoints
        self._space = self.memory.space
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="clew-langgraph")
        # The newest list value this saver wrote or read per (thread, namespace, channel),
        # as its items' serialized bytes, with its version: the base a grown list is stored
        # against. Bytes, not the objects: a node may change an item in place, and then
        # the list is no longer what was stored.
        self._lists: dict[tuple[str, str, str], tuple[str, list[bytes]]] = {}

    def close(self) -> None:
        """Stop the worker thread (the Memory stays open: its owner closes it)."""
        self._executor.shutdown(wait=True)

    # -- plumbing ----------------------------------------------------------------------------

    async def _off_loop(self, fn: Callable[..., _T], *args: Any) -> _T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(*args))

    def _tuple(self, row: GraphCheckpoint, *, remember: bool = False) -> CheckpointTuple:
        """The CheckpointTuple of a checkpoint row, with its channel values and writes."""
        thread_id, ns, checkpoint_id, parent_id, ctype, cdata, mtype, mdata = row
        checkpoint: Checkpoint = self.serde.loads_typed((ctype, bytes(cdata)))
        versions = checkpoint["channel_versions"]
        values = self._values(str(thread_id), ns, versions, remember=remember)
        writes = self._checkpoints.graph_writes(thread_id, ns, checkpoint_id)
        writes.sort(key=_writes_key)
        config: RunnableConfig = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint_id,
            }
        }
        parent: RunnableConfig | None = None
        if parent_id:
            parent = {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": ns,
                    "checkpoint_id": parent_id,
                }
            }
        return CheckpointTuple(
            config=config,
            checkpoint={**checkpoint, "channel_values": values},
            metadata=self.serde.loads_typed((mtype, bytes(mdata))),
            parent_config=parent,
            pending_writes=[
                (
                    w.task_id,
                    w.channel,
                    self.serde.loads_typed((w.value_type, bytes(w.value or b""))),
                )
                for w in writes
            ],
        )

    def _values(
        self, thread_id: str, ns: str, versions: ChannelVersions, *, remember: bool
    ) -> dict[str, Any]:
        """The channel values at `versions`: a stored value, or a grown list rebuilt from
        its chain of appends back to a value stored in full."""
        values: dict[str, Any] = {}
        if not versions:
            return values
        pairs = [(channel, str(version)) for channel, version in versions.items()]
        for blob in self._checkpoints.graph_blobs(thread_id, ns, pairs):
            channel, version = blob.channel, blob.version
            if blob.value_type == "empty":
                continue
            if blob.base_version is None:
                values[channel] = self.serde.loads_typed(
                    (blob.value_type, bytes(blob.value or b""))
                )
            else:
                values[channel] = self._grown(thread_id, ns, channel, version)
            key = (thread_id, ns, channel)
            held = self._lists.get(key)
            # Packing costs a serialization of the list: only for a version not held yet
            # (a new process's first read), never for the one this saver just wrote.
            if remember and isinstance(values[channel], list) and (held or ("",))[0] < version:
                self._remember(key, version, self._packed(values[channel]))
        return values

    def _packed(self, value: list[Any]) -> list[bytes]:
        """Each item of a list as the bytes it is stored as: what a prefix is checked by."""
        out = []
        for item in value:
            kind, data = self.serde.dumps_typed(item)
            out.append(kind.encode() + b"\0" + data)
        return out

    def _remember(self, key: tuple[str, str, str], version: str, value: list[bytes]) -> None:
        """Hold `value` as the base for the channel's next append, unless a newer version
        is held already (a listing reads old checkpoints); hold at most _HELD threads'."""
        known = self._lists.pop(key, None)
        if known is not None and known[0] > version:
            version, value = known
        self._lists[key] = (version, value)
        while len(self._lists) > _HELD:
            del self._lists[next(iter(self._lists))]  # the least recently written

    def _grown(self, thread_id: str, ns: str, channel: str, version: str) -> list[Any]:
        """A list stored as appends: walk its bases back to the full value, then append."""
        chain = self._checkpoints.graph_blob_chain(thread_id, ns, channel, version)
        if not chain or chain[0].base_length is not None:
            raise StoreError(
                f"LangGraph thread {thread_id}: channel {channel} at version {version} names"
                " a base value that is no longer stored; the checkpoint cannot be read"
            )
        found: list[Any] = []
        for blob in chain:
            vtype, value, length = blob.value_type, blob.value or b"", blob.base_length
            part = self.serde.loads_typed((vtype, bytes(value)))
            if length is None:
                found = list(part)
            else:
                del found[length:]  # in place: a long chain rebuilds in linear time
                found.extend(part)
        return found

    def _blob(
        self,
        thread_id: str,
        ns: str,
        channel: str,
        version: str,
        value: Any,
        packed: list[bytes] | None,
    ) -> GraphBlob:
        """The row that stores one channel value: the appended items when `value` is a list
        whose items (`packed`) begin with those of the list this saver last had for the
        channel, else the value."""
        base: str | None = None
        length: int | None = None
        known = self._lists.get((thread_id, ns, channel))
        if known is not None and packed is not None and known[0] != version:
            before = known[1]
            if len(packed) >= len(before) and packed[: len(before)] == before:
                base, length = known[0], len(before)
                value = value[length:]
        vtype, data = self.serde.dumps_typed(value)
        return GraphBlob(thread_id, ns, channel, version, vtype, data, base, length)

    # -- the sync API --------------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the checkpoint the config names, or the thread's newest one."""
        conf = _configured(config, "thread_id")
        thread_id, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "")
        with self._checkpoints.transaction():
            row = self._checkpoints.find_graph_checkpoint(
                thread_id, ns, get_checkpoint_id(config) or None
            )
            return self._tuple(row, remember=True) if row is not None else None

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Yield checkpoints newest first, narrowed by thread, namespace, id, metadata and
        `before`, at most `limit` of them."""
        return iter(self._list(config, filter, before, limit))

    def _list(
        self,
        config: RunnableConfig | None,
        filter: dict[str, Any] | None,
        before: RunnableConfig | None,
        limit: int | None,
    ) -> _Tuples:
        narrow: dict[str, str | None] = {}
        if config is not None:
            conf = _configured(config, "thread_id")
            narrow["thread_id"] = str(conf["thread_id"])
            narrow["ns"] = conf.get("checkpoint_ns")
            narrow["checkpoint_id"] = get_checkpoint_id(config) or None
        if before is not None:
            narrow["before"] = get_checkpoint_id(before) or None
        found: _Tuples = []
        if limit is not None and limit <= 0:
            return found
        with self._checkpoints.transaction():
            # A metadata filter is applied here, after the rows are read: no limit on them.
            rows = self._checkpoints.list_graph_checkpoints(
                **narrow, limit=None if filter else limit
            )
            for row in rows:
                if filter:
                    metadata = self.serde.loads_typed((row.metadata_type, bytes(row.metadata)))
                    if not all(metadata.get(k) == v for k, v in filter.items()):
                        continue
                found.append(self._tuple(row))
                if limit is not None and len(found) >= limit:
                    break
        return found

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store a checkpoint and the values of the channels whose version is new."""
        conf = _configured(config, "thread_id")
        thread_id, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "")
        rest = checkpoint.copy()
        values: dict[str, Any] = rest.pop("channel_values")  # type: ignore[misc]
        ctype, cdata = self.serde.dumps_typed(rest)
        mtype, mdata = self.serde.dumps_typed(get_checkpoint_metadata(config, metadata))
        blobs = []
        grown: dict[tuple[str, str, str], tuple[str, list[bytes]]] = {}
        for channel, version in new_versions.items():
            if channel not in values:  # a channel with no value at this version
                blobs.append(GraphBlob(thread_id, ns, channel, str(version), "empty", None))
                continue
            value = values[channel]
            packed = self._packed(value) if isinstance(value, list) else None
            blobs.append(self._blob(thread_id, ns, channel, str(version), value, packed))
            if packed is not None:
                grown[(thread_id, ns, channel)] = (str(version), packed)
        self._checkpoints.put_graph_checkpoint(
            GraphCheckpoint(
                thread_id,
                ns,
                checkpoint["id"],
                conf.get("checkpoint_id"),
                ctype,
                cdata,
                mtype,
                mdata,
            ),
            blobs,
        )
        for key, (version, value) in grown.items():  # after the commit: a rolled-back
            self._remember(key, version, value)  # version is no base
        return {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": checkpoint["id"],
            }
        }

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's pending writes for a checkpoint: a regular write once, a special
        one (error, interrupt...) replacing the one before it."""
        conf = _configured(config, "thread_id", "checkpoint_id")
        key = (str(conf["thread_id"]), conf.get("checkpoint_ns", ""), conf["checkpoint_id"])
        rows = []
        for idx, (channel, value) in enumerate(writes):
            vtype, data = self.serde.dumps_typed(value)
            at = WRITES_IDX_MAP.get(channel, idx)
            rows.append(GraphWrite(*key, task_id, at, channel, vtype, data, task_path))
        special = all(channel in WRITES_IDX_MAP for channel, _ in writes)
        self._checkpoints.put_graph_writes(rows, replace=special)

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints, channel values and writes."""
        self._forget({str(thread_id)})
        self._checkpoints.delete_graph_thread(str(thread_id))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread's checkpoints, channel values and writes to another thread."""
        self._checkpoints.copy_graph_thread(str(source_thread_id), str(target_thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) that the given runs made; channel values
        no remaining checkpoint needs go with them."""
        wanted = {str(r) for r in run_ids}
        if not wanted:
            return
        store = self._checkpoints
        with store.transaction(write=True):
            touched: set[tuple[str, str]] = set()
            for row in store.graph_checkpoint_metadata():
                metadata = self.serde.loads_typed((row.metadata_type, bytes(row.metadata)))
                if str(metadata.get("run_id")) in wanted:
                    store.delete_graph_checkpoints(row.thread_id, row.ns, row.checkpoint_id)
                    touched.add((row.thread_id, row.ns))
            for thread_id, ns in touched:
                self._collect(thread_id, ns)
        self._forget({t for t, _ in touched})

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Prune threads: `keep_latest` keeps each namespace's newest checkpoint (with its
        writes and the values it needs), `delete` removes them all."""
        if strategy not in ("keep_latest", "delete"):
            raise ValidationError(f"prune strategy {strategy!r} is not one of: keep_latest, delete")
        threads = [str(t) for t in thread_ids]
        if strategy == "delete":
            for thread_id in threads:
                self.delete_thread(thread_id)
            return
        store = self._checkpoints
        with store.transaction(write=True):
            for thread_id in threads:
                for ns, latest in store.newest_graph_checkpoints(thread_id).items():
                    store.delete_graph_checkpoints(thread_id, ns, latest, others=True)
                    self._collect(thread_id, ns)
        self._forget(set(threads))

    def _collect(self, thread_id: str, ns: str) -> None:
        """Delete the channel values of a thread's namespace that no checkpoint left there
        needs: neither at its versions nor as the base of a grown list it reads."""
        store = self._checkpoints
        bases = store.graph_blob_bases(thread_id, ns)
        needed: set[tuple[str, str]] = set()
        for row in store.list_graph_checkpoints(thread_id=thread_id, ns=ns):
            checkpoint = self.serde.loads_typed((row.checkpoint_type, bytes(row.checkpoint)))
            for channel, version in checkpoint["channel_versions"].items():
                at: str | None = str(version)
                while at is not None and (channel, at) not in needed:
                    needed.add((channel, at))
                    at = bases.get((channel, at))
        store.delete_graph_blobs(thread_id, ns, [key for key in bases if key not in needed])

    def _forget(self, threads: set[str]) -> None:
        """Drop the bases held for these threads: a pruned version is no base."""
        for known in [k for k in self._lists if k[0] in threads]:
            del self._lists[known]

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        """A version that sorts after `current`: a zero-padded counter and a random tail."""
        import random

        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(str(current).split(".")[0])
        return f"{number + 1:032}.{random.random():016}"

    # -- the async API: the same calls, off the event loop ---------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Async `get_tuple`."""
        return await self._off_loop(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async `list`."""
        for item in await self._off_loop(self._list, config, filter, before, limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Async `put`."""
        return await self._off_loop(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Async `put_writes`."""
        await self._off_loop(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Async `delete_thread`."""
        await self._off_loop(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Async `delete_for_runs`."""
        await self._off_loop(self.delete_for_runs, run_ids)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Async `prune`."""
        await self._off_loop(lambda: self.prune(thread_ids, strategy=strategy))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Async `copy_thread`."""
        await self._off_loop(self.copy_thread, source_thread_id, target_thread_id)
