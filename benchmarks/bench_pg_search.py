"""Search latency on SQLite (FTS5) and PostgreSQL (tsvector, store/pg_search.py) over the
same records: the design's conversation workload, turns searched by recall's query.

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_pg_search.py                    # 20,000 turns, 30 runs a query
    python benchmarks/bench_pg_search.py --turns 2000 --runs 5   # smoke run
    python benchmarks/bench_pg_search.py --pg postgresql://postgres@127.0.0.1/clew_pgsearch

The turns are appended through the facade to a SQLite store, then copied as they are into
a schema of their own on PostgreSQL, where pg_search adds its index (the schema is dropped
at the end). Each query is parsed once (search.parse) and run by both backends'
`search_turns` (all sessions, best 10); the table gives p50/p95 in milliseconds and the
number of hits each backend ranks first in common. Needs psycopg.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

import psycopg

import clew
from clew import search
from clew.models import Entry
from clew.store import pg_search
from common import header, pct, table, timed_ms
from workload import PHRASE, RARE, TRACEBACK, messages

QUERIES = (
    ("rare identifier (3 turns)", RARE),
    ("rare + common word", f"{RARE} quota"),
    ("traceback name (~0.5%)", TRACEBACK),
    ("common phrase (~1%)", f'"{PHRASE}"'),
    ("common word", "test"),
    ("two common words", "cache retry"),
    ("prefix", "migrat*"),
    ("exclusion", "deploy -cache"),
    ("path", "src/auth.py"),
)


class Reader(pg_search.PostgresSearch):
    """The search mixin over one psycopg connection (`?` parameters, rows by name)."""

    def __init__(self, conn: psycopg.Connection[Any], space: str) -> None:
        self.conn = conn
        self.space = space

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        cursor = self.conn.execute(sql.replace("%", "%%").replace("?", "%s"), list(params))
        names = [d.name for d in cursor.description or ()]
        return [_Row(r, names) for r in cursor.fetchall()]

    def transaction(self, *, write: bool = False) -> AbstractContextManager[None]:
        return nullcontext()

    def _with_sources(self, entries: list[Entry]) -> list[Entry]:
        return entries


class _Row(tuple[Any, ...]):
    names: list[str]

    def __new__(cls, values: Sequence[Any], names: list[str]) -> _Row:
        row = super().__new__(cls, values)
        row.names = names
        return row

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        return super().__getitem__(self.names.index(key) if isinstance(key, str) else key)


def copy(path: Path, conn: psycopg.Connection[Any]) -> float:
    """Copy turns and sessions into PostgreSQL and index them; seconds the index took."""
    source = sqlite3.connect(path)
    types = {"INTEGER": "bigint", "REAL": "double precision"}
    for name in ("sessions", "turns"):
        info = source.execute(f"PRAGMA table_info({name})").fetchall()
        columns = [(c[1], types.get(c[2].upper(), "text")) for c in info]
        conn.execute(f"CREATE TABLE {name} ({', '.join(f'{n} {t}' for n, t in columns)})")
        with conn.cursor().copy(f"COPY {name} FROM STDIN") as out:
            for row in source.execute(f"SELECT {', '.join(n for n, _ in columns)} FROM {name}"):
                out.write_row(row)
    started = time.perf_counter()
    for statement in pg_search.TURNS_INDEX:
        conn.execute(statement)
    conn.execute("CREATE INDEX turns_space_seq ON turns (space, seq)")
    conn.execute("ANALYZE turns")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    conn = psycopg.connect(args.pg, autocommit=True)
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    conn.execute(f"CREATE SCHEMA {schema}")
    conn.execute(f"SET search_path = {schema}")
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "clew.db"
            started = time.perf_counter()
            with clew.open(path) as mem:
                session = mem.start_session(workspace="/bench")
                for message in messages(args.turns):
                    mem.append_turn(session.id, message)
            loaded = time.perf_counter() - started
            for statement in pg_search.FUNCTIONS:
                conn.execute(statement)
            indexed = copy(path, conn)
            version = conn.execute("SHOW server_version").fetchone()
            header(
                "Search latency: SQLite FTS5 and PostgreSQL tsvector",
                ("turns", f"{args.turns:,}"),
                ("postgresql", version[0] if version else "?"),
                ("load through the facade (SQLite)", f"{loaded:.1f} s"),
                ("index build on PostgreSQL", f"{indexed:.1f} s"),
            )
            with clew.open(path) as mem:
                lite = mem._store
                pg = Reader(conn, mem.space)
                rows = []
                for label, text in QUERIES:
                    query = search.parse(text)
                    if not lite.search_turns(None, query, limit=10):
                        query = search.parse(text, any_terms=True)
                    a = lite.search_turns(None, query, limit=10)
                    b = pg.search_turns(None, query, limit=10)
                    same = len({t.id for t, _, _ in a} & {t.id for t, _, _ in b})
                    lite_ms = timed_ms(lambda q=query: lite.search_turns(None, q, limit=10),
                                       args.runs)  # fmt: skip
                    pg_ms = timed_ms(lambda q=query: pg.search_turns(None, q, limit=10),
                                     args.runs)  # fmt: skip
                    rows.append([
                        label, f"`{text}`", len(a), f"{same}/{len(a)}",
                        f"{pct(lite_ms, 50):.2f}", f"{pct(lite_ms, 95):.2f}",
                        f"{pct(pg_ms, 50):.2f}", f"{pct(pg_ms, 95):.2f}",
                    ])  # fmt: skip
            headers = ["query", "text", "hits", "same top 10", "SQLite p50", "p95",
                       "PostgreSQL p50", "p95"]  # fmt: skip
            print(table(headers, rows))
    finally:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")
        conn.close()


if __name__ == "__main__":
    main()
