"""LangGraph's checkpoints kept by a store: the values and the protocol of
`Journal.graph_checkpoints`. Part of the backend contract (store/contract/__init__.py states
the rules every method keeps)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import NamedTuple, Protocol


class GraphCheckpoint(NamedTuple):
    """One LangGraph checkpoint as stored: the checkpoint without its channel values and its
    metadata, each serialized by the saver (a type name and bytes)."""

    thread_id: str
    ns: str  # the checkpoint namespace ("" for the root graph)
    checkpoint_id: str  # sorts in the order checkpoints were made
    parent_id: str | None
    checkpoint_type: str
    checkpoint: bytes
    metadata_type: str
    metadata: bytes


class GraphBlob(NamedTuple):
    """One channel value of a LangGraph thread at one version: the value serialized, or
    ("empty", None) for a channel with no value there; a list that grew by appending is
    stored as what was appended to `base_version`'s first `base_length` items."""

    thread_id: str
    ns: str
    channel: str
    version: str
    value_type: str
    value: bytes | None
    base_version: str | None = None
    base_length: int | None = None


class GraphWrite(NamedTuple):
    """One pending write of a task for a checkpoint (`idx` its place among the task's)."""

    thread_id: str
    ns: str
    checkpoint_id: str
    task_id: str
    idx: int
    channel: str
    value_type: str
    value: bytes | None
    task_path: str = ""


class GraphMetadata(NamedTuple):
    """A checkpoint's key and serialized metadata, without the checkpoint itself."""

    thread_id: str
    ns: str
    checkpoint_id: str
    metadata_type: str
    metadata: bytes


class CheckpointStore(Protocol):
    """LangGraph's checkpoints (integrations/langgraph_saver.py's `ClewSaver`): framework
    state kept beside the journal, not in it, so no event is written, `verify` does not
    rebuild them, and export and push do not carry them (docs/architecture.md). Values are
    bytes the saver serialized; the store never decodes them.

    Scoped by the store's space like every other row. Each method is one transaction of its
    own, or joins the one open (`transaction`); the saver opens one around a read of several
    calls (one snapshot) and around a change of several (all or nothing)."""

    def transaction(self, *, write: bool = False) -> AbstractContextManager[None]:
        """`Journal.transaction`: the calls inside run in one transaction."""
        ...

    def put_graph_checkpoint(self, checkpoint: GraphCheckpoint, blobs: Sequence[GraphBlob]) -> None:
        """Store a checkpoint (replacing one of the same thread, namespace and id) and the
        channel values new at it, in one write transaction; a value already stored for its
        (thread, namespace, channel, version) stays as it is (a version names one value)."""
        ...

    def put_graph_writes(self, writes: Sequence[GraphWrite], *, replace: bool) -> None:
        """Store pending writes in one write transaction: one already stored at its (thread,
        namespace, checkpoint, task, idx) stays, unless `replace` (LangGraph's special
        writes: an error or an interrupt replaces the one before it)."""
        ...

    def find_graph_checkpoint(
        self, thread_id: str, ns: str, checkpoint_id: str | None = None
    ) -> GraphCheckpoint | None:
        """The checkpoint of a thread's namespace with this id, or its newest (the highest
        id) when no id is given; None if none."""
        ...

    def list_graph_checkpoints(
        self,
        *,
        thread_id: str | None = None,
        ns: str | None = None,
        checkpoint_id: str | None = None,
        before: str | None = None,
        limit: int | None = None,
    ) -> list[GraphCheckpoint]:
        """Checkpoints of the space, by id descending (ties by thread, then namespace);
        of one thread, one namespace (None: any), one id, with an id below `before`."""
        ...

    def graph_checkpoint_metadata(self) -> list[GraphMetadata]:
        """Every checkpoint of the space with its metadata, in no set order (what deleting
        a run's checkpoints reads: the checkpoints themselves may be large)."""
        ...

    def newest_graph_checkpoints(self, thread_id: str) -> dict[str, str]:
        """The id of the newest checkpoint of each namespace of a thread, by namespace."""
        ...

    def graph_writes(self, thread_id: str, ns: str, checkpoint_id: str) -> list[GraphWrite]:
        """The pending writes of a checkpoint, in no set order (the saver orders them as
        LangGraph does)."""
        ...

    def graph_blobs(
        self, thread_id: str, ns: str, versions: Sequence[tuple[str, str]]
    ) -> list[GraphBlob]:
        """The stored values of these (channel, version) pairs of a thread's namespace, in
        no set order; a pair not stored adds nothing."""
        ...

    def graph_blob_chain(
        self, thread_id: str, ns: str, channel: str, version: str
    ) -> list[GraphBlob]:
        """The value of a channel at `version` and every value it was appended to, back to
        the first one stored in full: oldest first, so the first has no `base_length` unless
        a base is missing (then the chain stops at the last value still stored)."""
        ...

    def graph_blob_bases(self, thread_id: str, ns: str) -> dict[tuple[str, str], str | None]:
        """Every stored (channel, version) of a thread's namespace, with the version its
        value was appended to (None: stored in full)."""
        ...

    def delete_graph_checkpoints(
        self, thread_id: str, ns: str, checkpoint_id: str, *, others: bool = False
    ) -> None:
        """Delete a checkpoint of a thread's namespace (with `others`, every checkpoint of it
        but this one) and its pending writes, in one write transaction; the channel values
        stay (`delete_graph_blobs` takes those no checkpoint needs)."""
        ...

    def delete_graph_blobs(self, thread_id: str, ns: str, keys: Sequence[tuple[str, str]]) -> None:
        """Delete these (channel, version) values of a thread's namespace, in one write
        transaction; a key not stored is no error."""
        ...

    def delete_graph_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints, values and pending writes, in one write transaction."""
        ...

    def copy_graph_thread(self, source: str, target: str) -> None:
        """Copy a thread's checkpoints, values and pending writes to another thread id, in one
        write transaction; rows the target already has at the same keys stay as they are."""
        ...
