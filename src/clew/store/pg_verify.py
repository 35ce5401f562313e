"""`verify` on PostgreSQL: walk each space's hash chain, replay the journal into temporary
tables made by the same migrations (on a connection of its own, so they vanish with it) and
compare every projection row, as the SQLite store does with a scratch file.

The temporary tables need no privilege beyond TEMP (granted to every role by default), and
carry no row-level security: the replay writes only what the journal of the chosen space (or
of every space) says.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from clew.models import Difference, Event, VerifyReport
from clew.store import chain, codec, pg_adapter, pg_migrations, projection
from clew.store.migrations import PROJECTION_TABLES
from clew.store.sqlite_verify import (
    EVENT_COLUMNS,
    MAX_DIFFERENCES,
    _chain_finding,
    _diff_rows,
    _event_finding,
)

if TYPE_CHECKING:
    from clew.store.postgres import PostgresStore

# Columns a row gets from a counter of the database rather than from its event: they are
# compared by the order they give (the rows' ids), not by value.
ASSIGNED = {"entries": frozenset({"seq"}), "turns": frozenset({"seq"})}
_SCRATCH_SKIPS = re.compile(r"\s*(ALTER TABLE \w+ (ENABLE|FORCE) ROW LEVEL|CREATE POLICY)")


def scratch_schema(raw: Any) -> None:
    """Make this session's temporary copies of every clew table (no policies)."""
    for migration in pg_migrations.MIGRATIONS:
        for step in migration.statements:
            if not isinstance(step, str) or _SCRATCH_SKIPS.match(step):
                continue
            from clew.store.postgres import _collated

            sql = _collated(step).replace("CREATE TABLE ", "CREATE TEMP TABLE ", 1)
            raw.execute(sql.encode())


def verify(store: PostgresStore, *, all_spaces: bool = False) -> VerifyReport:
    """Check the chain, replay the journal into a scratch schema and compare every row."""
    psycopg = store._psycopg
    scope = None if all_spaces else store.space
    scratch_raw = psycopg.connect(store.url, autocommit=True)
    try:
        scratch_raw.execute("BEGIN")
        scratch_schema(scratch_raw)
        scratch_raw.execute("COMMIT")
        scratch = pg_adapter.Connection(scratch_raw)
        with store._reading_all() if all_spaces else store.transaction():
            conn = store._conn
            events = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events"
                + ("" if scope is None else " WHERE space = ?")
                + " ORDER BY seq",
                () if scope is None else (scope,),
            ).fetchall()
            try:
                count, findings, heads = _replay(scratch, events, careful=False)
            except _Unreplayable:
                count, findings, heads = _replay(scratch, events, careful=True)
            spaces = (
                [scope]
                if scope is not None
                else sorted({r[2] for r in events})  # every space that has a journal
            )
            report = _compare(conn, scratch, count, spaces, findings)
            # The search documents against the rows they index (pg_search), as on SQLite.
            problem = store.records_check(scope)
    finally:
        scratch_raw.close()
    if problem is not None:
        found = Difference("record_docs", "*", "*", problem, "a sound index")
        report = report._replace(differences=(*report.differences, found))
    return report._replace(heads=heads)


class _Unreplayable(Exception):
    """An event could not be applied in a replay without savepoints."""


def _replay(
    scratch: pg_adapter.Connection, rows: list[Any], *, careful: bool
) -> tuple[int, list[Difference], dict[str, str]]:
    findings: list[Difference] = []
    heads: dict[str, str] = {}
    count = 0
    if careful:
        for table in reversed(PROJECTION_TABLES):
            scratch.execute(f"DELETE FROM {table}")
    scratch.execute("BEGIN")
    for link, expected in chain.walk(chain.Link(*row) for row in rows):
        count += 1
        if expected is not None:
            findings.append(_chain_finding(link, expected))
        heads[link.space] = link.hash or ""
        try:
            data = codec.loads(link.data)
        except (ValueError, TypeError, RecursionError) as exc:
            data, why = None, f"its data is not valid JSON ({exc})"
        else:
            why = "" if isinstance(data, dict) else "its data is not a JSON object"
        if why:
            findings.append(_event_finding(link, why))
            continue
        event = Event(
            link.seq, link.id, link.space, link.task_id, link.correlation_id, link.type,
            data, link.created_at, link.hash,
        )  # fmt: skip
        if careful:
            scratch.execute("SAVEPOINT event")
        try:
            projection.apply(scratch, event)  # type: ignore[arg-type]
        except Exception as exc:
            if not careful:
                scratch.execute("ROLLBACK")
                raise _Unreplayable from exc
            scratch.execute("ROLLBACK TO event")
            findings.append(_event_finding(link, f"it cannot be replayed ({_short(exc)})"))
        if careful:
            scratch.execute("RELEASE event")
    scratch.execute("COMMIT")
    return count, findings, heads


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc) else ''}"


def _compare(
    conn: pg_adapter.Connection,
    scratch: pg_adapter.Connection,
    events: int,
    spaces: list[str],
    findings: list[Difference],
) -> VerifyReport:
    """Compare each table space by space (ids are unique within a space), rows by id."""
    differences = findings[:MAX_DIFFERENCES]
    truncated = len(findings) > MAX_DIFFERENCES
    counts: dict[str, int] = dict.fromkeys(PROJECTION_TABLES, 0)
    for table in PROJECTION_TABLES:
        names = [r["name"] for r in conn.execute(f"PRAGMA table_info({table})").fetchall()]
        columns = ", ".join(n for n in names if n not in ASSIGNED.get(table, ()))
        select = f"SELECT {columns} FROM {table} WHERE space = ? ORDER BY id"
        for space in spaces:
            stored, rebuilt = conn.execute(select, (space,)), scratch.execute(select, (space,))
            for found in _diff(table, stored, rebuilt, counts):
                if len(differences) >= MAX_DIFFERENCES:
                    truncated = True
                    break
                differences.append(found)
    return VerifyReport(events, counts, tuple(differences), truncated)


def _diff(
    table: str, stored: pg_adapter.Cursor, rebuilt: pg_adapter.Cursor, counts: dict[str, int]
) -> Iterator[Difference]:
    return _diff_rows(table, stored, rebuilt, counts)  # type: ignore[arg-type]
