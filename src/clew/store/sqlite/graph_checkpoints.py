"""LangGraph's checkpoints in SQLite's SQL: the `CheckpointStore` of SQLiteStore.

A composed object, not a mixin: the store makes one (`store.graph_checkpoints`) and it runs
its statements on the store's connection inside the store's transactions, so they join a
transaction the caller opened. Every statement names the store's space.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from clew.store.contract import GraphBlob, GraphCheckpoint, GraphMetadata, GraphWrite

if TYPE_CHECKING:
    from clew.store.sqlite.store import SQLiteStore

_CHECKPOINT = (
    "SELECT thread_id, ns, checkpoint_id, parent_id, checkpoint_type, checkpoint,"
    " metadata_type, metadata FROM langgraph_checkpoints WHERE space = ?"
)
_BLOB = (
    "SELECT thread_id, ns, channel, version, value_type, value, base_version, base_length"
    " FROM langgraph_blobs WHERE space = ? AND thread_id = ? AND ns = ?"
)
PUT_BLOB = (
    "INSERT INTO langgraph_blobs (space, thread_id, ns, channel, version, value_type, value,"
    " base_version, base_length) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (space, thread_id, ns, channel, version) DO NOTHING"
)
PUT_CHECKPOINT = (
    "INSERT INTO langgraph_checkpoints (space, thread_id, ns, checkpoint_id, parent_id,"
    " checkpoint_type, checkpoint, metadata_type, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (space, thread_id, ns, checkpoint_id) DO UPDATE SET"
    " parent_id = excluded.parent_id, checkpoint_type = excluded.checkpoint_type,"
    " checkpoint = excluded.checkpoint, metadata_type = excluded.metadata_type,"
    " metadata = excluded.metadata"
)
PUT_WRITE = (
    "INSERT INTO langgraph_writes (space, thread_id, ns, checkpoint_id, task_id, idx, channel,"
    " value_type, value, task_path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (space, thread_id, ns, checkpoint_id, task_id, idx)"
)
REPLACE_WRITE = (
    " DO UPDATE SET channel = excluded.channel, value_type = excluded.value_type,"
    " value = excluded.value, task_path = excluded.task_path"
)
# The columns a thread's copy takes as they are (its space and thread id are the copy's).
COPIED = (
    (
        "langgraph_checkpoints",
        "ns, checkpoint_id, parent_id, checkpoint_type, checkpoint, metadata_type, metadata",
    ),
    ("langgraph_blobs", "ns, channel, version, value_type, value, base_version, base_length"),
    ("langgraph_writes", "ns, checkpoint_id, task_id, idx, channel, value_type, value, task_path"),
)


class SQLiteGraphCheckpoints:
    """`CheckpointStore` over a SQLiteStore's connection."""

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store
        self._space = store.space

    def transaction(self, *, write: bool = False) -> AbstractContextManager[None]:
        """`Journal.transaction`: the calls inside run in one transaction."""
        return self._store.transaction(write=write)

    def _all(self, sql: str, params: Sequence[Any]) -> list[Any]:
        store = self._store
        with store.transaction():
            return list(store._guard(lambda: store._conn.execute(sql, params).fetchall()))

    def _run(self, sql: str, params: Sequence[Any]) -> None:
        store = self._store
        with store.transaction(write=True):
            store._guard(lambda: store._conn.execute(sql, params))

    def _run_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        store = self._store
        with store.transaction(write=True):
            store._guard(lambda: store._conn.executemany(sql, rows))

    def put_graph_checkpoint(self, checkpoint: GraphCheckpoint, blobs: Sequence[GraphBlob]) -> None:
        """`CheckpointStore.put_graph_checkpoint`."""
        with self._store.transaction(write=True):
            if blobs:
                self._run_many(PUT_BLOB, [(self._space, *b) for b in blobs])
            self._run(PUT_CHECKPOINT, (self._space, *checkpoint))

    def put_graph_writes(self, writes: Sequence[GraphWrite], *, replace: bool) -> None:
        """`CheckpointStore.put_graph_writes`."""
        if writes:
            sql = PUT_WRITE + (REPLACE_WRITE if replace else " DO NOTHING")
            self._run_many(sql, [(self._space, *w) for w in writes])

    def find_graph_checkpoint(
        self, thread_id: str, ns: str, checkpoint_id: str | None = None
    ) -> GraphCheckpoint | None:
        """`CheckpointStore.find_graph_checkpoint`."""
        if checkpoint_id:
            rows = self._all(
                _CHECKPOINT + " AND thread_id = ? AND ns = ? AND checkpoint_id = ?",
                (self._space, thread_id, ns, checkpoint_id),
            )
        else:
            rows = self._all(
                _CHECKPOINT + " AND thread_id = ? AND ns = ? ORDER BY checkpoint_id DESC LIMIT 1",
                (self._space, thread_id, ns),
            )
        return GraphCheckpoint(*rows[0]) if rows else None

    def list_graph_checkpoints(
        self,
        *,
        thread_id: str | None = None,
        ns: str | None = None,
        checkpoint_id: str | None = None,
        before: str | None = None,
        limit: int | None = None,
    ) -> list[GraphCheckpoint]:
        """`CheckpointStore.list_graph_checkpoints`."""
        sql, params = _CHECKPOINT, list[Any]([self._space])
        for column, value in (
            ("thread_id", thread_id),
            ("ns", ns),
            ("checkpoint_id", checkpoint_id),
        ):
            if value is not None:
                sql += f" AND {column} = ?"
                params.append(value)
        if before is not None:
            sql += " AND checkpoint_id < ?"
            params.append(before)
        sql += " ORDER BY checkpoint_id DESC, thread_id, ns"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(limit, 0))
        return [GraphCheckpoint(*r) for r in self._all(sql, params)]

    def graph_checkpoint_metadata(self) -> list[GraphMetadata]:
        """`CheckpointStore.graph_checkpoint_metadata`."""
        rows = self._all(
            "SELECT thread_id, ns, checkpoint_id, metadata_type, metadata"
            " FROM langgraph_checkpoints WHERE space = ?",
            (self._space,),
        )
        return [GraphMetadata(*r) for r in rows]

    def newest_graph_checkpoints(self, thread_id: str) -> dict[str, str]:
        """`CheckpointStore.newest_graph_checkpoints`."""
        rows = self._all(
            "SELECT ns, max(checkpoint_id) FROM langgraph_checkpoints"
            " WHERE space = ? AND thread_id = ? GROUP BY ns",
            (self._space, thread_id),
        )
        return {str(ns): str(newest) for ns, newest in rows}

    def graph_writes(self, thread_id: str, ns: str, checkpoint_id: str) -> list[GraphWrite]:
        """`CheckpointStore.graph_writes`."""
        rows = self._all(
            "SELECT thread_id, ns, checkpoint_id, task_id, idx, channel, value_type, value,"
            " task_path FROM langgraph_writes"
            " WHERE space = ? AND thread_id = ? AND ns = ? AND checkpoint_id = ?",
            (self._space, thread_id, ns, checkpoint_id),
        )
        return [GraphWrite(*r) for r in rows]

    def graph_blobs(
        self, thread_id: str, ns: str, versions: Sequence[tuple[str, str]]
    ) -> list[GraphBlob]:
        """`CheckpointStore.graph_blobs`: the pairs as one VALUES list."""
        if not versions:
            return []
        pairs = ", ".join("(?, ?)" for _ in versions)
        flat = [part for pair in versions for part in pair]
        rows = self._all(
            _BLOB + f" AND (channel, version) IN (VALUES {pairs})",
            (self._space, thread_id, ns, *flat),
        )
        return [GraphBlob(*r) for r in rows]

    def graph_blob_chain(
        self, thread_id: str, ns: str, channel: str, version: str
    ) -> list[GraphBlob]:
        """`CheckpointStore.graph_blob_chain`: one recursive statement down the bases."""
        key = (self._space, thread_id, ns, channel)
        rows = self._all(
            "WITH RECURSIVE chain(version, value_type, value, base_version, base_length,"
            " depth) AS (SELECT version, value_type, value, base_version, base_length, 0"
            " FROM langgraph_blobs WHERE space = ? AND thread_id = ? AND ns = ?"
            " AND channel = ? AND version = ?"
            " UNION ALL SELECT b.version, b.value_type, b.value, b.base_version,"
            " b.base_length, c.depth + 1 FROM chain c JOIN langgraph_blobs b"
            " ON b.space = ? AND b.thread_id = ? AND b.ns = ? AND b.channel = ?"
            " AND b.version = c.base_version)"
            " SELECT version, value_type, value, base_version, base_length FROM chain"
            " ORDER BY depth DESC",
            (*key, version, *key),
        )
        return [GraphBlob(thread_id, ns, channel, *r) for r in rows]

    def graph_blob_bases(self, thread_id: str, ns: str) -> dict[tuple[str, str], str | None]:
        """`CheckpointStore.graph_blob_bases`."""
        rows = self._all(
            "SELECT channel, version, base_version FROM langgraph_blobs"
            " WHERE space = ? AND thread_id = ? AND ns = ?",
            (self._space, thread_id, ns),
        )
        return {(channel, version): base for channel, version, base in rows}

    def delete_graph_checkpoints(
        self, thread_id: str, ns: str, checkpoint_id: str, *, others: bool = False
    ) -> None:
        """`CheckpointStore.delete_graph_checkpoints`."""
        which = "checkpoint_id <> ?" if others else "checkpoint_id = ?"
        with self._store.transaction(write=True):
            for table in ("langgraph_writes", "langgraph_checkpoints"):
                self._run(
                    f"DELETE FROM {table} WHERE space = ? AND thread_id = ? AND ns = ? AND {which}",
                    (self._space, thread_id, ns, checkpoint_id),
                )

    def delete_graph_blobs(self, thread_id: str, ns: str, keys: Sequence[tuple[str, str]]) -> None:
        """`CheckpointStore.delete_graph_blobs`."""
        if keys:
            self._run_many(
                "DELETE FROM langgraph_blobs WHERE space = ? AND thread_id = ? AND ns = ?"
                " AND channel = ? AND version = ?",
                [(self._space, thread_id, ns, c, v) for c, v in keys],
            )

    def delete_graph_thread(self, thread_id: str) -> None:
        """`CheckpointStore.delete_graph_thread`."""
        with self._store.transaction(write=True):
            for table in ("langgraph_writes", "langgraph_blobs", "langgraph_checkpoints"):
                self._run(
                    f"DELETE FROM {table} WHERE space = ? AND thread_id = ?",
                    (self._space, thread_id),
                )

    def copy_graph_thread(self, source: str, target: str) -> None:
        """`CheckpointStore.copy_graph_thread`."""
        with self._store.transaction(write=True):
            for table, columns in COPIED:
                self._run(
                    f"INSERT INTO {table} (space, thread_id, {columns})"
                    f" SELECT space, ?, {columns} FROM {table}"
                    " WHERE space = ? AND thread_id = ? ON CONFLICT DO NOTHING",
                    (target, self._space, source),
                )
