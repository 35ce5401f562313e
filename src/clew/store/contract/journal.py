"""The journal core: transactions, appending events, resolving ids, the events themselves, verify.
Part of the backend contract (store/contract/__init__.py states the rules every method keeps)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from clew.core.chain import Link
from clew.models import (
    ChainHead,
    Event,
    Redaction,
    VerifyReport,
)
from clew.store.contract.graph import CheckpointStore


class Journal(Protocol):
    """The core: the append-only journal of events and the transaction around writes."""

    path: str  # where the store is (a file path, or a URL without its password)
    space: str  # the namespace every read and write is scoped to
    read_only: bool  # opened for reading only: every write raises StoreReadOnlyError

    @property
    def graph_checkpoints(self) -> CheckpointStore:
        """LangGraph's checkpoints in this store, beside the journal (a composed object,
        made on first use: a store that never holds any loads none of its code)."""
        ...

    def transaction(self, *, write: bool = False) -> AbstractContextManager[None]:
        """A block run in one transaction; nests (an inner block joins the outer one). A
        write transaction takes the space's write lock up front, so a check made inside it
        still holds when the block writes; a write cannot start inside a read block
        (RuntimeError). Raises StoreBusyError when the lock is not had in the busy timeout,
        StoreReadOnlyError for a write on a read-only store. An exception rolls back."""
        ...

    def savepoint(self) -> AbstractContextManager[None]:
        """A block inside `transaction(write=True)` (RuntimeError outside one) that an
        exception undoes alone: what the block wrote is rolled back, with what the store
        keeps in memory of it (the journal's head, the projection's bookkeeping), and the
        exception goes on; the enclosing transaction stays open and commits what was written
        before and after the block. Nests (an inner block is a savepoint of its own)."""
        ...

    @property
    def in_transaction(self) -> bool:
        """Whether a transaction is open on this store now (so a write would have to join
        it): work that may be put off, like embedding, is then left for later."""
        ...

    def append(
        self,
        *,
        type: str,
        task_id: str | None,
        correlation_id: str,
        data: dict[str, Any],
        created_at: str,
    ) -> Event:
        """Journal one event (hash-chained to the space's previous one) and apply it to the
        projections, in the current write transaction (RuntimeError outside one). Returns
        the event with its `seq`: increasing in commit order across the whole store. A
        `journal.forgotten` event is applied as it is journaled (appended or adopted): the
        events it names are rewritten with their tombstones, and their rows, search
        documents and vectors follow (store/forgetting.py); ValueError, and nothing written,
        when it cannot be applied exactly."""
        ...

    def adopt(self, event: Event, *, forgets: bool = True) -> Event:
        """Journal an event recorded elsewhere and apply it to the projections, as `append`
        does (inside `transaction(write=True)`): its id, task id, correlation id, type, data,
        created_at and tombstone (`forgotten`) are kept exactly; its seq is this store's, its
        space this store's, and its hash is chained to this space's newest event (over the
        tombstone's digest when it has one). Returns the event as stored. A
        `journal.forgotten` event that would rewrite an event this space holds with its
        content raises ValueError unless `forgets` (the adopter may forget)."""
        ...

    def bulk_turns(self) -> AbstractContextManager[None]:
        """A block of many turn writes inside `transaction(write=True)` (RuntimeError
        outside one), for a bulk import: the backend may index the block's turns for search
        at its end rather than one by one. Whatever it does, the rows and the search index
        after the block are those the writes one by one would make. Nests (an inner block
        joins the outer one)."""
        ...

    def event_ids(self, ids: Sequence[str]) -> set[str]:
        """Return which of these event ids this store's space already holds (any number of
        ids; an id of another space is not held)."""
        ...

    def close(self) -> None:
        """Release the connection; the store is not used after."""
        ...

    def resolve(self, kind: str, ident: str, hint: str = "") -> str:
        """The full id of the `kind` record (task, step, action, entry, message, session,
        ...) whose id is `ident` or starts with it. NotFoundError (with `hint`, what to run
        to find one) when none does, AmbiguousIdError naming the candidates when several do."""
        ...

    def list_events(
        self,
        *,
        task_id: str | None = None,
        after: int = 0,
        limit: int | None = None,
        types: tuple[str, ...] = (),
        as_stored: bool = False,
        newest: bool = False,
    ) -> list[Event]:
        """Events with seq above `after`, in seq (commit) order; of one task, of some types;
        with `newest`, the newest `limit` of them (a tail read, from the index's end), still
        oldest first. Their data is upgraded to the current shape unless `as_stored` (the
        data as journalled, which is what its hash covers: export and push use it)."""
        ...

    def stored_links(self, *, after: int = 0, limit: int = 1000) -> list[Link]:
        """Return up to `limit` of this space's events after seq `after`, in commit order,
        exactly as stored: their data as the JSON text the hash covers, never decoded (what
        moving a journal reads, a page at a time)."""
        ...

    def record_links(
        self, kind: str, record_id: str, *, after: int = 0, limit: int = 1000
    ) -> list[Link]:
        """Up to `limit` events after seq `after`, in seq order and exactly as stored, among
        which are all the events that wrote the record of `kind` (message, action, entry,
        turn) with id `record_id`, and for a turn those of the later turns of its session
        (their state change may carry what it said): a superset, whose data the caller reads
        (what a forget of the record reads, a page at a time). ValueError for another kind."""
        ...

    def purge(self) -> str | None:
        """After a forget has committed, clear what the store's files still hold of the data
        as it was, where the backend can (SQLite empties its write-ahead log); None when
        nothing is left, else one line saying what is and until when."""
        ...

    def count_events(self) -> int:
        """How many events the space's journal holds."""
        ...

    def list_redactions(
        self,
        *,
        task_id: str | None = None,
        session_id: str | None = None,
        kind: str | None = None,
        limit: int | None = None,
    ) -> list[Redaction]:
        """What redaction took out of the space's events (the `redactions` projection), the
        newest first, of one task, session or kind when given."""
        ...

    def raw_events(self, task_ids: Sequence[str]) -> list[Any]:
        """The journal rows of these tasks as stored (data as its text, so an event that
        no longer parses is still exported), in seq order; unknown ids add nothing."""
        ...

    def verify(self, *, all_spaces: bool = False) -> VerifyReport:
        """Walk the space's hash chain, replay its journal into a scratch store and compare
        every projection row and the search indexes; `all_spaces` checks every space."""
        ...

    def chain_heads(
        self, since: Mapping[str, ChainHead] | None = None, *, all_spaces: bool = False
    ) -> dict[str, ChainHead]:
        """The end of this space's journal (with `all_spaces`, of every space that has an
        event, this one always included), read in one snapshot: how many events, and the
        newest one's id and hash (ChainHead(0, None, None) for a space with none). A head
        in `since` that the space's journal still holds (the same event, the same hash)
        is counted on from, so only the events after it are counted."""
        ...

    def chain_hashes(self, positions: Mapping[str, Collection[int]]) -> dict[tuple[str, int], str]:
        """The hash of the event at each 1-based position (in seq order) of each space's
        journal, keyed by (space, position), for the positions the journal reaches. Spaces
        other than this one are read as `verify(all_spaces=True)` reads them."""
        ...
