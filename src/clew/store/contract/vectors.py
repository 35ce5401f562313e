"""The vector index: its rows (derived, outside the journal), its writes and its search. Part of
the backend contract (store/contract/__init__.py states the rules every method keeps)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from clew.models import (
    NewVector,
    PendingText,
    StoredVector,
)


class VectorReads(Protocol):
    """The vector index: which records need a vector of a model, and the vectors stored.

    Kinds are those of `models.VECTOR_KINDS`. A record's text as embedded is made by the
    store (the same on every backend): an entry's summary, detail, tags and resolution; a
    message's or a turn's content; a command's summary or command line with the tails of
    its stderr and stdout; a trace decision's action, outcome and error."""

    def pending_vectors(
        self, kind: str, model: str, *, after: str = "", limit: int
    ) -> list[PendingText]:
        """The first `limit` records of `kind` (by id, ids above `after`: a page's last id)
        that have no vector of `model`, or whose record changed (its updated_at) since the
        vector was made; each with its text and the content hash of the vector it has."""
        ...

    def vector_counts(self, model: str) -> dict[str, tuple[int, int]]:
        """For every kind: (records with a current vector of `model`, all its records)."""
        ...

    def newest_vector(self, model: str) -> int:
        """The highest seq among the space's vectors of `model`, or 0: a cache that has
        loaded up to it has every row (rows are only ever replaced by newer ones, except
        by `drop_vectors`)."""
        ...

    def journal_head(self) -> int:
        """The highest event seq of the space, or 0 (the journal's end, cheap)."""
        ...

    def vector_count(self, model: str, *, after: int = 0) -> int:
        """How many vectors of `model` the space holds with a seq above `after`."""
        ...

    def vectors_after(
        self, model: str, after: int, *, limit: int | None = None
    ) -> list[StoredVector]:
        """Vectors of `model` with a seq above `after`, in seq order. A seq is never reused
        and grows in commit order within a space; a record embedded again gets a new one."""
        ...


class VectorWrites(Protocol):
    """Writes of the vector index, inside `transaction(write=True)` (RuntimeError outside).

    Not journaled, unlike every other write: vectors are derived from records the journal
    already holds, like the full-text index, and are rebuilt from them at any time (a new
    model, an import, `clew index rebuild`). Journaling them would put megabytes of floats
    into every export and push and make replay depend on a model. So no event is written,
    `verify` does not compare them, and export, import and push do not carry them."""

    def touch_vectors(self, model: str, kind: str, marks: Sequence[tuple[str, str]]) -> None:
        """Mark these vectors of `model` current at a new source_at ((ref_id, source_at)
        pairs) when the record changed but its text did not."""
        ...

    def drop_vectors(self, model: str) -> int:
        """Delete every vector of `model` in the space; return how many there were."""
        ...


class VectorIndex(Protocol):
    """The vector index proper: vectors written, and searched in the database where the
    backend can (pgvector), else loaded and searched in process by the facade."""

    def vector_search_native(self) -> bool:
        """Whether the store searches its vectors itself (`nearest_vectors`): a PostgreSQL
        store whose server has pgvector. Otherwise `Memory.nearest` searches in process."""
        ...

    def nearest_vectors(
        self,
        model: str,
        query: Sequence[float],
        *,
        kinds: Sequence[str],
        task_id: str | None = None,
        step_id: str | None = None,
        session_ids: Sequence[str] | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int,
    ) -> list[tuple[str, str, float]]:
        """The `limit` vectors of `model` nearest to `query` (a unit vector) by cosine, as
        (kind, ref_id, cosine), best first; filters applied before the best are taken
        (`since` inclusive, `until` exclusive, store timestamps); only cosines above 0.
        Only where `vector_search_native()` is true (NotImplementedError elsewhere)."""
        ...

    def put_vectors(self, model: str, vectors: Sequence[NewVector]) -> None:
        """Store vectors of `model`, each replacing its record's previous one (the new row
        gets a new seq)."""
        ...
