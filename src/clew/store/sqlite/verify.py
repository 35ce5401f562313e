"""Verification of the SQLite store (a part SQLiteStore holds, its `_verification`): walk each
space's hash chain, replay the journal into a scratch database, compare every projection row,
and check the search indexes (on a copy when the store is read-only, since FTS5's check is a
write)."""

from __future__ import annotations

import itertools
import os
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from clew.core import chain
from clew.models import Difference, VerifyReport
from clew.store import projection
from clew.store.migrations import PROJECTION_TABLES
from clew.store.portable.findings import (
    MAX_DIFFERENCES,
    SELF_NUMBERED,
    Unreplayable,
    chain_finding,
    diff_rows,
    event_finding,
    replayable,
    see_tombstone,
    with_tombstones,
)
from clew.store.portable.journal import EVENT_COLUMNS
from clew.store.projection import conversations as projection_conversations
from clew.store.sqlite.connection import SQLiteConnection

if TYPE_CHECKING:
    from clew.store.forgetting import TombstoneCheck
    from clew.store.sqlite.store import SQLiteStore

# Indexes that only reads use: no projection looks turns up by time or by tool.
_SCRATCH_UNUSED = ("turns_time", "turns_tool")
# Projection tables whose rows are stored in another table than the one read (a view).
STORED_AS = {"turns": "turn_rows"}


class Verification:
    """`verify` and `fts_check` of the store that holds it, read through its own SQLite
    connection, lock and guard (and its text index, whose check this wraps)."""

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def fts_check(self, index: str = "entries_fts") -> str | None:
        """Run FTS5's integrity check of a search index; None when it is sound."""
        if not self._store.read_only:
            return self._store._text.fts_check(index)
        import tempfile

        # FTS5 runs its check as a write, which a read-only store refuses: so a read-only
        # store is checked on a copy, rather than reported as damaged.
        with tempfile.TemporaryDirectory(prefix="clew-verify-") as scratch_dir:
            copy = sqlite3.connect(os.path.join(scratch_dir, "copy.db"), isolation_level=None)
            try:
                with self._store._lock:
                    self._store._guard(lambda: self._store._conn.backup(copy))
                copy.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('integrity-check', 1)")
            except sqlite3.Error as exc:
                return f"store error: {exc}"
            finally:
                copy.close()
        return None

    def verify(self, *, all_spaces: bool = False) -> VerifyReport:
        """Check this space's journal chain, replay its journal into a scratch database and
        compare every projection row of the space (of the whole file with `all_spaces`); a
        store SQLite cannot read is one StoreError saying why (damaged, busy)."""
        report: VerifyReport = self._store._guard(lambda: self._verify(all_spaces))
        return report

    def _verify(self, all_spaces: bool) -> VerifyReport:
        import tempfile  # only verify needs it; keep it off the CLI's start-up path

        from clew.core import meter
        from clew.store.sqlite import bulk as sqlite_bulk
        from clew.store.sqlite.file import connect, migrate

        scope = None if all_spaces else self._store.space
        with tempfile.TemporaryDirectory(prefix="clew-verify-") as scratch_dir:
            scratch = connect(os.path.join(scratch_dir, "rebuilt.db"))
            replay = SQLiteConnection(scratch)  # as the projections take it
            try:
                scratch.execute("PRAGMA synchronous = OFF")
                migrate(scratch)
                # Nothing reads the scratch's full-text indexes (the rows are compared; the
                # store's own indexes are checked below), and keeping them would cost the
                # replay more than all the rows do: their statements leave the triggers.
                sqlite_bulk.strip(
                    scratch, ("turns_fts", "entries_fts", "outline_fts"), inserts_only=False
                )
                # A throwaway file filled from empty in one transaction: a rollback journal
                # kept in memory holds next to nothing (new pages are not journaled), where
                # WAL would write every page twice (the log, then the checkpoint).
                scratch.execute("PRAGMA journal_mode = MEMORY")
                for index in _SCRATCH_UNUSED:
                    scratch.execute(f"DROP INDEX IF EXISTS {index}")
                with self._store.transaction():
                    try:
                        count, findings, heads, kept = self._replay(replay, scope, careful=False)
                    except Unreplayable:
                        # An event failed half-applied: replay again, undoing each failure.
                        count, findings, heads, kept = self._replay(replay, scope, careful=True)
                    report = with_tombstones(self._compare(scratch, count, scope, findings), kept)
            finally:
                projection_conversations.drop(replay)  # after an error: no state left behind
                scratch.close()
        report = report._replace(heads=heads)
        meter.report("checking the search indexes", 0, None)
        # The search indexes against the rows they index.
        for index, problem in (
            ("entries_fts", self.fts_check()),
            ("records_fts", self._store.records_check(scope)),
            ("outline_fts", self._store.outline_check(scope)),
        ):
            if problem is not None:
                found = Difference(index, "*", "*", problem, "a sound index")
                report = report._replace(differences=(*report.differences, found))
        return report

    def _replay(
        self, scratch: SQLiteConnection, space: str | None, *, careful: bool
    ) -> tuple[int, list[Difference], dict[str, str], TombstoneCheck]:
        """Walk the journal once (streamed, in seq order): check each space's hash chain up
        to its first break and apply each event to the scratch database. An event that
        cannot be read is a finding, and the replay goes on without it. So is one that
        cannot be applied: `careful` wraps each event in a savepoint to undo what it half
        did; without it (a third faster), such an event raises Unreplayable instead.
        Return the events seen, the findings, each space's newest hash and the tombstones
        seen (forgotten events, checked against the forgets that made them)."""
        where, params = ("WHERE space = ?", (space,)) if space is not None else ("", ())
        rows = self._store._conn.execute(
            f"SELECT {EVENT_COLUMNS} FROM events {where} ORDER BY seq", params
        )
        from clew.store.forgetting import TombstoneCheck  # verify's alone: off the hook path

        findings: list[Difference] = []
        heads: dict[str, str] = {}
        kept = TombstoneCheck(whole=True)
        from clew.core import meter

        count = 0
        total = self._store._conn.execute(
            f"SELECT count(*) FROM events {where}", params
        ).fetchone()[0]
        scratch.execute("BEGIN")
        # The sessions' rows are written once at the end, as a bulk import writes them: a
        # session's count, tokens and state (a few KB of JSON) were written on every turn.
        projection_conversations.drop(scratch)  # nothing from a replay given up on
        projection_conversations.put_off(scratch)
        for link, expected in chain.walk(chain.Link(*row) for row in rows):
            count += 1
            if count % 1000 == 0:
                meter.report("verifying", count, total)
            if expected is not None:
                findings.append(chain_finding(link, expected))
            heads[link.space] = link.hash or ""
            event, why = replayable(link)
            if event is None:
                findings.append(event_finding(link, why))
                continue
            see_tombstone(kept, link, event, findings)
            if careful:
                scratch.execute("SAVEPOINT event")
            try:
                projection.apply(scratch, event)
            except (ValueError, KeyError, TypeError, sqlite3.Error) as exc:
                if not careful:
                    scratch.execute("ROLLBACK")
                    projection_conversations.drop(scratch)
                    raise Unreplayable from exc
                scratch.execute("ROLLBACK TO event")
                findings.append(event_finding(link, f"it cannot be replayed ({exc!r})"))
            if careful:
                scratch.execute("RELEASE event")
        projection_conversations.settle(scratch, end=True)
        scratch.execute("COMMIT")
        return count, findings, heads, kept

    def _compare(
        self,
        scratch: sqlite3.Connection,
        events: int,
        space: str | None,
        findings: list[Difference],
    ) -> VerifyReport:
        from clew.core import meter

        differences = findings[:MAX_DIFFERENCES]
        truncated = len(findings) > MAX_DIFFERENCES
        counts: dict[str, int] = {}
        where, params = ("WHERE space = ?", (space,)) if space is not None else ("", ())
        for table in PROJECTION_TABLES:
            # The rows as stored (turns is a view that reads its events: migration 15).
            source = STORED_AS.get(table, table)
            sql = f"SELECT * FROM {source} {where} ORDER BY id"
            columns = [c[1] for c in self._store._conn.execute(f"PRAGMA table_info({source})")]
            stored, rebuilt = _tuples(self._store._conn, sql, params), _tuples(scratch, sql, params)
            counts[table] = 0
            meter.report("comparing tables", len(counts) - 1, len(PROJECTION_TABLES))
            skip = table in SELF_NUMBERED
            found = diff_rows(table, columns, stored, rebuilt, counts, skip=skip)
            if table in SELF_NUMBERED:
                found = itertools.chain(found, self._diff_order(scratch, table, where, params))
            for difference in found:
                if len(differences) >= MAX_DIFFERENCES:
                    truncated = True
                    break
                differences.append(difference)
        return VerifyReport(events, counts, tuple(differences), truncated)

    def _diff_order(
        self, scratch: sqlite3.Connection, table: str, where: str, params: tuple[str, ...]
    ) -> Iterator[Difference]:
        """A self-numbered table's rows in the same order in both (their numbers may differ:
        the file numbers them across its spaces, a one-space replay from 1)."""
        sql = f"SELECT id FROM {STORED_AS.get(table, table)} {where} ORDER BY seq"
        stored = self._store._conn.execute(sql, params)
        rebuilt = scratch.execute(sql, params)
        for a, b in itertools.zip_longest(stored, rebuilt):
            if a != b:  # a missing row is reported already; this is the first out of order
                if a is not None and b is not None:
                    yield Difference(table, a[0], "seq", "out of order", f"before {b[0]}")
                return


def _tuples(
    conn: sqlite3.Connection, sql: str, params: tuple[str, ...]
) -> Iterator[tuple[Any, ...]]:
    """The rows of `sql` as plain tuples, fetched a page at a time (sqlite3.Row objects
    and a call per row cost more than comparing them)."""
    cursor = conn.cursor()
    cursor.row_factory = None
    cursor.execute(sql, params)
    while page := cursor.fetchmany(_PAGE):
        yield from page


_PAGE = 1000
