"""What ClewStore's operations cost, next to langgraph-checkpoint-sqlite's SqliteStore in the
same run.

Prints a markdown table; a script, not a timed test:

    python benchmarks/bench_langgraph_store.py           # 5,000 items
    python benchmarks/bench_langgraph_store.py --quick   # 500 items

Both stores get the same items (20 users' memories: a sentence of the benchmark workload
each), each put its own transaction, in alternating order. Then, alternating samples: a get
by key, a page of a user's items with no query, a page with a filter, and a query. clew ranks
a query with its full-text search; SqliteStore, configured with no embedding model as here,
does not rank: it answers the namespace and filter alone, so its "query" row is that.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))

from langgraph.store.sqlite import SqliteStore

import clew
from clew.integrations.langgraph import ClewStore
from common import header, table
from workload import messages


def _sample(stores: dict[str, Any], op: Callable[[Any, int], object], runs: int) -> list[str]:
    walls: dict[str, list[float]] = {n: [] for n in stores}
    cpus: dict[str, list[float]] = {n: [] for n in stores}
    for i in range(runs):
        order = list(stores.items())
        for name, store in order if i % 2 else order[::-1]:
            wall, cpu = time.perf_counter(), time.process_time()
            op(store, i)
            walls[name].append(1000 * (time.perf_counter() - wall))
            cpus[name].append(1000 * (time.process_time() - cpu))
    return [f"{statistics.median(walls[n]):.2f} / {statistics.median(cpus[n]):.2f}" for n in stores]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run: 500 items")
    args = parser.parse_args()
    total = 500 if args.quick else 5000
    texts = [m["content"][:300] for m in messages(total) if m["role"] != "tool"]
    texts = (texts * (total // max(len(texts), 1) + 1))[:total]
    header(
        "LangGraph stores: ClewStore beside SqliteStore",
        ("items", total),
        ("comparator", "langgraph-checkpoint-sqlite SqliteStore (no embeddings), same run"),
    )
    with tempfile.TemporaryDirectory() as folder:
        memory = clew.open(Path(folder) / "clew.db")
        conn = sqlite3.connect(Path(folder) / "lg.db", check_same_thread=False)
        conn.isolation_level = None  # SqliteStore commits itself; autocommit like clew
        theirs = SqliteStore(conn)
        theirs.setup()
        stores: dict[str, Any] = {"clew": ClewStore(memory), "SqliteStore": theirs}

        def put(store: Any, i: int) -> None:
            value = {"text": texts[i], "n": i % 10}
            store.put(("users", f"u{i % 20}", "memories"), f"m{i}", value)

        rows = [["put (each its own transaction)", *_sample(stores, put, total)]]
        rows.append(
            ["get by key", *_sample(stores, lambda s, i: s.get(_ns(i), f"m{i * 7 % total}"), 200)]
        )
        rows.append(["a user's newest 10", *_sample(stores, lambda s, i: s.search(_ns(i)), 100)])
        rows.append(
            [
                "10 with a filter",
                *_sample(
                    stores, lambda s, i: s.search(_ns(i), filter={"n": i % 10}, limit=10), 100
                ),
            ]
        )
        word = texts[3].split()[2]
        rows.append(
            [
                f"query {word!r}, 10",
                *_sample(stores, lambda s, i: s.search(("users",), query=word, limit=10), 100),
            ]
        )
        print(table(["operation (ms, median wall / cpu)", "clew", "SqliteStore"], rows))
        memory.close()
        conn.close()


def _ns(i: int) -> tuple[str, ...]:
    return ("users", f"u{i % 20}", "memories")


if __name__ == "__main__":
    main()
