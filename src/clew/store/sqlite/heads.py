"""Where each space's journal ends, and which hash it has at a position: the reads behind
checkpoints (checkpointfile.py), in SQLite's SQL (a part SQLiteStore holds, its `_heads`).

A position is an event's place in its space's journal in seq order, counted from 1; the
journal stores no such number, so a position is found by stepping along the space's index
of (space, seq): `LIMIT 1 OFFSET n` walks index entries only and reads one row. Positions
are taken in ascending order, each step starting after the event found at the one before,
so checking many checkpoints walks the journal's index once.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from clew.models import ChainHead
from clew.store.portable.journal import SPACES
from clew.store.rows import RowReader


class HeadReads(RowReader):
    """`chain_heads` and `chain_hashes` for SQLiteStore."""

    def chain_heads(
        self, since: Mapping[str, ChainHead] | None = None, *, all_spaces: bool = False
    ) -> dict[str, ChainHead]:
        """`Journal.chain_heads`: one read transaction, so every head is of one moment."""
        with self.transaction():
            spaces = [r[0] for r in self._rows(SPACES)] if all_spaces else []
            if self.space not in spaces:
                spaces.append(self.space)
            return {space: self._space_head(space, (since or {}).get(space)) for space in spaces}

    def _space_head(self, space: str, known: ChainHead | None) -> ChainHead:
        newest = self._rows(
            "SELECT seq, id, hash FROM events WHERE space = $1 ORDER BY seq DESC LIMIT 1", (space,)
        )
        if not newest:
            return ChainHead(0, None, None)
        seq, event, head = newest[0][0], newest[0][1], newest[0][2]
        after, base = 0, 0
        if known is not None and known.last is not None:
            held = self._rows(
                "SELECT seq FROM events WHERE id = $1 AND space = $2 AND hash = $3",
                (known.last, space, known.head),
            )
            if held:
                after, base = int(held[0][0]), known.events
        counted = self._rows(
            "SELECT count(*) FROM events WHERE space = $1 AND seq > $2 AND seq <= $3",
            (space, after, seq),
        )
        return ChainHead(base + int(counted[0][0]), str(event), head)

    def chain_hashes(self, positions: Mapping[str, Collection[int]]) -> dict[tuple[str, int], str]:
        """`Journal.chain_hashes`: each space's positions in ascending order, each found by
        stepping on from the one before along the (space, seq) index."""
        found: dict[tuple[str, int], str] = {}
        with self.transaction():
            for space, wanted in positions.items():
                seq, at = 0, 0
                for position in sorted({p for p in wanted if p >= 1}):
                    row = self._rows(
                        "SELECT seq, hash FROM events WHERE space = $1 AND seq > $2"
                        " ORDER BY seq LIMIT 1 OFFSET $3",
                        (space, seq, position - at - 1),
                    )
                    if not row:
                        break  # the journal ends before this position, so before the rest
                    seq, at = int(row[0][0]), position
                    found[(space, position)] = row[0][1] or ""  # no hash: a broken chain
        return found
