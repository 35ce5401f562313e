"""Where each space's journal ends, and which hash it has at a position: the reads behind
checkpoints (checkpointfile.py), in PostgreSQL's SQL (a part PostgresStore holds, its `_heads`).

A position is an event's place in its space's journal in seq order, counted from 1. One
statement numbers a space's events along its primary key (space, seq) with `row_number()`,
up to the furthest position asked for, and keeps those asked for (`= ANY` of an array): one
pass and one round trip however many checkpoints are checked. Other spaces are read in the
transaction that `verify --all-spaces` uses, which the row-level security policies allow for
reading only.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from contextlib import AbstractContextManager
from typing import Protocol

from clew.models import ChainHead
from clew.store.portable.journal import SPACES
from clew.store.rows import RowReader, StoreHost


class AllSpacesHost(StoreHost, Protocol):
    """The store, with its read of every space (verify --all-spaces)."""

    def _reading_all(self) -> AbstractContextManager[None]: ...


class PgHeadReads(RowReader):
    """`chain_heads` and `chain_hashes` for PostgresStore."""

    def __init__(self, store: AllSpacesHost) -> None:
        super().__init__(store)
        self._reading_all = store._reading_all

    def chain_heads(
        self, since: Mapping[str, ChainHead] | None = None, *, all_spaces: bool = False
    ) -> dict[str, ChainHead]:
        """`Journal.chain_heads`: one transaction (REPEATABLE READ would add nothing: each
        head is one statement, and a space's events commit in seq order under its lock)."""
        with self._reading_all() if all_spaces else self.transaction():
            spaces = [r[0] for r in self._rows(SPACES)] if all_spaces else []
            if self.space not in spaces:
                spaces.append(self.space)
            return {space: self._space_head(space, (since or {}).get(space)) for space in spaces}

    def _space_head(self, space: str, known: ChainHead | None) -> ChainHead:
        # The newest event and the count up to it in one statement: one snapshot, one trip.
        after, base = -1, 0
        if known is not None and known.last is not None:
            held = self._rows(
                "SELECT seq FROM events WHERE space = $1 AND id = $2 AND hash = $3",
                (space, known.last, known.head),
            )
            if held:
                after, base = int(held[0][0]), known.events
        row = self._rows(
            "SELECT e.id, e.hash, (SELECT count(*) FROM events c WHERE c.space = e.space"
            " AND c.seq > $1 AND c.seq <= e.seq) FROM events e WHERE e.space = $2"
            " ORDER BY e.seq DESC LIMIT 1",
            (after, space),
        )
        if not row:
            return ChainHead(0, None, None)
        return ChainHead(base + int(row[0][2]), str(row[0][0]), row[0][1])

    def chain_hashes(self, positions: Mapping[str, Collection[int]]) -> dict[tuple[str, int], str]:
        """`Journal.chain_hashes`: one numbered pass over each space's journal."""
        found: dict[tuple[str, int], str] = {}
        others = any(space != self.space for space in positions)
        with self._reading_all() if others else self.transaction():
            for space, wanted in positions.items():
                numbers = sorted({p for p in wanted if p >= 1})
                if not numbers:
                    continue
                rows = self._rows(
                    "SELECT n, hash FROM (SELECT row_number() OVER (ORDER BY seq) AS n, hash"
                    " FROM events WHERE space = $1 ORDER BY seq LIMIT $2) numbered"
                    " WHERE n = ANY($3)",
                    (space, numbers[-1], numbers),
                )
                for n, head in rows:
                    found[(space, int(n))] = head or ""  # no hash: a broken chain
        return found
