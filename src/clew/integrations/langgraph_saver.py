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
- Every statement is scoped by the store's space, like every other clew row.
- The async methods run the sync ones on one worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
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
from clew.store.contract import Store

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


def _writes_key(row: Sequence[Any]) -> tuple[Any, ...]:
    """LangGraph's order of pending writes: by task path, task id, then index."""
    from langgraph.checkpoint.base import writes_sort_key

    return tuple(writes_sort_key((row[4], row[0], row[5])))  # type: ignore[arg-type]


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
        self._store: Store = self.memory._store
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

    def _run(self, sql: str, params: Sequence[Any] = (), *, write: bool = False) -> list[Any]:
        with self._store.transaction(write=write):
            return list(self._store._connection().execute(sql, params).fetchall())  # type: ignore[attr-defined]

    async def _off_loop(self, fn: Callable[..., _T], *args: Any) -> _T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(*args))

    def _tuple(self, row: Sequence[Any], *, remember: bool = False) -> CheckpointTuple:
        """The CheckpointTuple of a checkpoint row, with its channel values and writes."""
        thread_id, ns, checkpoint_id, parent_id, ctype, cdata, mtype, mdata = row
        checkpoint: Checkpoint = self.serde.loads_typed((ctype, bytes(cdata)))
        versions = checkpoint["channel_versions"]
        values = self._values(str(thread_id), ns, versions, remember=remember)
        writes = self._run(
            "SELECT task_id, channel, value_type, value, task_path, idx FROM langgraph_writes"
            " WHERE space = ? AND thread_id = ? AND ns = ? AND checkpoint_id = ?",
            (self._space, thread_id, ns, checkpoint_id),
        )
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
                (w[0], w[1], self.serde.loads_typed((w[2], bytes(w[3])))) for w in writes
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
        pairs = ", ".join("(?, ?)" for _ in versions)
        flat: list[Any] = []
        for channel, version in versions.items():
            flat += [channel, str(version)]
        rows = self._run(
            "SELECT channel, version, value_type, value, base_version FROM langgraph_blobs"
            " WHERE space = ? AND thread_id = ? AND ns = ?"
            f" AND (channel, version) IN (VALUES {pairs})",
            (self._space, thread_id, ns, *flat),
        )
        for channel, version, vtype, value, base in rows:
            if vtype == "empty":
                continue
            if base is None:
                values[channel] = self.serde.loads_typed((vtype, bytes(value)))
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
        chain = self._run(
            "WITH RECURSIVE chain (version, value_type, value, base_version, base_length,"
            " depth) AS (SELECT version, value_type, value, base_version, base_length, 0"
            " FROM langgraph_blobs WHERE space = ? AND thread_id = ? AND ns = ?"
            " AND channel = ? AND version = ?"
            " UNION ALL SELECT b.version, b.value_type, b.value, b.base_version,"
            " b.base_length, c.depth + 1 FROM chain c JOIN langgraph_blobs b"
            " ON b.space = ? AND b.thread_id = ? AND b.ns = ? AND b.channel = ?"
            " AND b.version = c.base_version)"
            " SELECT value_type, value, base_length FROM chain ORDER BY depth DESC",
            (self._space, thread_id, ns, channel, version, self._space, thread_id, ns, channel),
        )
        if not chain or chain[0][2] is not None:
            raise StoreError(
                f"LangGraph thread {thread_id}: channel {channel} at version {version} names"
                " a base value that is no longer stored; the checkpoint cannot be read"
            )
        found: list[Any] = []
        for vtype, value, length in chain:
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
    ) -> tuple[Any, ...]:
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
        return (self._space, thread_id, ns, channel, version, vtype, data, base, length)

    # -- the sync API --------------------------------------------------------------------------

    _COLUMNS = (
        "SELECT thread_id, ns, checkpoint_id, parent_id, checkpoint_type, checkpoint,"
        " metadata_type, metadata FROM langgraph_checkpoints WHERE space = ?"
    )

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Return the checkpoint the config names, or the thread's newest one."""
        conf = _configured(config, "thread_id")
        thread_id, ns = str(conf["thread_id"]), conf.get("checkpoint_ns", "")
        with self._store.transaction():
            if checkpoint_id := get_checkpoint_id(config):
                rows = self._run(
                    self._COLUMNS + " AND thread_id = ? AND ns = ? AND checkpoint_id = ?",
                    (self._space, thread_id, ns, checkpoint_id),
                )
            else:
                rows = self._run(
                    self._COLUMNS
                    + " AND thread_id = ? AND ns = ? ORDER BY checkpoint_id DESC LIMIT 1",
                    (self._space, thread_id, ns),
                )
            return self._tuple(rows[0], remember=True) if rows else None

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
        sql, params = self._COLUMNS, [self._space]
        if config is not None:
            conf = _configured(config, "thread_id")
            sql += " AND thread_id = ?"
            params.append(str(conf["thread_id"]))
            if conf.get("checkpoint_ns") is not None:
                sql += " AND ns = ?"
                params.append(conf["checkpoint_ns"])
            if checkpoint_id := get_checkpoint_id(config):
                sql += " AND checkpoint_id = ?"
                params.append(checkpoint_id)
        if before is not None and (before_id := get_checkpoint_id(before)):
            sql += " AND checkpoint_id < ?"
            params.append(before_id)
        sql += " ORDER BY checkpoint_id DESC, thread_id, ns"
        found: _Tuples = []
        if limit is not None and limit <= 0:
            return found
        with self._store.transaction():
            for row in self._run(sql, params):
                if filter:
                    metadata = self.serde.loads_typed((row[6], bytes(row[7])))
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
            if channel not in values:
                empty = ("empty", None, None, None)  # a channel with no value at this version
                blobs.append((self._space, thread_id, ns, channel, str(version), *empty))
                continue
            value = values[channel]
            packed = self._packed(value) if isinstance(value, list) else None
            blobs.append(self._blob(thread_id, ns, channel, str(version), value, packed))
            if packed is not None:
                grown[(thread_id, ns, channel)] = (str(version), packed)
        with self._store.transaction(write=True):
            conn = self._store._connection()  # type: ignore[attr-defined]
            if blobs:
                # A version names one value: a blob already stored for it stays.
                conn.executemany(
                    "INSERT INTO langgraph_blobs (space, thread_id, ns, channel, version,"
                    " value_type, value, base_version, base_length)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (space, thread_id, ns, channel, version) DO NOTHING",
                    blobs,
                )
            conn.execute(
                "INSERT INTO langgraph_checkpoints (space, thread_id, ns, checkpoint_id,"
                " parent_id, checkpoint_type, checkpoint, metadata_type, metadata)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (space, thread_id, ns, checkpoint_id) DO UPDATE SET"
                " parent_id = excluded.parent_id, checkpoint_type = excluded.checkpoint_type,"
                " checkpoint = excluded.checkpoint, metadata_type = excluded.metadata_type,"
                " metadata = excluded.metadata",
                (
                    self._space,
                    thread_id,
                    ns,
                    checkpoint["id"],
                    conf.get("checkpoint_id"),
                    ctype,
                    cdata,
                    mtype,
                    mdata,
                ),
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
        key = (self._space, str(conf["thread_id"]), conf.get("checkpoint_ns", ""))
        rows = []
        for idx, (channel, value) in enumerate(writes):
            vtype, data = self.serde.dumps_typed(value)
            at = WRITES_IDX_MAP.get(channel, idx)
            rows.append((*key, conf["checkpoint_id"], task_id, at, channel, vtype, data, task_path))
        special = all(channel in WRITES_IDX_MAP for channel, _ in writes)
        action = (
            "DO UPDATE SET channel = excluded.channel, value_type = excluded.value_type,"
            " value = excluded.value, task_path = excluded.task_path"
            if special
            else "DO NOTHING"
        )
        if not rows:
            return
        with self._store.transaction(write=True):
            self._store._connection().executemany(  # type: ignore[attr-defined]
                "INSERT INTO langgraph_writes (space, thread_id, ns, checkpoint_id, task_id,"
                " idx, channel, value_type, value, task_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                f" ON CONFLICT (space, thread_id, ns, checkpoint_id, task_id, idx) {action}",
                rows,
            )

    def delete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints, channel values and writes."""
        self._forget({str(thread_id)})
        with self._store.transaction(write=True):
            conn = self._store._connection()  # type: ignore[attr-defined]
            for table in ("langgraph_writes", "langgraph_blobs", "langgraph_checkpoints"):
                conn.execute(
                    f"DELETE FROM {table} WHERE space = ? AND thread_id = ?",
                    (self._space, str(thread_id)),
                )

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy a thread's checkpoints, channel values and writes to another thread."""
        with self._store.transaction(write=True):
            conn = self._store._connection()  # type: ignore[attr-defined]
            for table, columns in (
                ("langgraph_checkpoints", _CHECKPOINT_COLUMNS),
                ("langgraph_blobs", _BLOB_COLUMNS),
                ("langgraph_writes", _WRITE_COLUMNS),
            ):
                conn.execute(
                    f"INSERT INTO {table} (space, thread_id, {columns})"
                    f" SELECT space, ?, {columns} FROM {table}"
                    " WHERE space = ? AND thread_id = ? ON CONFLICT DO NOTHING",
                    (str(target_thread_id), self._space, str(source_thread_id)),
                )

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) that the given runs made; channel values
        no remaining checkpoint needs go with them."""
        wanted = {str(r) for r in run_ids}
        if not wanted:
            return
        with self._store.transaction(write=True):
            conn = self._store._connection()  # type: ignore[attr-defined]
            rows = conn.execute(
                "SELECT thread_id, ns, checkpoint_id, metadata_type, metadata"
                " FROM langgraph_checkpoints WHERE space = ?",
                (self._space,),
            ).fetchall()
            touched: set[tuple[str, str]] = set()
            for thread_id, ns, checkpoint_id, mtype, mdata in rows:
                metadata = self.serde.loads_typed((mtype, bytes(mdata)))
                if str(metadata.get("run_id")) in wanted:
                    self._drop(conn, thread_id, ns, "checkpoint_id = ?", checkpoint_id)
                    touched.add((thread_id, ns))
            for thread_id, ns in touched:
                self._collect(conn, thread_id, ns)
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
        with self._store.transaction(write=True):
            conn = self._store._connection()  # type: ignore[attr-defined]
            for thread_id in threads:
                newest = conn.execute(
                    "SELECT ns, max(checkpoint_id) FROM langgraph_checkpoints"
                    " WHERE space = ? AND thread_id = ? GROUP BY ns",
                    (self._space, thread_id),
                ).fetchall()
                for ns, latest in newest:
                    self._drop(conn, thread_id, ns, "checkpoint_id <> ?", latest)
                    self._collect(conn, thread_id, ns)
        self._forget(set(threads))

    def _drop(self, conn: Any, thread_id: str, ns: str, which: str, checkpoint_id: str) -> None:
        for table in ("langgraph_writes", "langgraph_checkpoints"):
            conn.execute(
                f"DELETE FROM {table} WHERE space = ? AND thread_id = ? AND ns = ? AND {which}",
                (self._space, thread_id, ns, checkpoint_id),
            )

    def _collect(self, conn: Any, thread_id: str, ns: str) -> None:
        """Delete the channel values of a thread's namespace that no checkpoint left there
        needs: neither at its versions nor as the base of a grown list it reads."""
        key = (self._space, thread_id, ns)
        bases = {
            (channel, version): base
            for channel, version, base in conn.execute(
                "SELECT channel, version, base_version FROM langgraph_blobs"
                " WHERE space = ? AND thread_id = ? AND ns = ?",
                key,
            ).fetchall()
        }
        needed: set[tuple[str, str]] = set()
        for ctype, cdata in conn.execute(
            "SELECT checkpoint_type, checkpoint FROM langgraph_checkpoints"
            " WHERE space = ? AND thread_id = ? AND ns = ?",
            key,
        ).fetchall():
            checkpoint = self.serde.loads_typed((ctype, bytes(cdata)))
            for channel, version in checkpoint["channel_versions"].items():
                at: str | None = str(version)
                while at is not None and (channel, at) not in needed:
                    needed.add((channel, at))
                    at = bases.get((channel, at))
        gone = [(*key, c, v) for c, v in bases if (c, v) not in needed]
        if gone:
            conn.executemany(
                "DELETE FROM langgraph_blobs WHERE space = ? AND thread_id = ? AND ns = ?"
                " AND channel = ? AND version = ?",
                gone,
            )

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


_CHECKPOINT_COLUMNS = (
    "ns, checkpoint_id, parent_id, checkpoint_type, checkpoint, metadata_type, metadata"
)
_BLOB_COLUMNS = "ns, channel, version, value_type, value, base_version, base_length"
_WRITE_COLUMNS = "ns, checkpoint_id, task_id, idx, channel, value_type, value, task_path"
