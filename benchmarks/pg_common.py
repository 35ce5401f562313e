"""What the PostgreSQL benchmarks share: their own database, server facts, and counters of
statements and of the server's CPU time.

The benchmarks connect as an ordinary role (`clew_bench`, not a superuser) that owns their
databases (`clew_bench`, `clew_bench_writers`), so row-level security is in force as on a
real team store (the tables FORCE it, so even their owner is held to it) and a run never
collides with the test suites using the database `test` at the same time.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

ADMIN = os.environ.get("CLEW_BENCH_ADMIN", "postgresql://root@127.0.0.1:5432/postgres")
ROLE = "clew_bench"
DATABASE = "clew_bench"
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def fresh_database(name: str = DATABASE, admin: str = ADMIN) -> str:
    """Drop and create a benchmark database, owned by the ordinary role; return its URL."""
    with psycopg.connect(admin, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone()
        if found is None:
            conn.execute(f"CREATE ROLE {ROLE} LOGIN")
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name} OWNER {ROLE}")
        host, port = conn.info.host, conn.info.port
    return f"postgresql://{ROLE}@{host}:{port}/{name}"


def analyze(url: str) -> None:
    """Gather the planner's statistics of the benchmark's tables, as autovacuum does on a
    server left at its defaults. This machine's server runs with autovacuum off (for its
    test suites): without statistics a table filled since its creation is planned as if
    empty, and reading a space's newest event scans the whole space."""
    with psycopg.connect(url, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
        ).fetchall()
        for (name,) in tables:
            conn.execute(f'ANALYZE "{name}"')


def with_options(url: str, application: str, **settings: str) -> str:
    """`url` with an application_name (to find its server processes) and session settings."""
    query = [f"application_name={application}"]
    if settings:
        options = " ".join(f"-c {k}={v}" for k, v in settings.items())
        query.append("options=" + options.replace(" ", "%20").replace("=", "%3D"))
    return url + ("&" if "?" in url else "?") + "&".join(query)


def server_facts(url: str) -> list[tuple[str, object]]:
    """The server's version and the settings that decide what a commit costs."""
    with psycopg.connect(url, autocommit=True) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        rows = conn.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN ('synchronous_commit',"
            " 'fsync', 'wal_sync_method', 'shared_buffers', 'max_connections', 'autovacuum')"
            " ORDER BY name"
        ).fetchall()
        superuser = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        is_super = superuser.fetchone()
    facts: list[tuple[str, object]] = [("postgresql", version[0] if version else "?")]
    facts += [(f"pg {name}", setting) for name, setting in rows]
    facts.append(("pg role", f"{ROLE} (superuser: {bool(is_super and is_super[0])})"))
    return facts


class ServerCpu:
    """CPU time of the server processes serving one application_name, read from
    /proc/<pid>/stat (utime + stime, in clock ticks) of the backends pg_stat_activity lists:
    the server runs on this machine. Ticks are coarse (10 ms), so only totals over many calls
    mean anything: read it before and after each call and sum the differences."""

    def __init__(self, url: str, application: str) -> None:
        self._conn = psycopg.connect(url, autocommit=True)
        self._application = application
        self._pids: list[int] = []

    def refresh(self) -> None:
        """Learn the backends' pids again (a pool may have opened another connection)."""
        rows = self._conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s",
            (self._application,),
        ).fetchall()
        self._pids = [int(r[0]) for r in rows]

    def ticks(self) -> int:
        total = 0
        for pid in self._pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue  # a backend that went away (or a server elsewhere): not counted
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
        return total

    def close(self) -> None:
        self._conn.close()


class Statements:
    """Counts what a psycopg client sends: round trips (execute calls) and statements (a
    parameterless execute may carry several, `;`-separated, in one round trip, as the store's
    BEGIN does). It wraps psycopg's Cursor methods for the benchmark only."""

    def __init__(self) -> None:
        self.round_trips = 0
        self.statements = 0
        self.counting = False

    @contextmanager
    def installed(self) -> Iterator[Statements]:
        cursor: Any = psycopg.Cursor
        execute, executemany = cursor.execute, cursor.executemany
        counter = self

        def counted_execute(self: Any, query: Any, params: Any = None, **kw: Any) -> Any:
            if counter.counting:
                counter.round_trips += 1
                counter.statements += _parts(query) if params is None else 1
            return execute(self, query, params, **kw)

        def counted_many(self: Any, query: Any, params_seq: Any, **kw: Any) -> Any:
            rows = list(params_seq)
            if counter.counting:
                counter.round_trips += 1  # psycopg pipelines the rows
                counter.statements += len(rows)
            return executemany(self, query, rows, **kw)

        cursor.execute, cursor.executemany = counted_execute, counted_many
        try:
            yield self
        finally:
            cursor.execute, cursor.executemany = execute, executemany


def _parts(query: Any) -> int:
    text = query.decode() if isinstance(query, bytes) else str(query)
    return sum(1 for part in text.split(";") if part.strip())
