"""Search latency on SQLite (FTS5) and PostgreSQL (tsvector, store/postgres/search.py) over the
same records: the design's conversation workload, turns searched by recall's query.

Prints markdown tables; it is a script, not a timed test:

    python benchmarks/bench_pg_search.py                    # 20,000 turns, 30 runs a query
    python benchmarks/bench_pg_search.py --turns 2000 --runs 5   # smoke run
    python benchmarks/bench_pg_search.py --pg postgresql://postgres@127.0.0.1/clew_pgsearch

The turns are appended through the facade to a SQLite store, then copied as they are into
a PostgreSQL store made by its migrations in a schema of its own (dropped at the end),
where the database indexes them as it writes them. Each query is parsed once
(search.parse) and run by both stores' `search_turns` (all sessions, best 10; on
PostgreSQL through the pool, in a transaction, as every read is); the table gives p50/p95
in milliseconds and how many of the best 10 both backends share. Needs psycopg.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg

import clew
from clew.core import query as search
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
    ("path of common pieces", "src/auth.py"),
)


def copy(path: Path, conn: psycopg.Connection[Any]) -> float:
    """Copy sessions and turns into the PostgreSQL store; seconds the turns took (each row's
    search vector is made as it is written)."""
    source = sqlite3.connect(path)
    took = 0.0
    for name in ("sessions", "turns"):
        names = [c[1] for c in source.execute(f"PRAGMA table_info({name})")]
        started = time.perf_counter()
        with conn.cursor().copy(f"COPY {name} ({', '.join(names)}) FROM STDIN") as out:
            for row in source.execute(f"SELECT {', '.join(names)} FROM {name}"):
                out.write_row(row)
        took = time.perf_counter() - started
    conn.execute("ANALYZE turns")
    source.close()
    return took


def _one_statement(store: Any) -> None:
    with store.transaction():
        store._rows("SELECT 1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    admin = psycopg.connect(args.pg, autocommit=True)
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin.execute(f"CREATE SCHEMA {schema}")
    url = f"{args.pg}{'&' if '?' in args.pg else '?'}options=-csearch_path%3D{schema}"
    try:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "clew.db"
            started = time.perf_counter()
            with clew.open(path) as mem:
                session = mem.start_session(workspace="/bench")
                for message in messages(args.turns):
                    mem.append_turn(session.id, message)
                space = mem.space
            loaded = time.perf_counter() - started
            clew.open(url, space=space).close()  # the migrations
            with psycopg.connect(url, autocommit=True) as conn:
                indexed = copy(path, conn)
                version = conn.execute("SHOW server_version").fetchone()
            header(
                "Search latency: SQLite FTS5 and PostgreSQL tsvector",
                ("turns", f"{args.turns:,}"),
                ("postgresql", version[0] if version else "?"),
                ("appends through the facade (SQLite)", f"{loaded:.1f} s"),
                ("COPY of the turns into PostgreSQL, indexed", f"{indexed:.1f} s"),
            )
            with clew.open(path) as mem, clew.open(url, space=space) as team:
                lite, pg = mem._store, team._store
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
                # The floor: one statement in one read transaction, what any read pays.
                lite_ms = timed_ms(lambda: lite._rows("SELECT 1"), args.runs)
                pg_ms = timed_ms(lambda: _one_statement(pg), args.runs)
                rows.append([
                    "floor: SELECT 1 in a read", "", "", "",
                    f"{pct(lite_ms, 50):.2f}", f"{pct(lite_ms, 95):.2f}",
                    f"{pct(pg_ms, 50):.2f}", f"{pct(pg_ms, 95):.2f}",
                ])  # fmt: skip
            headers = ["query", "text", "hits", "same best 10", "SQLite p50", "p95",
                       "PostgreSQL p50", "p95"]  # fmt: skip
            print(table(headers, rows))
    finally:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()


if __name__ == "__main__":
    main()
