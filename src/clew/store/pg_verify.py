"""`verify` on PostgreSQL: walk each space's hash chain, replay the journal into temporary
tables made by the same migrations (on a connection of its own, so they vanish with it) and
compare every projection row, as the SQLite store does with a scratch file.

The temporary tables need no privilege beyond TEMP (granted to every role by default), and
carry no row-level security: the replay writes only what the journal of the chosen space (or
of every space) says. The replay's transaction has only the temporary schema in its search
path, so it can never write a real table, even through a pooler that changes sessions.
"""

from __future__ import annotations

import atexit
import re
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from clew.models import Difference, Event, VerifyReport
from clew.store import chain, codec, pg_adapter, pg_migrations, projection
from clew.store.migrations import PROJECTION_TABLES
from clew.store.sqlite_journal import EVENT_COLUMNS
from clew.store.sqlite_verify import (
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
# Row-level security and the journal's guard: the temporary copies need neither.
_SCRATCH_SKIPS = re.compile(
    r"\s*(ALTER TABLE \w+ (ENABLE|FORCE) ROW LEVEL|CREATE POLICY|CREATE TRIGGER)"
)
# A session whose temporary tables are made, kept for the next verify of the same database:
# making them costs more than most replays. One per database, taken while in use.
_SPARE: dict[str, Any] = {}
_SPARE_LOCK = threading.Lock()


@atexit.register
def _close_spares() -> None:
    with _SPARE_LOCK:
        for raw in _SPARE.values():
            raw.close()
        _SPARE.clear()


def scratch_schema(raw: Any) -> None:
    """Make this session's temporary copies of every clew table (no policies, no guard)."""
    from clew.store.postgres import _collated

    for migration in pg_migrations.MIGRATIONS:
        for step in migration.statements:
            if not isinstance(step, str) or _SCRATCH_SKIPS.match(step):
                continue
            sql = _collated(step).replace("CREATE TABLE ", "CREATE TEMP TABLE ", 1)
            raw.execute(sql.encode())


def _begin_scratch(raw: Any) -> None:
    """Start the replay's transaction with only the temporary schema in the search path, so
    no statement of the replay can reach a real table; make the temporary tables if this
    session has none (a new session, or a pooler that handed over another), else empty them."""
    raw.execute("BEGIN")
    raw.execute("SET LOCAL search_path = pg_temp")
    if raw.execute("SELECT to_regclass('pg_temp.tasks')").fetchone()[0] is None:
        scratch_schema(raw)
    else:
        raw.execute("TRUNCATE " + ", ".join(f"pg_temp.{t}" for t in PROJECTION_TABLES))


def verify(store: PostgresStore, *, all_spaces: bool = False) -> VerifyReport:
    """Check the chain, replay the journal into temporary tables and compare every row."""
    psycopg = store._psycopg
    scope = None if all_spaces else store.space
    with _SPARE_LOCK:
        raw = _SPARE.pop(store.url, None)
    if raw is not None:
        try:
            _begin_scratch(raw)
        except psycopg.Error:  # the server dropped it since: take a new one
            raw.close()
            raw = None
    if raw is None:
        raw = psycopg.connect(store.url, autocommit=True)
    try:
        if raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
            _begin_scratch(raw)
        scratch = pg_adapter.Connection(raw)
        with store._reading_all() if all_spaces else store.transaction():
            conn = store._connection()
            events = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events"
                + ("" if scope is None else " WHERE space = ?")
                + " ORDER BY seq",
                () if scope is None else (scope,),
            ).fetchall()
            scratch.execute("SAVEPOINT replay")
            try:
                count, findings, heads = _replay(scratch, events, careful=False)
            except _Unreplayable:
                scratch.execute("ROLLBACK TO replay")
                count, findings, heads = _replay(scratch, events, careful=True)
            spaces = (
                [scope]
                if scope is not None
                else sorted({r[2] for r in events})  # every space that has a journal
            )
            report = _compare(conn, scratch, count, spaces, findings)
        raw.execute("COMMIT")  # keeps the tables made; their rows go with the next TRUNCATE
    except BaseException:
        raw.close()
        raise
    with _SPARE_LOCK:
        spare = _SPARE.setdefault(store.url, raw)
    if spare is not raw:
        raw.close()
    return report._replace(heads=heads)


class _Unreplayable(Exception):
    """An event could not be applied in a replay without savepoints."""


def _replay(
    scratch: pg_adapter.Connection, rows: list[Any], *, careful: bool
) -> tuple[int, list[Difference], dict[str, str]]:
    """Walk the journal (in seq order): check each space's chain up to its first break and
    apply each event to the temporary tables. An event that cannot be read or applied is a
    finding; `careful` wraps each event in a savepoint to undo what it half did, without it
    such an event raises _Unreplayable (and the caller replays carefully)."""
    findings: list[Difference] = []
    heads: dict[str, str] = {}
    count = 0
    space = None
    for link, expected in chain.walk(chain.Link(*row) for row in rows):
        count += 1
        if link.space != space:  # the projections' changes are held to this (pg_adapter)
            scratch.execute("SELECT set_config('clew.space', ?, true)", (link.space,))
            space = link.space
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
                raise _Unreplayable from exc
            scratch.execute("ROLLBACK TO event")
            findings.append(_event_finding(link, f"it cannot be replayed ({_short(exc)})"))
        if careful:
            scratch.execute("RELEASE event")
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
